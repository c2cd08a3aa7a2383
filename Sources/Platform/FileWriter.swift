import Glibc

/// Every file the project writes is written here, whole or not at all: a temporary file of a random
/// name beside it, created with `O_CREAT|O_EXCL|O_NOFOLLOW` (nothing found there is opened, a link
/// planted there is never followed, so never truncates its target), synced, renamed over the name,
/// and the directory synced. A crash at any moment leaves the previous file or the new one.
public enum FileWriter {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// What may stand at the name before the write.
    public enum Existing: Sendable {
        /// Anything but a directory is replaced: the name is the program's own (the state file), and a
        /// FIFO or link planted there is healed by the next write.
        case replaced
        /// Only a regular file is replaced; anything else (a FIFO, a device, a link) is refused: the
        /// name was given by the user, and renaming over `/dev/null` replaces the device.
        case regularFileOnly
    }

    /// The file being written, for `replace`'s body: bytes at a place, or after the last.
    public struct Output: ~Copyable {
        fileprivate let fd: Int32
        fileprivate let temporary: String
        fileprivate var failure: Failure?
        /// Where `append` writes next.
        public var end = 0

        fileprivate init(fd: Int32, temporary: String) {
            self.fd = fd
            self.temporary = temporary
        }

        public mutating func write(_ bytes: [UInt8], at start: Int) {
            var written = 0
            while failure == nil && written < bytes.count {
                let count = bytes.withUnsafeBytes {
                    pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(start + written))
                }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    failure = FileWriter.failure("cannot write \(temporary)")
                    return
                }
                written += count
            }
        }

        public mutating func append(_ bytes: [UInt8]) {
            write(bytes, at: end)
            end += bytes.count
        }
    }

    /// Replaces the file at `path` with what `fill` writes. `mode` is the file's, whatever the umask:
    /// 0600 unless the file is meant to be read by others.
    public static func replace(
        _ path: String, mode: mode_t = 0o600, existing: Existing = .replaced, _ fill: (inout Output) -> Void
    ) throws(Failure) {
        if existing == .regularFileOnly { try checkReplaceable(path) }
        // A new name each time, made exclusively: a fixed name could be taken for good by a file
        // someone else planted in a shared (sticky) directory.
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<8 {
            temporary = temporaryPrefix(of: path) + String(UInt64.random(in: 0 ... .max), radix: 16)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        defer { close(fd) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        // The umask may have taken bits away, or a shared mode given some no one asked for.
        fchmod(fd, mode)
        var output = Output(fd: fd, temporary: temporary)
        fill(&output)
        if let failed = output.failure { throw failed }
        guard fsync(fd) == 0 else { throw failure("cannot sync \(temporary)") }
        // Checked again just before the rename: the first check was before the (perhaps long) writing.
        if existing == .regularFileOnly { try checkReplaceable(path) }
        guard rename(temporary, path) == 0 else { throw failure("cannot rename \(temporary) to \(path)") }
        renamed = true
        // The rename is durable only once the directory is.
        let directory = directory(of: path)
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure("cannot open \(directory)") }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure("cannot sync \(directory)") }
    }

    /// `bytes` as the whole file at `path`.
    public static func replace(
        _ path: String, with bytes: [UInt8], mode: mode_t = 0o600, existing: Existing = .replaced
    ) throws(Failure) {
        try replace(path, mode: mode, existing: existing) { $0.append(bytes) }
    }

    /// Refuses a name that holds anything but a regular file (looked at without following a link).
    public static func checkReplaceable(_ path: String) throws(Failure) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw failure("cannot look at \(path)")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Failure(
                description:
                    """
                    \(path) exists and is \(RegularFile.kind(info.st_mode)), not a regular file: it is not replaced; \
                    give the path of a regular file or of none
                    """
            )
        }
    }

    /// Temporary files a crashed write to `path` left: ours only (its prefix, our euid, regular files,
    /// looked at without following links), so nothing another user planted is touched or followed.
    public static func removeLeftovers(of path: String) {
        let directory = directory(of: path)
        // `.tmp` without the dash: the fixed name older versions used is a leftover too.
        let namePrefix =
            Array(path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).last ?? [])
            + Array(".tmp".utf8)
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { return }
        guard let stream = fdopendir(directoryFD) else {
            close(directoryFD)
            return
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name.starts(with: namePrefix) { names.append(String(decoding: name, as: UTF8.self)) }
        }
        for name in names {
            var info = stat()
            guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid()
            else { continue }
            unlinkat(directoryFD, name, 0)
        }
    }

    /// `FILE.tmp-` then random hex: the temporaries of `path`.
    public static func temporaryPrefix(of path: String) -> String { path + ".tmp-" }

    /// The directory a path's name is in ("." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    fileprivate static func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(errnoText(errno))")
    }
}
