import Dispatch
import Glibc
import Locking
import TestSupport
import Testing

@testable import Exporter

/// The threads requests run on: as many at once as the limit even when each only waits (what
/// libdispatch's global queue does not give on a small machine), never more, and none kept idle.
@Suite struct ThreadPoolTests {
    struct Counts {
        var running = 0
        var most = 0
        var started = 0
        var done = 0
        var threads: Set<String> = []
    }

    final class Tally: Sendable {
        let counts = Locked(Counts())
        init() {}
        func read<T>(_ field: (Counts) -> T) -> T { counts.withLock { field($0) } }
    }

    /// The kernel's name of the calling thread, "PID/task/TID".
    static func thread() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        return length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }

    /// `count` pieces of work that each wait until `release` is signalled.
    static func submit(_ count: Int, to pool: ThreadPool, tally: Tally, release: DispatchSemaphore) {
        for _ in 0..<count {
            pool.run {
                tally.counts.withLock {
                    $0.running += 1
                    $0.started += 1
                    $0.most = max($0.most, $0.running)
                    $0.threads.insert(thread())
                }
                release.wait()
                tally.counts.withLock {
                    $0.running -= 1
                    $0.done += 1
                }
            }
        }
    }

    @Test func waitingWorkRunsUpToTheLimitAtOnceAndNoMore() async {
        let pool = ThreadPool(limit: 16)
        let tally = Tally()
        let release = DispatchSemaphore(value: 0)
        Self.submit(20, to: pool, tally: tally, release: release)
        #expect(await waitUntil(seconds: 10) { tally.read(\.running) == 16 }, "\(tally.read(\.running)) running")
        #expect(tally.read(\.started) == 16, "the four over the limit wait for a thread")
        for _ in 0..<4 { release.signal() }
        #expect(await waitUntil(seconds: 10) { tally.read(\.started) == 20 })
        for _ in 0..<16 { release.signal() }
        #expect(await waitUntil(seconds: 10) { tally.read(\.done) == 20 })
        #expect(tally.read(\.most) == 16)
        #expect(tally.read(\.threads.count) == 16, "the queued work ran on the threads that finished")
    }

    @Test func idleThreadsEndAndThePoolStartsNewOnes() async {
        let pool = ThreadPool(limit: 4, idle: .milliseconds(50))
        let tally = Tally()
        let release = DispatchSemaphore(value: 0)
        Self.submit(4, to: pool, tally: tally, release: release)
        #expect(await waitUntil(seconds: 10) { tally.read(\.running) == 4 })
        for _ in 0..<4 { release.signal() }
        let first = tally.read(\.threads)
        #expect(first.count == 4)
        #expect(
            await waitUntil(seconds: 10) { first.allSatisfy { access("/proc/\($0)", F_OK) != 0 } },
            "the idle threads ended")

        Self.submit(2, to: pool, tally: tally, release: release)
        #expect(
            await waitUntil(seconds: 10) { tally.read(\.running) == 2 },
            "work after the threads ended still runs at once")
        for _ in 0..<2 { release.signal() }
        #expect(await waitUntil(seconds: 10) { tally.read(\.done) == 6 })
    }

    @Test func workSubmittedAsAThreadFinishesIsNeitherLostNorRunTwice() async {
        // Submissions racing with threads that finish, wait and end (a 1 ms idle time).
        let pool = ThreadPool(limit: 3, idle: .milliseconds(1))
        let runs = Locked([Int](repeating: 0, count: 2000))
        for round in 0..<200 {
            for item in 0..<10 { pool.run { runs.withLock { $0[round * 10 + item] += 1 } } }
            if round % 20 == 0 { usleep(2_000) }  // let the threads go idle and end now and then
        }
        #expect(await waitUntil(seconds: 20) { runs.withLock { $0.allSatisfy { $0 >= 1 } } })
        #expect(runs.withLock { $0.allSatisfy { $0 == 1 } })
    }

    @Test func withoutThreadsTheWorkStillRuns() async {
        // pthread_create refuses (EAGAIN: a container's process limit): nothing is lost.
        let pool = ThreadPool(limit: 4, start: { _ in EAGAIN })
        let ran = Locked(0)
        for _ in 0..<10 { pool.run { ran.withLock { $0 += 1 } } }
        #expect(await waitUntil(seconds: 10) { ran.withLock { $0 } == 10 })
    }
}
