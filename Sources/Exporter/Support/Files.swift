import Glibc
import Platform

/// Small file helpers on plain POSIX calls, so the exporter needs no Foundation.
enum Files {
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    /// The whole regular file (opened without blocking; a FIFO or device is an error), refusing anything
    /// larger than `limit` bytes.
    static func read(_ path: String, limit: Int = 16 << 20) throws(ReadError) -> [UInt8] {
        do {
            return try RegularFile.read(path, limit: limit)
        } catch {
            throw ReadError(description: error.description)
        }
    }

    /// True when users other than the owner and group may read the file.
    static func isWorldReadable(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_mode & S_IROTH != 0
    }
}
