import Glibc
import Platform

/// SplitMix64 (Steele, Lea and Flood), seeded, so random tests replay exactly.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The whole file; throws when it cannot be opened.
public func readFile(_ path: String) throws -> [UInt8] {
    guard let file = fopen(path, "rb") else {
        throw TestFailure("cannot open \(path): \(errnoText(errno))")
    }
    defer { fclose(file) }
    var out: [UInt8] = []
    while true {
        // Straight into an array's storage: a byte-wise copy is slow in debug builds.
        let chunk = [UInt8](unsafeUninitializedCapacity: 65536) { buffer, count in
            count = fread(buffer.baseAddress, 1, buffer.count, file)
        }
        if chunk.isEmpty { break }
        out += chunk
    }
    return out
}

/// Replaces the file's contents (creating it with `mode`); throws when it cannot be written.
public func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw TestFailure("cannot write \(path): \(errnoText(errno))") }
    defer { close(fd) }
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { throw TestFailure("cannot write \(path): \(errnoText(errno))") }
        written += count
    }
}

public func writeFile(_ path: String, _ text: String, mode: mode_t = 0o600) throws {
    try writeFile(path, Array(text.utf8), mode: mode)
}

/// A fresh file under /tmp holding `text`; the caller unlinks it.
public func temporaryFile(_ text: String = "", suffix: String = "", mode: mode_t = 0o600) -> String {
    var template = Array("/tmp/owe-test-XXXXXX\(suffix)".utf8CString)
    let fd = mkstemps(&template, Int32(suffix.utf8.count))
    precondition(fd >= 0, "mkstemps: \(errnoText(errno))")
    close(fd)
    let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // The file exists and is ours: a failure to write it is a broken machine, not a test outcome.
    try! writeFile(path, text, mode: mode)
    chmod(path, mode)
    return path
}

/// `Tests/`, found from the path of the source file that asks.
public func testsDirectory(_ file: String = #filePath) -> String {
    var parts = file.split(separator: "/", omittingEmptySubsequences: false)
    while let last = parts.last, last != "Tests" { parts.removeLast() }
    return parts.joined(separator: "/")
}

/// The repository's top (the folder that holds `Tests/`), wherever the asking file sits under `Tests/`.
public func repositoryDirectory(_ file: String = #filePath) -> String {
    String(testsDirectory(file).dropLast("/Tests".count))
}

/// The deploy reference as one text: deploy/README.md (the index) and every deploy/docs/*.md after it,
/// in name order, so a check over "the reference" covers a topic file added later.
public func deployReference(_ file: String = #filePath) throws -> String {
    let deploy = testsDirectory(file) + "/../deploy"
    var names: [String] = []
    if let dir = opendir(deploy + "/docs") {
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".md") { names.append(name) }
        }
    }
    var text = String(decoding: try readFile(deploy + "/README.md"), as: UTF8.self)
    for name in names.sorted() {
        text += "\n" + String(decoding: try readFile(deploy + "/docs/" + name), as: UTF8.self)
    }
    return text
}

extension StringProtocol {
    /// True when one whole line is `line`: `} 2` does not match `} 20`.
    public func hasLine(_ line: String) -> Bool {
        split(separator: "\n").contains { $0 == line }
    }

    /// The value of the sample `series` (name and labels exactly as rendered), nil when absent.
    public func sample(_ series: String) -> String? {
        let prefix = series + " "
        return split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }
}

extension Sequence where Element == [UInt8] {
    /// The pieces one after another, as one array. `Array(pieces.joined())` walks a FlattenSequence
    /// byte by byte through generic metadata in debug builds: seconds of CPU per test on large
    /// expositions.
    public var concatenated: [UInt8] {
        var whole: [UInt8] = []
        for piece in self { whole += piece }
        return whole
    }
}
