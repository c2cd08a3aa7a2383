import Glibc

/// A small, seeded generator, so random tests replay exactly.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// SplitMix64.
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
    guard let file = fopen(path, "rb") else { throw LoopbackHTTP.Failure(description: "cannot open \(path)") }
    defer { fclose(file) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        out += buffer[0..<count]
    }
    return out
}

/// `Tests/`, found from the path of the source file that asks.
public func testsDirectory(_ file: String = #filePath) -> String {
    var parts = file.split(separator: "/", omittingEmptySubsequences: false)
    while let last = parts.last, last != "Tests" { parts.removeLast() }
    return parts.joined(separator: "/")
}
