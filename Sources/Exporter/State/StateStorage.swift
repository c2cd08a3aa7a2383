import Glibc
import Platform

/// The state directory (`--storage.path`) is missing and cannot be made, or cannot be written.
public struct StateStorageError: Error, CustomStringConvertible {
    public let description: String
}

/// The state directory and its one file, on plain POSIX calls. A write replaces the file whole
/// (temporary file, fsync, rename, fsync of the directory), so a crash at any moment leaves the
/// previous file or the new one, never a mix.
///
/// Whoever else can write the directory can plant names in it: every file is created with
/// `O_EXCL|O_NOFOLLOW` (a link there is never followed, so never truncates its target), and the
/// state is read only from a regular file, opened without blocking (a FIFO there would hang startup).
struct StateStorage: Sendable {
    let directory: String
    var path: String { directory + "/" + Self.fileName }
    private var temporaryPath: String { path + ".tmp" }
    /// What is unsafe about the directory, for the log: it works, but others can meddle with it.
    let warnings: [String]

    static let fileName = "openweather-exporter.state"

    /// The file's bytes, and its owner's uid.
    struct Contents {
        var bytes: [UInt8]
        var owner: uid_t
    }

    /// Makes the directory (0700) if it is missing and proves it writable.
    init(directory: String) throws(StateStorageError) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let shown = "--storage.path \"\(directory)\""
        var info = stat()
        if stat(self.directory, &info) != 0 {
            guard errno == ENOENT, mkdir(self.directory, 0o700) == 0 else {
                throw StateStorageError(
                    description: "\(shown): cannot create the state directory: \(errnoText(errno)); create it (mode 0700, owned by the exporter's user) or choose another path")
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw StateStorageError(description: "\(shown) is not a directory: give a directory; the exporter keeps one file in it")
        }
        var warnings: [String] = []
        if stat(self.directory, &info) == 0, info.st_mode & (S_IWGRP | S_IWOTH) != 0, info.st_mode & S_ISVTX == 0 {
            warnings.append(
                "\(shown) is writable by \(info.st_mode & S_IWOTH != 0 ? "every user" : "its group"): they can replace or remove the state file; chmod 700 it (or use a directory of the exporter's own: systemd StateDirectory=)")
        }
        self.warnings = warnings
        let probe = "\(self.directory)/.write-test-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateStorageError(
                description: "\(shown): the state directory is not writable: \(errnoText(errno)); give the exporter's user write access to it (systemd: StateDirectory=; Kubernetes: a volume with fsGroup)")
        }
        close(fd)
        unlink(probe)
    }

    /// The file's bytes; nil when there is none yet. Anything but a regular file (a link, a FIFO, a
    /// device) is an error, found without reading from it or waiting for it.
    func read() throws(Files.ReadError) -> Contents? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Files.ReadError(description: errno == ELOOP ? "it is a symbolic link; the state file must be a regular file" : errnoText(errno))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Files.ReadError(description: errnoText(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            let kind = switch info.st_mode & S_IFMT {
            case S_IFIFO: "a FIFO"
            case S_IFDIR: "a directory"
            case S_IFSOCK: "a socket"
            case S_IFCHR, S_IFBLK: "a device"
            default: "not a plain file"
            }
            throw Files.ReadError(description: "it is \(kind), not a regular file: remove it; the exporter writes a new one")
        }
        return Contents(bytes: try Files.read(fd: fd, limit: 1 << 30), owner: info.st_uid)
    }

    /// Replaces the file with what `body` streams: `body` gets a function to append bytes after a
    /// header of `headerCount` bytes and returns that header, written last at the start. Nothing
    /// becomes visible under the file's name before all of it is on disk.
    func write(headerCount: Int, _ body: (_ emit: ([UInt8]) -> Void) -> [UInt8]) throws(StateStorageError) {
        // Made afresh, never opened as found: what is there is a crashed write's leftover, or a link
        // planted to have us overwrite its target. Unlinking removes the link, not its target.
        var fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 && errno == EEXIST && unlink(temporaryPath) == 0 {
            fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw failure("cannot create \(temporaryPath)") }
        defer { close(fd) }
        // The umask may have taken bits away; the state is the owner's to read and write, and no one else's.
        fchmod(fd, 0o600)
        var offset = headerCount
        var failed: StateStorageError?
        func put(_ bytes: [UInt8], at start: Int) {
            var written = 0
            while failed == nil && written < bytes.count {
                let count = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(start + written)) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    failed = failure("cannot write \(temporaryPath)")
                    return
                }
                written += count
            }
        }
        let header = body { bytes in
            put(bytes, at: offset)
            offset += bytes.count
        }
        put(header, at: 0)
        if let failed { throw failed }
        guard fsync(fd) == 0 else { throw failure("cannot sync \(temporaryPath)") }
        guard rename(temporaryPath, path) == 0 else { throw failure("cannot rename \(temporaryPath) to \(path)") }
        // The rename is durable only once the directory is.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw failure("cannot open \(directory)") }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw failure("cannot sync \(directory)") }
    }

    private func failure(_ what: String) -> StateStorageError {
        StateStorageError(description: "\(what): \(errnoText(errno))")
    }
}
