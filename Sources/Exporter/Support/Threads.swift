import Dispatch
import Glibc

/// A detached pthread running `body`, for the few long-lived loops the exporter has.
public enum Threads {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    public static func spawn(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(result == 0, "cannot start the \(name) thread: \(String(cString: strerror(result)))")
        pthread_detach(thread)
    }

    /// libdispatch opens its own descriptors (an epoll, a timer) when its first worker thread and its
    /// first timer start, and traps (SIGILL) when it cannot. The poller and the renderer run on its
    /// threads, so make both happen at startup, while descriptors are free, instead of at a poll that
    /// comes when scrapers hold every descriptor the process may open.
    public static func startDispatch() {
        let started = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { started.signal() }
        started.wait()
    }
}
