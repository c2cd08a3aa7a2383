import Glibc
import Platform

/// The state directory (`--storage.path`) is missing and cannot be made, or cannot be written.
public struct StateStorageError: Error, CustomStringConvertible {
    public let description: String
}

/// The state directory and its one file, on plain POSIX calls. A write replaces the file whole
/// (`FileWriter`: a random temporary made with `O_EXCL|O_NOFOLLOW`, fsync, rename, fsync of the
/// directory), so a crash at any moment leaves the previous file or the new one, never a mix.
///
/// Whoever else can write the directory can plant names in it: a link there is never followed, and
/// the state is read only from a regular file, opened without blocking (a FIFO there would hang startup).
struct StateStorage: Sendable {
    let directory: String
    var path: String { directory + "/" + Self.fileName }
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
                    description:
                        """
                        \(shown): cannot create the state directory: \(errnoText(errno)); create it (mode 0700, owned \
                        by the exporter's user) or choose another path
                        """
                )
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw StateStorageError(
                description: "\(shown) is not a directory: give a directory; the exporter keeps one file in it")
        }
        var warnings: [String] = []
        // The sticky bit only stops others removing or renaming our files: they can still plant names here.
        if stat(self.directory, &info) == 0, info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            let who = info.st_mode & S_IWOTH != 0 ? "every user" : "its group"
            let what =
                info.st_mode & S_ISVTX != 0
                ? "plant files in it" : "plant files in it and replace or remove the state file"
            warnings.append(
                """
                \(shown) is writable by \(who): they can \(what); chmod 700 it (or use a directory of the exporter's \
                own: systemd StateDirectory=)
                """
            )
        }
        self.warnings = warnings
        let probe = "\(self.directory)/.write-test-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateStorageError(
                description:
                    """
                    \(shown): the state directory is not writable: \(errnoText(errno)); give the exporter's user write \
                    access to it (systemd: StateDirectory=; Kubernetes: a volume with fsGroup)
                    """
            )
        }
        close(fd)
        unlink(probe)
        removeLeftovers()
    }

    /// Temporary files a crashed write left (`FileWriter.removeLeftovers`: ours only, nothing followed).
    private func removeLeftovers() { FileWriter.removeLeftovers(of: path) }

    /// The file's bytes; nil when there is none yet. Anything but a regular file (a link, a FIFO, a
    /// device) is an error, found without reading from it or waiting for it.
    func read() throws(Files.ReadError) -> Contents? {
        let fd: Int32
        let owner: uid_t
        do {
            (fd, owner) = try RegularFile.open(path, followLinks: false)
        } catch {
            if error.code == ENOENT { return nil }
            throw Files.ReadError(
                description: error.code == ELOOP
                    ? "it is a symbolic link; the state file must be a regular file"
                    : error.code == 0
                        ? "\(error.description); or remove it, the exporter writes a new one" : error.description)
        }
        defer { close(fd) }
        do {
            return Contents(bytes: try RegularFile.read(fd: fd, limit: 1 << 30), owner: owner)
        } catch {
            throw Files.ReadError(description: error.description)
        }
    }

    /// Replaces the file with what `body` streams: `body` gets a function to append bytes after a
    /// header of `headerCount` bytes and returns that header, written last at the start. Nothing
    /// becomes visible under the file's name before all of it is on disk.
    func write(headerCount: Int, _ body: (_ emit: ([UInt8]) -> Void) -> [UInt8]) throws(StateStorageError) {
        do {
            // The state is the owner's to read and write, and no one else's; a FIFO or link planted at
            // its name is replaced, not followed.
            try FileWriter.replace(path, mode: 0o600, existing: .replaced) { output in
                output.end = headerCount
                let header = body { output.append($0) }
                output.write(header, at: 0)
            }
        } catch {
            throw StateStorageError(description: error.description)
        }
    }
}
