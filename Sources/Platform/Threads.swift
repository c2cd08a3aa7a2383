import Dispatch
import Glibc

/// Every thread the product starts itself, over `pthread_create`.
public enum Threads {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// A detached thread the process cannot do without: failing to start it stops the process.
    public static func spawn(name: String, _ body: @escaping @Sendable () -> Void) {
        let result = start(body)
        precondition(result == 0, "cannot start the \(name) thread: \(errnoText(result))")
    }

    /// A detached thread; `pthread_create`'s result: 0, or why no thread was started (EAGAIN under
    /// a process limit).
    public static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
        var thread = pthread_t()
        let result = create(&thread, body)
        if result == 0 { pthread_detach(thread) }
        return result
    }

    /// A thread that its owner joins (`pthread_join`); the failure is `pthread_create`'s result.
    public static func startJoinable(_ body: @escaping @Sendable () -> Void) -> Result<pthread_t, ThreadStartError> {
        var thread = pthread_t()
        let result = create(&thread, body)
        return result == 0 ? .success(thread) : .failure(ThreadStartError(code: result))
    }

    private static func create(_ thread: inout pthread_t, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { raw in
                Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, box)
        if result != 0 { Unmanaged<Box>.fromOpaque(box).release() }
        return result
    }

    /// libdispatch opens its own descriptors (an epoll, a timer) when its first worker thread and its
    /// first timer start, and traps (SIGILL) when it cannot. The renderer runs on its threads, so
    /// make both happen at startup, while descriptors are free, instead of at a poll that
    /// comes when scrapers hold every descriptor the process may open.
    public static func startDispatch() {
        let started = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { started.signal() }
        started.wait()
    }
}

/// Why `pthread_create` started no thread: its error number (EAGAIN, ENOMEM).
public struct ThreadStartError: Error, Sendable {
    public let code: Int32
}
