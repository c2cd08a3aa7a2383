import Dispatch
import Locking
import Platform

/// Threads of our own for work that waits on the network, started as needed up to `limit`, ended
/// after a minute idle. libdispatch on Linux runs its global queue on about one thread a core and
/// cannot tell a thread waiting for an answer from a busy one, so there requests in flight would
/// take turns two or three at a time on a small machine, whatever the poller's limit, and would
/// hold up the Dispatch work (rendering) behind them.
final class ThreadPool: Sendable {
    private struct State {
        /// Work waiting for a thread: only while all `limit` threads are busy, or between a
        /// submission and the waiting thread it woke.
        var queue: [@Sendable () -> Void] = []
        var head = 0
        /// Threads waiting on `wake` that no submission has woken yet.
        var idle = 0
        var threads = 0

        /// The oldest waiting work for a thread that is free; none: the thread counts as idle.
        mutating func nextOrIdle() -> (@Sendable () -> Void)? {
            guard head < queue.count else {
                idle += 1
                return nil
            }
            let work = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            return work
        }
    }

    private let limit: Int
    /// A thread with nothing to run for this long ends (a small plan polls a few times a minute).
    private let idleTime: Duration
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)

    typealias Starter = @Sendable (@escaping @Sendable () -> Void) -> Int32
    private let startThread: Starter

    /// `start` starts a thread running its argument and gives `pthread_create`'s result.
    init(limit: Int, idle: Duration = .seconds(60), start: @escaping Starter = Threads.start) {
        precondition(limit > 0)
        startThread = start
        self.limit = limit
        idleTime = idle
    }

    /// Runs `work` on a waiting thread, on a new one while there are fewer than `limit`, or else
    /// on the first thread to finish what it runs.
    func run(_ work: @escaping @Sendable () -> Void) {
        enum Start { case woken, spawned, queued }
        let start = state.withLock { state -> Start in
            if state.threads < limit && state.idle == 0 {
                state.threads += 1
                return .spawned
            }
            state.queue.append(work)
            guard state.idle > 0 else { return .queued }
            state.idle -= 1
            return .woken
        }
        switch start {
        case .spawned:
            guard startThread({ [self] in serve(work) }) == 0 else {
                // No thread to be had (a container's process limit, say): the work still runs, on
                // libdispatch's threads, as slow answers then take turns.
                state.withLock { $0.threads -= 1 }
                DispatchQueue.global().async(execute: work)
                return
            }
        case .woken: wake.signal()
        case .queued: break
        }
    }

    private func serve(_ first: @escaping @Sendable () -> Void) {
        var work = first
        while true {
            work()
            var next = state.withLock { $0.nextOrIdle() }
            while next == nil {
                if wake.wait(timeout: .now() + .nanoseconds(Int(idleTime / .nanoseconds(1)))) == .success {
                    // Woken for work another thread may have taken on finishing: then wait again.
                    next = state.withLock { $0.nextOrIdle() }
                    continue
                }
                // Idle for a while: end, unless every waiting thread has been woken (a wake-up is
                // then on its way to this one).
                let leave = state.withLock { state in
                    guard state.idle > 0 else { return false }
                    state.idle -= 1
                    state.threads -= 1
                    return true
                }
                if leave { return }
            }
            work = next!
        }
    }
}
