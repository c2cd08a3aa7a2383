import Glibc
import Platform

/// The day's request counts every process using one state directory (`--storage.path`) shares: the
/// exporter and any backfill run beside it or after it. Each decides on room and writes what it holds
/// (sent, and room held for what it is about to send) within one exclusive `flock` of the file, so
/// the day's allowance is a ceiling for all of them together, whichever runs when.
///
/// The file is the lock, so it is written in place (a rename would hand the next process another
/// inode, unlocked). It is a state file holding only the day (`StateFile`), a few hundred bytes,
/// and not synced: the state file keeps the counts across a crash, and a torn one reads as unknown.
///
/// Each process's day is its own clock's, advanced under the lock (`DailyBudget.absorb`): a file of an
/// earlier day is over, and one of a later day, which no process on the same clock writes, is not taken
/// either; nor is one too large or naming more sources than a day counts. What the process sent today
/// stays counted, and the day it writes back replaces the file's.
struct SharedDay: Sendable {
    let path: String

    static let fileName = "openweather-exporter.day"
    /// How long a process waits for the others' lock before it decides on its own counts.
    static let lockWaitMilliseconds = 2000
    /// The most a day file holds: `DailyBudget.maxNames` names and as many spent take a few KB; read on
    /// every decision, a larger file is not a day's counts but a cost (it is written over).
    static let sizeLimit = 64 * 1024
    /// After the file could not be used (held locked past the wait, not a regular file), how long the
    /// exporter counts alone before it tries again, without waiting for the lock then: a process that
    /// holds the file costs one bounded wait, not one on every step.
    static let retrySeconds = 60.0

    init(storage: StateStorage) { path = storage.directory + "/" + Self.fileName }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// Another process holds the lock past the wait: the file itself is fine. Otherwise it cannot be the
        /// shared count (not a regular file, not openable), and the limits it shares cannot be kept.
        var locked = false
    }

    /// The file as read under the lock.
    struct Contents {
        /// Nil: none yet (an empty file), or none to take (`odd`).
        var day: SavedState.Daily?
        /// Why the file's bytes are no day to take (too large, not a day file, too many names): the day
        /// written back replaces them.
        var odd: String?
    }

    /// Runs `decide` under the lock with what the file holds, then writes the day `decide` returns.
    /// `waitMilliseconds`: how long another process's lock is waited for (0: tried once).
    func update<Result>(
        waitMilliseconds: Int = lockWaitMilliseconds, _ decide: (Contents) -> (Result, SavedState.Daily)
    ) throws(Failure) -> Result {
        let fd = try openFile()
        defer { close(fd) }
        // Held for microseconds by each process; a wait without end would stop polling behind a
        // process that holds the file locked (a stopped backfill, anyone who can write the directory).
        var waited = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw fail("cannot lock it: \(errnoText(errno))") }
            guard waited < waitMilliseconds else {
                throw fail(
                    waitMilliseconds < Self.lockWaitMilliseconds
                        ? "another process holds it locked"
                        : "another process has held it locked for \(waitMilliseconds / 1000) s: "
                            + "is a backfill stopped (SIGSTOP)?", locked: true)
            }
            usleep(1000)
            waited += 1
        }
        let (result, day) = decide(try read(fd))
        var state = SavedState(savedAt: 0)
        state.daily = day
        let out = StateFile.encode(state)
        let written = out.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == out.count, ftruncate(fd, off_t(out.count)) == 0 else {
            throw fail("cannot write it: \(errnoText(errno))")
        }
        return result
    }

    /// Proves at startup that the file can be the shared count: there, or creatable, and a regular file.
    /// A lock another process holds is not waited for here (`update` bounds that wait).
    func check() throws(Failure) { close(try openFile()) }

    /// A descriptor on the file, created if missing; the caller closes it. Only a regular file at the
    /// name itself is used: a link is not followed, so the lock is always on the inode at this name.
    private func openFile() throws(Failure) -> Int32 {
        // O_NONBLOCK: a FIFO planted at the name would block the open; it is refused below.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            var info = stat()
            if code == ELOOP || code == EISDIR || code == ENXIO, lstat(path, &info) == 0 {
                throw notRegular(info.st_mode)
            }
            throw fail("cannot open it: \(errnoText(code)); give the exporter's user write access to the directory")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw notRegular(info.st_mode)
        }
        return fd
    }

    private func notRegular(_ mode: mode_t) -> Failure {
        let what = mode & S_IFMT == S_IFLNK ? "a symbolic link" : RegularFile.kind(mode)
        return fail("it is \(what), not a regular file: remove it; the exporter creates the file itself")
    }

    /// What the locked file holds.
    private func read(_ fd: Int32) throws(Failure) -> Contents {
        let bytes: [UInt8]
        do throws(RegularFile.Failure) {
            bytes = try RegularFile.read(fd: fd, limit: Self.sizeLimit)
        } catch let error where error.code == EFBIG {
            return Contents(odd: "larger than \(Self.sizeLimit / 1024) KiB")
        } catch {
            throw fail("cannot read it: \(error.description)")
        }
        guard !bytes.isEmpty else { return Contents() }
        let daily: SavedState.Daily?
        do throws(StateFile.DecodeError) {
            daily = try StateFile.decode(bytes).daily
        } catch {
            return Contents(odd: "not a day's counts: \(error.description)")
        }
        guard let daily else { return Contents() }
        let names = max(daily.counts.count, daily.spent.count)
        guard names <= DailyBudget.maxNames else {
            return Contents(odd: "it names \(names) sources, more than the \(DailyBudget.maxNames) a day counts")
        }
        return Contents(day: daily)
    }

    /// Why a day later than this process's `today` is not taken (`DailyBudget.absorb`), for its warning.
    static func laterDay(_ day: Int, than today: Int) -> String {
        let date = Clock.rfc3339(Double(today) * DailyBudget.day).prefix(10)
        return "it counts UTC day \(day) since 1970, later than this clock's day \(today) (\(date))"
    }

    private func fail(_ reason: String, locked: Bool = false) -> Failure {
        Failure(description: "the day's request counts shared in \(path): \(reason)", locked: locked)
    }
}
