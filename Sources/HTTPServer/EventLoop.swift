import Glibc
import Platform
import Synchronization

/// The key under which each loop thread finds its own loop, so a responder called on that thread skips the inbox.
private let currentLoopKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

/// One thread, one epoll: accepts, reads, parses, calls the handler and writes, for the connections it owns.
final class EventLoop {
    let handle: LoopHandle
    private let core: ServerCore
    private let handler: any HTTPHandler
    private let limits: ParserLimits
    private let epollFD: Int32
    private let listenFDs: [Int32]

    /// Indexed by fd: a lookup per event without hashing.
    private var connections: [Connection?] = []
    private var openCount = 0
    private var nextSerial: UInt32 = 0
    private var nextToken: UInt64 = 0
    private var now: Int64 = 0

    private var head = ResponseHeadWriter()
    private var date = HTTPDate()
    private var inboxSpare: [LoopHandle.Message] = []
    private let events: UnsafeMutablePointer<EpollEvent>
    private let eventCapacity: Int32 = 256
    private let iov: UnsafeMutablePointer<iovec>
    private let iovCapacity = 64
    private let discard: UnsafeMutableRawBufferPointer
    /// Where a TLS write gathers up to one record's worth of plaintext; shared by the loop's connections.
    private let tlsScratch: UnsafeMutableRawBufferPointer

    private var listenerWatched = false
    private var listenerResumeAt: Int64 = 0
    private var acceptBackoff: Int64 = 0
    private var draining = false
    private var drainDeadline: Int64 = 0

    // Timeouts in nanoseconds.
    private let readTimeout: Int64
    private let idleTimeout: Int64
    private let writeTimeout: Int64
    private let limitQuietPeriod: Int64
    private let lingerTimeout: Int64
    private let sweepInterval: Int64
    private var nextSweep: Int64 = 0
    /// Enough for the largest acceptable request, so a full buffer in `.reading` always parses to a result.
    private let bufferLimit: Int

    init(core: ServerCore, handle: LoopHandle) {
        self.core = core
        self.handle = handle
        handler = core.handler
        let configuration = core.configuration
        limits = ParserLimits(
            maxHeadBytes: max(64, configuration.maxRequestHeadBytes),
            maxHeaderCount: max(0, configuration.maxHeaderCount),
            maxBodyBytes: max(0, configuration.maxBodyBytes)
        )
        bufferLimit = limits.maxHeadBytes + limits.maxBodyBytes + 1
        epollFD = handle.epollFD
        listenFDs = core.listenFDs
        readTimeout = nanoseconds(configuration.readTimeout)
        idleTimeout = nanoseconds(configuration.idleTimeout)
        writeTimeout = nanoseconds(configuration.writeTimeout)
        limitQuietPeriod = nanoseconds(configuration.limitQuietPeriod)
        lingerTimeout = min(2_000_000_000, readTimeout)
        // A quarter of the shortest timeout keeps the overshoot small; never busier than every 10 ms.
        sweepInterval = max(10_000_000, min(250_000_000, min(readTimeout, idleTimeout, writeTimeout) / 4))
        events = .allocate(capacity: Int(eventCapacity))
        iov = .allocate(capacity: iovCapacity)
        discard = .allocate(byteCount: 64 * 1024, alignment: 16)
        tlsScratch = .allocate(byteCount: core.tls == nil ? 0 : TLSTransport.recordSize, alignment: 16)
    }

    deinit {
        events.deallocate()
        iov.deallocate()
        discard.deallocate()
        tlsScratch.deallocate()
    }

