/// An HTTP/1.1 server on POSIX sockets and epoll, for Prometheus scrapes and small JSON APIs.
///
/// Limits (`HTTPServerConfiguration`, defaults in brackets):
/// - `maxRequestHeadBytes` [16 KiB]: request line plus headers; beyond it 431, or 414 when no line end
///   was seen in that many bytes (the request line alone is too long).
/// - `maxHeaderCount` [100]: beyond it 431.
/// - `maxBodyBytes` [64 KiB]: a larger Content-Length gets 413.
/// - `readTimeout` [10 s]: from accept, or from a request's first byte, until the request is complete;
///   on expiry the connection is closed without a response (no 408).
/// - `idleTimeout` [60 s]: keep-alive wait between requests; on expiry closed silently.
/// - `writeTimeout` [10 s]: how long a response may make no progress because the client stopped reading;
///   on expiry the connection is reset, so the kernel does not keep pushing to it.
/// - `maxConnections` [4096]: at the limit, the accepting loop closes one of its own connections, never one with a
///   response in flight: the longest-waiting idle keep-alive connection or one holding a request the handler marked
///   droppable (`HTTPResponder.markDroppable`), else the one that has spent longest sending its request. If it has
///   none, the new one is refused (closed at once). `onError` says so once when refusals start, and once with their
///   count when none has come for 5 s.
/// - A client that sends FIN before its response starts is taken to have left (as nginx does): the
///   connection is closed and `HTTPResponder.isConnectionClosed` turns true for the handler.
/// - Timeouts are enforced by a sweep every 250 ms (a quarter of the shortest timeout if that is less).
/// - `eventLoops` [online CPUs]: threads, each with its own epoll.
/// - `tls` [nil]: serve TLS (OpenSSL) with a `TLSContextSource`; certificate files are re-read when they
///   change, for new connections. A failed handshake just closes the connection (not reported: a scanner
///   must not fill the log); a half handshake is closed at `readTimeout`.
/// - `extraHeaders` [nil]: fields added to every response, errors included.
///
/// Choices:
/// - Bare LF is accepted as a line ending wherever CRLF is (RFC 9112 section 2.2); any other CR is a 400.
/// - Absolute-form targets (`http://host/path?q`) are accepted and reduced to their path and query;
///   `target` keeps the form as sent. `*` only with OPTIONS. Other forms are a 400.
/// - Empty lines before a request line are skipped (RFC 9112 section 2.2).
/// - Content-Length may repeat with one value (`5, 5`); differing values, signs or non-digits are a 400,
///   more than 18 digits or above `maxBodyBytes` a 413. Any Transfer-Encoding is a 501 (400 with a
///   Content-Length too: a smuggling attempt). Host is not required.
/// - Every error (400, 413, 414, 431, 501, 505) is answered with `Connection: close` and a one-line text/plain
///   body; the server then shuts down its side and drains input for up to 2 s, so the close does not reset
///   the connection before the client has read the error.
/// - Pipelined requests are answered in order, one in flight per connection; the next is parsed once the
///   previous response has been written out (a client that stops reading stops being parsed).
/// - A streamed response (`writeHead`/`writeBody`/`end`) that sends fewer bytes than its Content-Length
///   ends with a close; bytes beyond it are dropped and the connection closed. A producer that passes
///   `whenWritten` to `writeBody` hears when the client's socket has taken everything so far, so it can
///   hold one part per client however slowly the client reads.
/// - Each listener (`listeners`: addresses, or sockets inherited from systemd; one server, one set of
///   limits for all) is in every loop's epoll with EPOLLEXCLUSIVE; an accepted connection goes to the loop
///   with the fewest connections. Out of file descriptors, a loop stops watching the listeners for 100 ms,
///   doubling to 1 s, and reports it once through `onError`. A listener whose accept fails with EINVAL
///   outside a stop (another holder of an inherited socket shut it down) is dropped alone, reported
///   once through `onListenerDropped`; the others keep serving.
/// - `Expect: 100-continue` is not answered; clients send the body after their own short wait.
/// - `shutdown` must not be called from a handler: it waits for the loop threads.
import Glibc
import Locking
import Platform
import Synchronization

public final class HTTPServer: Sendable {
    private let core: ServerCore
    private let lifecycle = Locked<Lifecycle>(.created)

    private enum Lifecycle {
        case created
        case running([pthread_t])
        case stopped
    }

