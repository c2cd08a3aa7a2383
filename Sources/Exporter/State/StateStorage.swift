import Glibc

/// The state directory (`--storage.path`) is missing and cannot be made, or cannot be written.
public struct StateStorageError: Error, CustomStringConvertible {
    public let description: String
}

/// The state directory and its one file, on plain POSIX calls. A write replaces the file whole
/// (temporary file, fsync, rename, fsync of the directory), so a crash at any moment leaves the
/// previous file or the new one, never a mix.
struct StateStorage: Sendable {
    let directory: String
    var path: String { directory + "/" + Self.fileName }
    private var temporaryPath: String { path + ".tmp" }

    static let fileName = "openweather-exporter.state"

    /// Makes the directory (0700) if it is missing and proves it writable.
    init(directory: String) throws(StateStorageError) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let shown = "--storage.path \"\(directory)\""
        var info = stat()
        if stat(self.directory, &info) != 0 {
            guard errno == ENOENT, mkdir(self.directory, 0o700) == 0 else {
                throw StateStorageError(
                    description: "\(shown): cannot create the state directory: \(Files.systemError()); create it (mode 0700, owned by the exporter's user) or choose another path")
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw StateStorageError(description: "\(shown) is not a directory: give a directory; the exporter keeps one file in it")
        }
        let probe = "\(self.directory)/.write-test-\(getpid())"
        let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateStorageError(
                description: "\(shown): the state directory is not writable: \(Files.systemError()); give the exporter's user write access to it (systemd: StateDirectory=; Kubernetes: a volume with fsGroup)")
        }
        close(fd)
        unlink(probe)
    }

    /// The file's bytes; nil when there is none yet.
    func read() throws(Files.ReadError) -> [UInt8]? {
        if access(path, F_OK) != 0 && errno == ENOENT { return nil }
        return try Files.read(path, limit: 1 << 30)
    }

    /// Replaces the file with what `body` streams: `body` gets a function to append bytes after a
    /// header of `headerCount` bytes and returns that header, written last at the start. Nothing
    /// becomes visible under the file's name before all of it is on disk.
    func write(headerCount: Int, _ body: (_ emit: ([UInt8]) -> Void) -> [UInt8]) throws(StateStorageError) {
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporaryPath)") }
        defer { close(fd) }
        // A leftover temporary file may have another mode; the state is the owner's alone.
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
        StateStorageError(description: "\(what): \(Files.systemError())")
    }
}
