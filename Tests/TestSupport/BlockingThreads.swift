import Dispatch
import Locking
import Testing

/// Threads of their own for tests that block: sockets read with timeouts, child processes waited
/// for, servers that answer on real timers. Swift Testing starts every test on the concurrency
/// pool, which has one thread per core (two on the machines here), so two tests blocked on I/O
/// stop every other test, including async ones that only wait for an event. A fixed number of
/// threads: blocking tests run side by side without all starting at once (more than 6 at a time
/// made the HTTP server's timing tests miss their bounds under load).
public final class BlockingThreads: TaskExecutor {
    public static let shared = BlockingThreads(count: 6)
    /// For the end-to-end suites, which wait on a child process or the exporter's real timers: on
    /// the pool their waits resumed seconds late whenever CPU-bound tests held both threads (they
    /// finished 13-17 s into a run for 2-7 s of waiting), and on `shared` they kept the blocking
    /// suites waiting for a thread.
    public static let endToEnd = BlockingThreads(count: 6)
    /// For a `.serialized` suite that blocks: its tests run one after another, and on `shared` each
    /// of them queued behind the other suites' tests (HTTPClientTests' 6 s of tests ended 15 s in).
    public static let serial = BlockingThreads(count: 1)

    private let jobs = Locked<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    init(count: Int) {
        for index in 0..<count {
            // A serial queue of its own gets a thread of its own, outside the concurrency pool.
            DispatchQueue(label: "blocking-tests-\(index)").async { [self] in
                while true {
                    available.wait()
                    guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }
}

/// Runs each test of a suite (or one test) on `BlockingThreads`: `@Suite(.blocking)`, `@Suite(.endToEnd)`.
public struct BlockingTrait: SuiteTrait, TestTrait, TestScoping {
    let threads: BlockingThreads
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(threads) { try await function() }
    }
}

extension Trait where Self == BlockingTrait {
    /// The test blocks its thread while it waits (see `BlockingThreads`).
    public static var blocking: Self { BlockingTrait(threads: .shared) }
    /// The test waits on a child process or the exporter's real timers (see `BlockingThreads.endToEnd`).
    public static var endToEnd: Self { BlockingTrait(threads: .endToEnd) }
    /// A `.serialized` suite whose tests block (see `BlockingThreads.serial`); one suite at most.
    public static var blockingSerially: Self { BlockingTrait(threads: .serial) }
}