    /// Binds and listens here, so a bad address or a port in use surfaces before anything starts.
    public init(configuration: HTTPServerConfiguration, handler: any HTTPHandler) throws(HTTPServerError) {
        let listeners = try Listener.open(configuration)
        var loops: [LoopHandle] = []
        for index in 0..<max(1, configuration.eventLoops) {
            let epollFD = Linux.epollCreate1(Linux.EPOLL_CLOEXEC)
            let wakeFD = Linux.eventfd(0, Linux.EFD_NONBLOCK | Linux.EFD_CLOEXEC)
            var event = EpollEvent(events: Linux.EPOLLIN, data: UInt64(UInt32(bitPattern: wakeFD)))
            if epollFD < 0 || wakeFD < 0 || Linux.epollCtl(epollFD, Linux.EPOLL_CTL_ADD, wakeFD, &event) != 0 {
                let code = errno
                if epollFD >= 0 { close(epollFD) }
                if wakeFD >= 0 { close(wakeFD) }
                for loop in loops {
                    close(loop.epollFD)
                    close(loop.wakeFD)
                }
                for listener in listeners { close(listener.fd) }
                throw .listen(
                    errno: code, address: Listener.boundAddress(listeners[0].fd), flag: configuration.listenAddressFlag)
            }
            loops.append(LoopHandle(index: index, epollFD: epollFD, wakeFD: wakeFD))
        }
        core = ServerCore(
            configuration: configuration, handler: handler, listenFDs: listeners.map(\.fd),
            ports: listeners.map(\.port), loops: loops)
    }

    deinit {
        shutdown(gracePeriod: .zero)
    }

    /// The first listener's bound port, useful with port 0.
    public var port: UInt16 { core.ports[0] }

    /// Each listener's bound port, in the order of `HTTPServerConfiguration.listeners`.
    public var ports: [UInt16] { core.ports }

    /// Each listener's bound address as a user would write it (`[::]:9755`, `127.0.0.1:9755`), in the
    /// order of `HTTPServerConfiguration.listeners`.
    public var addresses: [String] { core.listenFDs.map(Listener.boundAddress) }

    /// Spawns the event-loop threads and returns; a second call does nothing.
    public func start() {
        lifecycle.withLock { state in
            guard case .created = state else { return }
            var threads: [pthread_t] = []
            for loop in core.loops {
                let core = self.core
                threads.append(
                    spawnThread(name: "http-loop-\(loop.index)") {
                        EventLoop(core: core, handle: loop).run()
                    })
            }
            state = .running(threads)
        }
    }

    /// Stops accepting at once, closes idle connections, lets responses in flight finish within `gracePeriod`,
    /// then closes everything. Blocks until every loop thread has exited; idempotent.
    public func shutdown(gracePeriod: Duration = .seconds(1.5)) {
        lifecycle.withLock { state in
            switch state {
            case .stopped:
                return
            case .created:
                break
            case .running(let threads):
                core.drainDeadline.store(monotonicNow() + nanoseconds(gracePeriod), ordering: .relaxed)
                core.stopping.store(true, ordering: .releasing)
                // Refuses new connections now, even those the kernel already queued.
                for listenFD in core.listenFDs { Glibc.shutdown(listenFD, Int32(SHUT_RDWR)) }
                for loop in core.loops { loop.wake() }
                for thread in threads { pthread_join(thread, nil) }
            }
            state = .stopped
            core.closeDescriptors()
        }
    }
}

/// Everything the loops share: configuration, handler, the listener and the stop signal.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: any HTTPHandler
    let listenFDs: [Int32]
    let ports: [UInt16]
    let loops: [LoopHandle]
    let tls: TLSContextSource?
    let extraHeaders: ExtraResponseHeaders?
    let stopping = Atomic<Bool>(false)
    let drainDeadline = Atomic<Int64>(0)
    /// Rare events are reported once per episode, not once per failed accept.
    let acceptPausedReported = Atomic<Bool>(false)
    /// Connections refused at the limit in this episode (0: none going on), and when the last was.
    let limitRefused = Atomic<Int>(0)
    let limitLastRefusal = Atomic<Int64>(0)
    /// Listeners dropped after they failed for good: no loop watches them again.
    let droppedListeners = Locked<Set<Int32>>([])

    init(
        configuration: HTTPServerConfiguration, handler: any HTTPHandler, listenFDs: [Int32], ports: [UInt16],
        loops: [LoopHandle]
    ) {
        self.configuration = configuration
        self.handler = handler
        self.listenFDs = listenFDs
        self.ports = ports
        self.loops = loops
        tls = configuration.tls
        extraHeaders = configuration.extraHeaders
    }

    func report(_ message: String) {
        configuration.onError?(message)
    }

    /// Marks `listenFD` dropped; true for the first loop to find it failed, which reports it.
    func dropListener(_ listenFD: Int32) -> Bool {
        droppedListeners.withLock { $0.insert(listenFD).inserted }
    }

    func isDropped(_ listenFD: Int32) -> Bool {
        droppedListeners.withLock { $0.contains(listenFD) }
    }

    func closeDescriptors() {
        for listenFD in listenFDs { close(listenFD) }
        for loop in loops {
            // Connections handed over after their loop exited.
            let leftovers = loop.inbox.withLock { inbox in
                let taken = inbox
                inbox = []
                return taken
            }
            for case .adopt(let fd, _) in leftovers { close(fd) }
            close(loop.epollFD)
            loop.closeWake()
        }
    }
}

private func spawnThread(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
    switch Threads.startJoinable(body) {
    case .success(let thread):
        Linux.setThreadName(thread, String(name.prefix(15)))
        return thread
    case .failure(let error):
        fatalError(
            """
            cannot start HTTP event-loop thread: \(errnoText(error.code).lowercased()); raise the thread or memory \
            limits
            """
        )
    }
}
