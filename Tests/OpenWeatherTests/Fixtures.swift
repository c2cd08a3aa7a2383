/// The real response shapes, copied from shared/openweather/fixtures into Tests/Fixtures.
enum Fixtures {
    static let directory: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/") + "/Fixtures/openweather"
    }()

    static func bytes(_ name: String) -> [UInt8] {
        guard let file = fopen("\(directory)/\(name)", "rb") else { fatalError("missing fixture \(name)") }
        defer { fclose(file) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            out += buffer[0..<count]
        }
        return out
    }
}

import Glibc
