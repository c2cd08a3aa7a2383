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
struct SharedDay: Sendable {
    let path: String

    static let fileName = "openweather-exporter.day"
    /// How long a process waits for the others' lock before it decides on its own counts.
    static let lockWaitMilliseconds = 2000

    init(storage: StateStorage) { path = storage.directory + "/" + Self.fileName }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `decide` under the lock with the day as the file has it (nil: none yet, or unreadable),
    /// then writes the day `decide` returns.
    func update<Result>(_ decide: (SavedState.Daily?) -> (Result, SavedState.Daily)) throws(Failure) -> Result {
        // O_NONBLOCK: a FIFO planted at the name would block the open; it is refused below.
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw fail("cannot open it: \(errnoText(errno))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw fail("it is not a regular file: remove it, it is written afresh")
        }
        // Held for microseconds by each process; a wait without end would stop polling behind a
        // process that holds the file locked (a stopped backfill, anyone who can write the directory).
        var waited = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw fail("cannot lock it: \(errnoText(errno))") }
            guard waited < Self.lockWaitMilliseconds else {
                throw fail(
                    "another process has held it locked for \(Self.lockWaitMilliseconds / 1000) s: is a backfill stopped (SIGSTOP)?"
                )
            }
            usleep(1000)
            waited += 1
        }
        let bytes: [UInt8]
        do throws(RegularFile.Failure) {
            bytes = try RegularFile.read(fd: fd, limit: 1 << 20)
        } catch {
            throw fail("cannot read it: \(error.description)")
        }
        let (result, day) = decide(try? StateFile.decode(bytes).daily)
        var state = SavedState(savedAt: 0)
        state.daily = day
        let out = StateFile.encode(state)
        let written = out.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == out.count, ftruncate(fd, off_t(out.count)) == 0 else {
            throw fail("cannot write it: \(errnoText(errno))")
        }
        return result
    }

    /// Takes the others' counts into `daily`, lets `decide` use it, and writes back what this process holds.
    func update<Result>(_ daily: inout DailyBudget, _ decide: (inout DailyBudget) -> Result) throws(Failure) -> Result {
        try withoutActuallyEscaping(decide) { decide throws(Failure) in
            var budget = daily
            defer { daily = budget }
            return try update { shared in
                budget.absorb(shared)
                let result = decide(&budget)
                return (result, budget.shared())
            }
        }
    }

    private func fail(_ reason: String) -> Failure {
        Failure(description: "the day's request counts shared in \(path): \(reason)")
    }
}
