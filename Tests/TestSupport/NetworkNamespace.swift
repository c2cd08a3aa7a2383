import CChildProcess
import Dispatch
import Glibc
import Locking
import Platform

/// A thread in a new network namespace (loopback up) that runs `setUp` there and stays until
/// `release()`, so the namespace can be entered through /proc/TID/ns/net meanwhile. The rest of the
/// process stays in its own namespace. Root only: nil otherwise.
public final class NetworkNamespaceThread: Sendable {
    /// The thread's number, as /proc names it.
    public let tid: Int32
    private let released = DispatchSemaphore(value: 0)
    private let thread: Locked<pthread_t?>

    public init?(_ setUp: @escaping @Sendable () -> Void) {
        let ready = DispatchSemaphore(value: 0)
        let entered = Locked<Int32>(0)
        let released = self.released
        let started = Threads.startJoinable {
            if child_process_new_network_namespace() == 0 {
                // /proc/thread-self is PID/task/TID.
                var link = [CChar](repeating: 0, count: 64)
                let count = readlink("/proc/thread-self", &link, link.count - 1)
                let text = String(decoding: link[0..<max(count, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let tid = text.split(separator: "/").last.flatMap { Int32($0) } ?? 0
                if tid != 0 { setUp() }
                entered.withLock { $0 = tid }
            }
            ready.signal()
            if entered.withLock({ $0 }) != 0 { released.wait() }
        }
        guard case .success(let thread) = started else { return nil }
        ready.wait()
        tid = entered.withLock { $0 }
        guard tid != 0 else {
            pthread_join(thread, nil)
            return nil
        }
        self.thread = Locked(thread)
    }

    /// Whether this process may make one (root, with CAP_SYS_ADMIN: not in a container that drops it).
    public static let available: Bool = {
        guard getuid() == 0, let probe = NetworkNamespaceThread({}) else { return false }
        probe.release()
        return true
    }()

    /// Lets the thread end (once); the namespace lives on while a socket made in it is open.
    public func release() {
        guard
            let thread = thread.withLock({ was in
                defer { was = nil }
                return was
            })
        else { return }
        released.signal()
        pthread_join(thread, nil)
    }
}
