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
    let core: ServerCore
    let handler: any HTTPHandler
    let limits: ParserLimits
    let epollFD: Int32
    let listenFDs: [Int32]

    /// Indexed by fd: a lookup per event without hashing.
    var connections: [Connection?] = []
    var openCount = 0
    var nextSerial: UInt32 = 0
    var nextToken: UInt64 = 0
    var now: Int64 = 0

    var head = ResponseHeadWriter()
    var date = HTTPDate()
    private var inboxSpare: [LoopHandle.Message] = []
    let events: UnsafeMutablePointer<EpollEvent>
    private let eventCapacity: Int32 = 256
    let iov: UnsafeMutablePointer<iovec>
    let iovCapacity = 64
    let discard: UnsafeMutableRawBufferPointer
    /// Where a TLS write gathers up to one record's worth of plaintext; shared by the loop's connections.
    let tlsScratch: UnsafeMutableRawBufferPointer

    var listenerWatched = false
    var listenerResumeAt: Int64 = 0
    var acceptBackoff: Int64 = 0
    var draining = false
    var drainDeadline: Int64 = 0

    // Timeouts in nanoseconds.
    let readTimeout: Int64
    let idleTimeout: Int64
    let writeTimeout: Int64
    let limitQuietPeriod: Int64
    let lingerTimeout: Int64
    private let sweepInterval: Int64
    private var nextSweep: Int64 = 0
    /// Enough for the largest acceptable request, so a full buffer in `.reading` always parses to a result.
    let bufferLimit: Int

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
}