    static var current: EventLoop? {
        guard let raw = pthread_getspecific(currentLoopKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(raw).takeUnretainedValue()
    }

    // MARK: - The loop

    func run() {
        // sendfile(2) cannot be told MSG_NOSIGNAL: a client gone mid-body must be an EPIPE, not a signal
        // that ends the process (the library's user may not ignore SIGPIPE). Blocked on this thread only.
        var pipe = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipe, nil)
        pthread_setspecific(currentLoopKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(currentLoopKey, nil) }
        now = monotonicNow()
        date.refresh()
        nextSweep = now + sweepInterval
        watchListener()

        while true {
            if !draining && core.stopping.load(ordering: .acquiring) {
                enterDrain()
            }
            if draining && (openCount == 0 || now >= drainDeadline) {
                break
            }
            let count = Linux.epollWait(epollFD, events, eventCapacity, waitMilliseconds())
            now = monotonicNow()
            date.refresh()
            if count < 0 {
                if errno == EINTR { continue }
                core.report("epoll_wait failed: \(errnoText(errno).lowercased()); event loop \(handle.index) stops")
                break
            }
            for k in 0..<Int(count) {
                let event = events[k]
                let data = event.payload
                let fd = Int32(truncatingIfNeeded: data & 0xFFFF_FFFF)
                let serial = UInt32(truncatingIfNeeded: data >> 32)
                if serial == 0 {
                    if fd == handle.wakeFD {
                        drainInbox()
                    } else if listenFDs.contains(fd) {
                        acceptConnections(on: fd)
                    }
                    continue
                }
                guard Int(fd) < connections.count, let connection = connections[Int(fd)], connection.serial == serial
                else { continue }
                onEvent(connection, event.flags)
            }
            if !listenerWatched && listenerResumeAt != 0 && now >= listenerResumeAt && !draining {
                listenerResumeAt = 0
                watchListener()
            }
            if now >= nextSweep {
                nextSweep = now + sweepInterval
                sweep()
                endLimitEpisodeIfQuiet()
            }
        }

        for case let connection? in connections {
            close(connection)
        }
        closeAdoptedInInbox()
    }

    private func waitMilliseconds() -> Int32 {
        var until = nextSweep
        if listenerResumeAt != 0 { until = min(until, listenerResumeAt) }
        if draining { until = min(until, drainDeadline) }
        let ms = (until - now + 999_999) / 1_000_000
        return Int32(max(0, min(ms, 1000)))
    }

    // MARK: - Accepting

    private func watchListener() {
        guard !listenerWatched else { return }
        for listenFD in listenFDs where !core.isDropped(listenFD) {
            // EPOLLEXCLUSIVE: each listener in every loop's epoll, without waking all loops per connection.
            var event = EpollEvent(
                events: Linux.EPOLLIN | Linux.EPOLLEXCLUSIVE, data: UInt64(UInt32(bitPattern: listenFD)))
            Linux.epollCtl(epollFD, Linux.EPOLL_CTL_ADD, listenFD, &event)
        }
        listenerWatched = true
    }

    private func unwatchListener() {
        guard listenerWatched else { return }
        var event = EpollEvent()
        for listenFD in listenFDs { Linux.epollCtl(epollFD, Linux.EPOLL_CTL_DEL, listenFD, &event) }
        listenerWatched = false
    }

