import Glibc
import Platform

/// Small file helpers on plain POSIX calls, so the exporter needs no Foundation.
enum Files {
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    /// The whole file, refusing anything larger than `limit` bytes.
    static func read(_ path: String, limit: Int = 16 << 20) throws(ReadError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ReadError(description: errnoText(errno)) }
        defer { close(fd) }
        return try read(fd: fd, limit: limit)
    }

    /// The rest of an open file, refusing anything larger than `limit` bytes.
    static func read(fd: Int32, limit: Int) throws(ReadError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadError(description: errnoText(errno))
            }
            if count == 0 { return out }
            out.append(contentsOf: chunk[0..<count])
            if out.count > limit { throw ReadError(description: "larger than \(limit) bytes") }
        }
    }

    /// True when users other than the owner and group may read the file.
    static func isWorldReadable(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_mode & S_IROTH != 0
    }
}
