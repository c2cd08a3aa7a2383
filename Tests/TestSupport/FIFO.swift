import Dispatch
import Glibc

/// Runs `work` on another thread and returns true when it finishes within `seconds`. When it does not
/// (stuck opening the FIFO at `fifo`, as a blocking open waits for a writer), a writer comes and goes
/// until it finishes, so a regression fails the test instead of hanging it.
public func finishesInTime(_ seconds: Double, releasing fifo: String, _ work: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        work()
        done.signal()
    }
    if done.wait(timeout: .now() + seconds) == .success { return true }
    while done.wait(timeout: .now() + 0.05) == .timedOut {
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        if writer >= 0 { close(writer) }
    }
    return false
}

/// Puts a FIFO in the place of `path` in one rename, as a careless deploy or a hostile user might.
public func replaceWithFIFO(_ path: String) -> Bool {
    let temporary = path + ".fifo"
    return mkfifo(temporary, 0o600) == 0 && rename(temporary, path) == 0
}