    private func acceptConnections(on listenFD: Int32) {
        while !draining {
            let (fd, peer) = Linux.accept4(listenFD, flags: Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
            if fd < 0 {
                let code = errno
                switch code {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH,
                    EOPNOTSUPP, ENETUNREACH:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    pauseAccepting(code)
                    return
                case EINVAL:
                    // Shut down: by `shutdown` for a graceful stop, or by another holder of an inherited socket.
                    if core.stopping.load(ordering: .acquiring) {
                        unwatchListener()
                    } else {
                        drop(listenFD)
                    }
                    return
                default:
                    core.report("accept failed: \(errnoText(code).lowercased())")
                    pauseAccepting(code)
                    return
                }
            }
            if acceptBackoff != 0 {
                acceptBackoff = 0
                core.acceptPausedReported.store(false, ordering: .relaxed)
            }

            var total = 0
            var target = handle
            var targetLoad = Int.max
            for loop in core.loops {
                let load = loop.load.load(ordering: .relaxed)
                total += load
                if load < targetLoad || (load == targetLoad && loop === handle) {
                    target = loop
                    targetLoad = load
                }
            }
            if total >= core.configuration.maxConnections && !evictLongestIdle() {
                Glibc.close(fd)
                refusedAtLimit()
                continue
            }

            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            target.load.add(1, ordering: .relaxed)
            if target === handle {
                adopt(fd, peer)
            } else {
                target.post(.adopt(fd, peer))
            }
        }
    }

    /// A listener that failed for good leaves this loop's epoll (each loop drops it when it finds it
    /// failed) and is reported once; the other listeners keep serving.
    private func drop(_ listenFD: Int32) {
        var event = EpollEvent()
        Linux.epollCtl(epollFD, Linux.EPOLL_CTL_DEL, listenFD, &event)
        guard core.dropListener(listenFD) else { return }
        let message = """
            listener \(Listener.boundAddress(listenFD)) stopped accepting (accept: invalid argument: it was shut \
            down, by another process holding the socket?); it is dropped, the other listeners keep serving; restart \
            to listen there again
            """
        if let dropped = core.configuration.onListenerDropped { dropped(message) } else { core.report(message) }
    }

    /// The next pause of accepting, in nanoseconds, after one of `previous` (0: none yet): 100 ms,
    /// doubling to 1 s.
    static func acceptPause(after previous: Int64) -> Int64 {
        previous == 0 ? 100_000_000 : min(previous * 2, 1_000_000_000)
    }

    /// Out of file descriptors: stop watching the listener for a while instead of spinning on it.
    private func pauseAccepting(_ code: Int32) {
        unwatchListener()
        acceptBackoff = Self.acceptPause(after: acceptBackoff)
        listenerResumeAt = now + acceptBackoff
        if !core.acceptPausedReported.exchange(true, ordering: .relaxed) {
            core.report(
                """
                cannot accept connections: \(errnoText(code).lowercased()); pausing accepts and retrying, raise the \
                open-file limit (ulimit -n) or lower the connection limit
                """
            )
        }
    }

    /// One warning when refusals start and one when they have stopped for `limitQuietPeriod`, however
    /// fast a flood makes the count of connections swing around the limit.
    private func refusedAtLimit() {
        core.limitLastRefusal.store(now, ordering: .relaxed)
        if core.limitRefused.wrappingAdd(1, ordering: .relaxed).oldValue == 0 {
            core.report(
                """
                connection limit of \(core.configuration.maxConnections) reached with no idle connection to drop; \
                refusing new connections until some close
                """
            )
        }
    }

    private func endLimitEpisodeIfQuiet() {
        guard core.limitRefused.load(ordering: .relaxed) > 0,
            now - core.limitLastRefusal.load(ordering: .relaxed) >= limitQuietPeriod
        else { return }
        let refused = core.limitRefused.exchange(0, ordering: .relaxed)
        if refused > 0 {
            core.report(
                """
                connection limit of \(core.configuration.maxConnections) no longer reached: \(refused) connections \
                were refused
                """
            )
        }
    }

    /// Drops the connection whose loss costs least, never one with a response in flight: first an idle
    /// keep-alive connection or one holding a request the handler marked droppable (it only waits, e.g.
    /// for a password check; under a flood of wrong passwords those are the flood's), the longest-waiting
    /// of them; else the one that has spent longest sending its request.
    private func evictLongestIdle() -> Bool {
        var oldest: Connection?
        var oldestSince = Int64.max
        var oldestCheap = false
        for case let connection? in connections {
            let waits =
                connection.state == .handling && connection.responder?.droppable.load(ordering: .relaxed) == true
            let idle = connection.state == .reading && connection.bufferedCount == 0 && connection.servedAny
            guard waits || connection.state == .reading else { continue }
            let cheap = waits || idle
            let since = idle ? connection.idleSince : connection.readStartedAt
            if cheap != oldestCheap ? cheap : since < oldestSince {
                oldest = connection
                oldestSince = since
                oldestCheap = cheap
            }
        }
        guard let oldest else { return false }
        close(oldest)
        return true
    }

    private func adopt(_ fd: Int32, _ peer: PeerAddress) {
        if draining {
            Glibc.close(fd)
            handle.load.subtract(1, ordering: .relaxed)
            return
        }
        guard let transport = makeTransport(fd) else {
            Glibc.close(fd)
            handle.load.subtract(1, ordering: .relaxed)
            return
        }
        nextSerial = nextSerial == UInt32.max ? 1 : nextSerial + 1
        let connection = Connection(fd: fd, peer: peer, transport: transport, serial: nextSerial, now: now)
        let index = Int(fd)
        if index >= connections.count {
            connections.append(
                contentsOf: repeatElement(nil, count: max(index + 1 - connections.count, connections.count)))
        }
        // Edge-triggered with EPOLLOUT always on: no epoll_ctl per request or per partial write.
        var event = EpollEvent(
            events: Linux.EPOLLIN | Linux.EPOLLOUT | Linux.EPOLLRDHUP | Linux.EPOLLET,
            data: UInt64(UInt32(bitPattern: fd)) | UInt64(nextSerial) << 32)
        guard Linux.epollCtl(epollFD, Linux.EPOLL_CTL_ADD, fd, &event) == 0 else {
            transport.release()
            Glibc.close(fd)
            handle.load.subtract(1, ordering: .relaxed)
            return
        }
        connections[index] = connection
        openCount += 1
    }

    /// Plain, or TLS with the context current at accept time (so rotated certificates reach new connections).
    private func makeTransport(_ fd: Int32) -> ConnectionTransport? {
        guard let tls = core.tls else { return PlainTransport(fd: fd) }
        return TLSTransport(fd: fd, context: tls.context(now: now), scratch: tlsScratch)
    }

    // MARK: - Cross-thread messages

    private func drainInbox() {
        var count: UInt64 = 0
        _ = read(handle.wakeFD, &count, 8)
        handle.wakePending.store(false, ordering: .releasing)
        var batch = inboxSpare
        handle.inbox.withLock { swap(&$0, &batch) }
        for message in batch {
            switch message {
            case .adopt(let fd, let peer):
                adopt(fd, peer)
            case .call(let fd, let token, let call):
                deliver(fd: fd, token: token, call)
            }
        }
        batch.removeAll(keepingCapacity: true)
        inboxSpare = batch
    }

    private func closeAdoptedInInbox() {
        let batch = handle.inbox.withLock { inbox in
            let taken = inbox
            inbox = []
            return taken
        }
        for case .adopt(let fd, _) in batch {
            Glibc.close(fd)
            handle.load.subtract(1, ordering: .relaxed)
        }
    }

    // MARK: - Reading and parsing

    private func onEvent(_ connection: Connection, _ flags: UInt32) {
        if flags & Linux.EPOLLERR != 0 {
            close(connection)
            return
        }
        let transport = connection.transport
        let readable = flags & (Linux.EPOLLIN | Linux.EPOLLRDHUP | Linux.EPOLLHUP) != 0
        let writable = flags & Linux.EPOLLOUT != 0
        if connection.hasPending && (writable || (readable && transport.writeWaitsForReadable)) {
            flush(connection, prefix: UnsafeRawBufferPointer(start: nil, count: 0))
            if connection.state == .closed { return }
        }
        if readable || (writable && transport.readWaitsForWritable) {
            // The peer's FIN is already reported: no later edge will come, so read on to the end of stream.
            readAvailable(connection, toEnd: flags & (Linux.EPOLLRDHUP | Linux.EPOLLHUP) != 0)
            if connection.state == .reading {
                process(connection)
            }
        }
    }

    /// Reads until the socket is drained (edge-triggered) or the buffer is at its limit.
    private func readAvailable(_ connection: Connection, toEnd: Bool = false) {
        if connection.state == .lingering {
            discardInput(connection)
            return
        }
        while connection.state != .closed && !connection.peerClosed {
            let space = connection.readSpace(limit: bufferLimit)
            if space.count == 0 {
                connection.readPaused = true
                return
            }
            let n = connection.transport.read(into: space)
            if n > 0 {
                if connection.state == .reading && connection.bufferedCount == 0 {
                    connection.readStartedAt = now
                }
                connection.didRead(n)
                // A short read drained the socket; a new edge reports anything that arrives later.
                if n < space.count && !toEnd { return }
            } else if n == 0 {
                connection.peerClosed = true
                // Before its response starts, a client that sent FIN has given up (as nginx takes it): the
                // handler's work is wasted and the descriptor would sit in CLOSE_WAIT until it answered.
                if (connection.state == .reading && connection.bufferedCount == 0) || connection.state == .handling {
                    close(connection)
                }
                return
            } else if n == -Int(EAGAIN) || n == -Int(EWOULDBLOCK) {
                return
            } else {
                close(connection)
                return
            }
        }
    }

    private func discardInput(_ connection: Connection) {
        while true {
            let n = connection.transport.read(into: discard)
            if n > 0 { continue }
            if n == -Int(EAGAIN) || n == -Int(EWOULDBLOCK) { return }
            close(connection)
            return
        }
    }

    /// Parses and dispatches buffered requests one at a time, while the connection is free for the next.
    private func process(_ connection: Connection) {
        // A handler answering synchronously lands here again; the outer call carries on instead.
        guard !connection.inProcess else { return }
        connection.inProcess = true
        defer { connection.inProcess = false }
        while connection.state == .reading {
            if connection.readPaused {
                connection.readPaused = false
                readAvailable(connection)
                if connection.state != .reading { return }
            }
            if connection.bufferedCount < connection.needBytes {
                if connection.peerClosed { close(connection) }
                return
            }
            switch RequestParser.parse(connection.buffered, limits: limits, scanFrom: connection.scanned) {
            case .incomplete(let scanned, let needBytes):
                connection.scanned = scanned
                connection.needBytes = needBytes
            case .invalid(let error):
                respondWithError(connection, error)
                return
            case .complete(let parsed):
                connection.consume(parsed.consumed)
                connection.scanned = 0
                connection.needBytes = 1
                dispatch(connection, parsed)
            }
        }
    }

    private func dispatch(_ connection: Connection, _ parsed: ParsedRequest) {
        connection.state = .handling
        connection.keepAlive = parsed.keepAlive && !draining
        connection.isHead = parsed.isHead
        connection.version = parsed.request.version
        connection.servedAny = true
        nextToken += 1
        let responder = connection.responder(for: nextToken, loop: handle)
        handler.handle(parsed.request, responder: responder)
        // The FIN came with the request: no later edge reports it, so the answer-pending check is here.
        if connection.peerClosed && connection.state == .handling {
            close(connection)
        }
    }

    private func respondWithError(_ connection: Connection, _ error: ParseError) {
        connection.state = .handling
        connection.keepAlive = false
        connection.isHead = false
        connection.version = .http11
        connection.lingerOnClose = true
        let body = Array(error.message.utf8) + [0x0A]
        send(
            connection, status: error.status, headers: [("Content-Type", "text/plain; charset=utf-8")],
            contentLength: body.count, body: [body], kept: nil)
        finishResponse(connection)
    }

    // MARK: - Responding

    /// A responder call, on this loop's thread; stale or out-of-order calls are dropped.
    func deliver(fd: Int32, token: UInt64, _ call: ResponderCall) {
        guard fd >= 0, Int(fd) < connections.count, let connection = connections[Int(fd)], connection.token == token
        else { return }
        switch call {
        case .respond(let response):
            guard connection.state == .handling else { return }
            if response.closeConnection { connection.closeAfter = true }
            var length = response.kept?.count ?? 0
            for chunk in response.body { length += chunk.count }
            send(
                connection, status: response.status, headers: response.headers, contentLength: length,
                body: response.body, kept: response.kept)
            finishResponse(connection)
        case .head(let status, let headers, let contentLength):
            guard connection.state == .handling else { return }
            connection.state = .streaming
            connection.streamRemaining = contentLength
            send(connection, status: status, headers: headers, contentLength: contentLength, body: [], kept: nil)
        case .body(let bytes, let whenWritten):
            guard connection.state == .streaming else { return }
            var chunk = connection.isHead ? [] : bytes
            if chunk.count > connection.streamRemaining {
                // More than announced would be read as the start of the next response.
                chunk = Array(chunk.prefix(connection.streamRemaining))
                connection.closeAfter = true
            }
            if let whenWritten {
                if let earlier = connection.whenWritten {
                    connection.whenWritten = { @Sendable in
                        earlier()
                        whenWritten()
                    }
                } else {
                    connection.whenWritten = whenWritten
                }
            } else if chunk.isEmpty {
                return
            }
            if !chunk.isEmpty {
                connection.streamRemaining -= chunk.count
                if !connection.hasPending { connection.lastWriteProgress = now }
                connection.pending.append(chunk)
            }
            flush(connection, prefix: UnsafeRawBufferPointer(start: nil, count: 0))
        case .end:
            guard connection.state == .streaming else { return }
            connection.whenWritten = nil
            if connection.streamRemaining > 0 && !connection.isHead {
                // Fewer bytes than announced: only closing tells the client the body is short.
                connection.closeAfter = true
            }
            finishResponse(connection)
        }
    }

    private func send(
        _ connection: Connection, status: Int, headers: [(name: String, value: String)], contentLength: Int,
        body: [[UInt8]],
        kept: KeptBody?
    ) {
        let closing = connection.closeAfter || !connection.keepAlive || draining
        let header: ConnectionHeader = closing ? .close : (connection.version == .http10 ? .keepAlive : .omitted)
        head.build(
            status: status, headers: headers, contentLength: contentLength, date: date.bytes, connection: header,
            extra: core.extraHeaders?.bytes ?? [])
        if closing { connection.closeAfter = true }
        let hasBody = !connection.isHead && status >= 200 && status != 204 && status != 304
        if hasBody {
            for chunk in body where !chunk.isEmpty {
                connection.pending.append(chunk)
            }
            if let kept, kept.count > 0 {
                connection.kept = kept
                connection.keptOffset = 0
            }
        }
        connection.lastWriteProgress = now
        // The head stays in the loop's buffer unless the socket takes less than all of it. The state is not
        // `.draining` yet, so this flush cannot start the next request and rebuild `head` while it is borrowed.
        head.bytes.withUnsafeBytes { flush(connection, prefix: $0) }
    }

    /// Writes `prefix`, the queued chunks, then the kept body, until done or the socket is full: the chunks
    /// with gathered transport writes, the kept body with sendfile where `sendsFile` says so (else it is the
    /// last iovec of the gathered write). Once all is written, the next request starts, or a streamed
    /// response's producer is told (`HTTPResponder.writeBody(_:whenWritten:)`).
    private func flush(_ connection: Connection, prefix: UnsafeRawBufferPointer) {
        var prefixWritten = 0
        let transport = connection.transport
        while prefixWritten < prefix.count || connection.hasPending {
            let result: Int
            let attempted: Int
            if prefixWritten == prefix.count && !connection.hasPendingChunks, let kept = connection.kept,
                Self.sendsFile(kept, transport)
            {
                attempted = kept.count - connection.keptOffset
                result = transport.sendFile(kept.fd, offset: connection.keptOffset, count: attempted)
                // Nothing sent of a body that has bytes left: the memfd cannot end early, so it is an error.
                if result == 0 {
                    close(connection)
                    return
                }
            } else {
                (result, attempted) = gatherWrite(
                    connection, prefix: UnsafeRawBufferPointer(rebasing: prefix[prefixWritten...]))
            }
            if result >= 0 {
                connection.lastWriteProgress = now
                let fromPrefix = min(result, prefix.count - prefixWritten)
                prefixWritten += fromPrefix
                connection.markWritten(result - fromPrefix)
                // A short write means the socket buffer is full; EPOLLOUT reports when it drains.
                if result < attempted { break }
            } else if result == -Int(EINTR) {
                continue
            } else if result == -Int(EAGAIN) || result == -Int(EWOULDBLOCK) {
                break
            } else {
                // EPIPE, ECONNRESET: the client went away mid-response.
                close(connection)
                return
            }
        }
        if prefixWritten < prefix.count {
            connection.pending.insert(Array(prefix[prefixWritten...]), at: connection.pendingIndex)
        }
        if !connection.hasPending {
            if connection.state == .draining {
                completeCycle(connection)
            } else if let whenWritten = connection.whenWritten {
                connection.whenWritten = nil
                whenWritten()
            }
        }
    }

    /// Below this a kept body goes out with the head in one gathered write, read from its mapping: for a
    /// small body the copy costs less than sendfile's second call and page handling (measured at 20 KB,
    /// sendfile served 0.4–0.7x the requests of the copy; at 85 KB it served about twice as many).
    static let sendFileFrom = 64 * 1024

    /// A kept body goes out with sendfile: on a plain socket, from `sendFileFrom` bytes on.
    private static func sendsFile(_ kept: KeptBody, _ transport: ConnectionTransport) -> Bool {
        transport.sendsFiles && kept.count >= sendFileFrom
    }

    /// One transport write over the prefix, up to `iovCapacity` queued chunks and, when they all fit and the
    /// kept body is not sent as a file, the kept body's mapping; each chunk is pinned by a nested
    /// `withUnsafeBytes` so no pointer outlives its array. Returns bytes written or -errno, and bytes attempted.
    private func gatherWrite(_ connection: Connection, prefix: UnsafeRawBufferPointer) -> (Int, Int) {
        var used = 0
        var attempted = 0
        if let base = prefix.baseAddress, prefix.count > 0 {
            iov[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: prefix.count)
            used = 1
            attempted = prefix.count
        }
        let first = connection.pendingIndex
        let last = min(connection.pending.count, first + iovCapacity - 1 - used)
        let transport = connection.transport
        let iov = self.iov
        let firstOffset = connection.pendingOffset
        // The kept body follows: as a file once these bytes are out, or read from its mapping in this write.
        let kept = last == connection.pending.count ? connection.kept : nil
        let viaFile = kept.map { Self.sendsFile($0, transport) } ?? false
        let more = viaFile

        func pin(_ index: Int, _ used: Int, _ attempted: Int) -> (Int, Int) {
            if index == last {
                var used = used
                var attempted = attempted
                // `connection.kept` holds the body (and so its mapping) until it is written.
                if let kept, !viaFile, let bytes = kept.bytes {
                    let skip = connection.keptOffset
                    iov[used] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: bytes + skip), iov_len: kept.count - skip)
                    used += 1
                    attempted += kept.count - skip
                }
                guard used > 0 else { return (0, 0) }
                while true {
                    let result = transport.write(iov, count: used, total: attempted, more: more)
                    if result.written != -Int(EINTR) { return result }
                }
            }
            return connection.pending[index].withUnsafeBytes { bytes in
                let skip = index == first ? firstOffset : 0
                iov[used] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + skip), iov_len: bytes.count - skip)
                return pin(index + 1, used + 1, attempted + bytes.count - skip)
            }
        }
        return pin(first, used, attempted)
    }

    private func finishResponse(_ connection: Connection) {
        guard connection.state != .closed else { return }
        connection.state = .draining
        if !connection.hasPending {
            completeCycle(connection)
        }
    }

    /// The response is written: close, or go back to reading the next request.
    private func completeCycle(_ connection: Connection) {
        if connection.closeAfter || draining {
            closeAfterResponse(connection)
            return
        }
        connection.state = .reading
        if connection.bufferedCount > 0 {
            connection.readStartedAt = now
        } else {
            connection.idleSince = now
        }
        process(connection)
    }

    /// After an error the client may still be sending; closing with unread input would reset the connection
    /// and could destroy the error response, so shut down our side and drain for a moment first.
    private func closeAfterResponse(_ connection: Connection) {
        guard connection.lingerOnClose || connection.bufferedCount > 0, !connection.peerClosed, !draining else {
            close(connection)
            return
        }
        connection.transport.shutdownWrite()
        connection.state = .lingering
        connection.lingerDeadline = now + lingerTimeout
        connection.consume(connection.bufferedCount)
        discardInput(connection)
    }

    /// `reset` drops unsent data at once instead of leaving the kernel to push it to a client that stopped reading.
    private func close(_ connection: Connection, reset: Bool = false) {
        guard connection.state != .closed else { return }
        connection.state = .closed
        // Before the descriptor goes: whoever sees the close from outside must find the flag set.
        connection.responder?.closed.store(true, ordering: .relaxed)
        if reset {
            var abortive = linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
        }
        connection.transport.release()
        Glibc.close(connection.fd)
        connections[Int(connection.fd)] = nil
        connection.releaseBuffers()
        openCount -= 1
        handle.load.subtract(1, ordering: .relaxed)
    }

    // MARK: - Timeouts and shutdown

    /// Stalled clients cost nothing between sweeps; a sweep closes whoever is over its deadline.
    private func sweep() {
        for index in connections.indices {
            guard let connection = connections[index] else { continue }
            switch connection.state {
            case .reading:
                if connection.bufferedCount == 0 && connection.servedAny {
                    if now - connection.idleSince >= idleTimeout { close(connection) }
                } else if now - connection.readStartedAt >= readTimeout {
                    close(connection)
                }
            case .handling, .streaming, .draining:
                if connection.hasPending && now - connection.lastWriteProgress >= writeTimeout {
                    close(connection, reset: true)
                }
            case .lingering:
                if now >= connection.lingerDeadline { close(connection) }
            case .closed:
                break
            }
        }
    }

    /// Stop accepting, drop connections with no request in flight, and let the rest finish their responses.
    private func enterDrain() {
        draining = true
        drainDeadline = core.drainDeadline.load(ordering: .relaxed)
        unwatchListener()
        listenerResumeAt = 0
        for index in connections.indices {
            guard let connection = connections[index] else { continue }
            switch connection.state {
            case .reading, .lingering:
                close(connection)
            case .handling, .streaming, .draining:
                connection.closeAfter = true
            case .closed:
                break
            }
        }
    }
}
