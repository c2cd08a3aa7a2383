import CLinux
import Glibc
import Locking
import Platform

/// Runs work inside the network namespace of other processes: on a thread of its own that enters it
/// (setns, which needs CAP_SYS_ADMIN), so the sockets it opens are made there, while the rest of the
/// process stays where it was; the thread ends with the work.
enum NetworkNamespace {
    /// Why the namespace could not be entered.
    struct Refusal: Error, Sendable, CustomStringConvertible {
        let description: String
    }

    static func run<Value: Sendable>(
        in namespace: ListeningSockets.Namespace, _ body: @escaping @Sendable () -> Value
    ) -> Result<Value, Refusal> {
        let outcome = Locked<Result<Value, Refusal>?>(nil)
        switch Threads.startJoinable({
            let entered = enter(namespace)
            let result = entered.map { body() }
            outcome.withLock { $0 = result }
        }) {
        case .success(let thread): pthread_join(thread, nil)
        case .failure(let error):
            return .failure(Refusal(description: "no thread to enter it: \(errnoText(error.code))"))
        }
        return outcome.withLock { $0 } ?? .failure(Refusal(description: "the thread that entered it gave no answer"))
    }

    /// Moves the calling thread into `namespace`, through the first of its processes still there whose
    /// namespace is still that one (a number may have been given to another process since the scan).
    private static func enter(_ namespace: ListeningSockets.Namespace) -> Result<Void, Refusal> {
        for pid in namespace.pids {
            let fd = open("/proc/\(pid)/ns/net", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, ListeningSockets.NamespaceID(info) == namespace.id else { continue }
            guard clinux_enter_network_namespace(fd) == 0 else {
                let code = errno
                let why = code == EPERM ? "\(errnoText(code)): entering needs CAP_SYS_ADMIN" : errnoText(code)
                return .failure(Refusal(description: why))
            }
            return .success(())
        }
        return .failure(Refusal(description: "its processes have exited"))
    }
}
