import Glibc

/// Seconds on the monotonic clock, for measuring how long something took.
public func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Seconds of CPU the calling thread has used: what a bound on the cost of a computation reads.
/// Unlike the wall clock it does not grow while other processes hold the cores (a busy CI machine),
/// so such a bound races nothing.
public func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Polls `condition` every 5 ms until it holds (true) or `seconds` pass (false). The one way tests
/// wait for an event: never a fixed sleep.
public func waitUntil(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while true {
        if condition() { return true }
        if monotonicSeconds() > deadline { return false }
        usleep(5_000)
    }
}

/// Captures log lines for assertions.
public final class LogCapture: @unchecked Sendable {
    private var lines: [String] = []
    private var lock = pthread_mutex_t()

    public init() { pthread_mutex_init(&lock, nil) }

    public func append(_ line: String) {
        pthread_mutex_lock(&lock)
        lines.append(line)
        pthread_mutex_unlock(&lock)
    }

    public var all: [String] {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return lines
    }
}

/// The same for async tests: the wait suspends instead of blocking one of Swift Testing's few
/// threads (two on a two-core machine), so other tests run meanwhile.
public func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = monotonicSeconds() + seconds
    while true {
        if condition() { return true }
        if monotonicSeconds() > deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
