import Glibc

/// Every file the exporter reads (config, key, web config, certificates, state) is opened here: without
/// blocking, then checked to be a regular file before a byte is read. A plain open() of a FIFO waits for a
/// writer, in a thread that then ignores SIGTERM; a device or socket can block any read.
public enum RegularFile {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        /// The errno of a failed open (ENOENT for a missing file); 0 when the file is there but not regular.
        public let code: Int32
    }

    /// An open descriptor (O_RDONLY|O_NONBLOCK|O_CLOEXEC) on a regular file, and its owner's uid; the caller
    /// closes it. `followLinks: false` adds O_NOFOLLOW (a symbolic link is then an ELOOP failure).
    public static func open(_ path: String, followLinks: Bool = true) throws(Failure) -> (fd: Int32, owner: uid_t) {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else {
            let code = errno
            throw Failure(description: errnoText(code), code: code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: errnoText(code), code: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Failure(
                description:
                    """
                    \(path) is not a regular file (it is \(kind(info.st_mode))): replace it with a regular file; the \
                    exporter never reads a FIFO, a device or a socket, which could block it
                    """,
                code: 0)
        }
        return (fd, info.st_uid)
    }

    /// The whole regular file at `path`, refusing anything larger than `limit` bytes (and a link,
    /// with `followLinks: false`).
    public static func read(_ path: String, limit: Int, followLinks: Bool = true) throws(Failure) -> [UInt8] {
        let (fd, _) = try open(path, followLinks: followLinks)
        defer { close(fd) }
        return try read(fd: fd, limit: limit)
    }

    /// The rest of an open file, refusing anything larger than `limit` bytes.
    public static func read(fd: Int32, limit: Int) throws(Failure) -> [UInt8] {
        var out: [UInt8] = []
        try forEachChunk(fd: fd, limit: limit) { chunk in
            out.append(contentsOf: chunk)
            return true
        }
        return out
    }

    /// The rest of an open file a chunk at a time, for a reader that needs no more than a chunk in
    /// memory or stops early: until the end, until `body` returns false, or a failure past `limit` bytes.
    public static func forEachChunk(fd: Int32, limit: Int, _ body: (ArraySlice<UInt8>) -> Bool) throws(Failure) {
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                throw Failure(description: errnoText(code), code: code)
            }
            if count == 0 { return }
            total += count
            if total > limit { throw Failure(description: "larger than \(limit) bytes", code: EFBIG) }
            guard body(chunk[0..<count]) else { return }
        }
    }

    /// What a file of `mode` is, for a message that says why it is refused.
    public static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        default: "not a plain file"
        }
    }
}
