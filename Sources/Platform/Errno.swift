import Glibc

/// The C library's text for an error number ("No such file or directory"), as glibc words it.
public func errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}
