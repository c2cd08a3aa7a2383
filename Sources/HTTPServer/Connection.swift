import Glibc

/// One client connection, owned by one event loop and touched only on its thread.
final class Connection {
    enum State {
        /// Waiting for, or parsing, a request.
        case reading
        /// The handler has the request and has not answered yet.
        case handling
        /// A streamed response: head sent, body chunks still coming.
        case streaming
        /// The response is fully queued; waiting for it to be written before the next request.
        case draining
        /// Our side is shut down after an error; reading and discarding so the close does not reset the response.
        case lingering
        case closed
    }

    let fd: Int32
    let peer: PeerAddress
    let transport: ConnectionTransport
    /// Tells apart connections that reuse the same fd, for epoll events that arrive late.
    let serial: UInt32
    var state = State.reading

    // Input: one growable byte buffer, allocated on the first read.
    private var storage: UnsafeMutablePointer<UInt8>?
    private var capacity = 0
    private var start = 0
    private var end = 0
    /// Parser resume point and the buffer size at which parsing again can make progress.
    var scanned = 0
    var needBytes = 1
    var readPaused = false
    var peerClosed = false

    // The request in flight.
    var token: UInt64 = 0
    var keepAlive = true
    var isHead = false
    var version = HTTPVersion.http11
    var closeAfter = false
    var lingerOnClose = false
    var streamRemaining = 0
    var servedAny = false
    var inProcess = false
    var responder: HTTPResponder?

    // Output: chunks not yet written, consumed from `pendingIndex` so the array keeps its storage.
    var pending: [[UInt8]] = []
    var pendingIndex = 0
    var pendingOffset = 0
    /// Written after `pending`: a kept body, sent from its memfd (plain) or its mapping (TLS), and how far.
    var kept: KeptBody?
    var keptOffset = 0
    /// A streamed response's producer, waiting for everything queued to be written (`writeBody(_:whenWritten:)`).
    var whenWritten: (@Sendable () -> Void)?

    // Monotonic nanoseconds for the timeouts.
    var readStartedAt: Int64
    var idleSince: Int64
    var lastWriteProgress: Int64 = 0
    var lingerDeadline: Int64 = 0

    init(fd: Int32, peer: PeerAddress, transport: ConnectionTransport, serial: UInt32, now: Int64) {
        self.fd = fd
        self.peer = peer
        self.transport = transport
        self.serial = serial
        readStartedAt = now
        idleSince = now
    }

    deinit {
        storage?.deallocate()
    }

    var bufferedCount: Int { end - start }
    var hasPending: Bool { pendingIndex < pending.count || kept != nil }
    /// Chunks (the head among them) are still queued before the kept body.
    var hasPendingChunks: Bool { pendingIndex < pending.count }

    var buffered: UnsafeRawBufferPointer {
        guard let storage else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: storage + start, count: end - start)
    }

    func consume(_ count: Int) {
        start += count
        if start >= end {
            start = 0
            end = 0
        }
    }

    /// Free space after the buffered bytes, compacting or growing (up to `limit` buffered bytes) as needed.
    func readSpace(limit: Int) -> UnsafeMutableRawBufferPointer {
        if storage == nil {
            capacity = min(4096, max(limit, 1))
            storage = .allocate(capacity: capacity)
        }
        if end == capacity && start > 0 {
            memmove(storage!, storage! + start, end - start)
            end -= start
            start = 0
        }
        if end == capacity && capacity < limit {
            let grown = min(capacity * 2, limit)
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            bigger.update(from: storage! + start, count: end - start)
            storage!.deallocate()
            storage = bigger
            end -= start
            start = 0
            capacity = grown
        }
        let room = min(capacity - end, limit - (end - start))
        return UnsafeMutableRawBufferPointer(start: storage! + end, count: max(0, room))
    }

    func didRead(_ count: Int) {
        end += count
    }

    func markWritten(_ count: Int) {
        var remaining = count
        while remaining > 0 && pendingIndex < pending.count {
            let left = pending[pendingIndex].count - pendingOffset
            if remaining >= left {
                remaining -= left
                pendingIndex += 1
                pendingOffset = 0
            } else {
                pendingOffset += remaining
                remaining = 0
            }
        }
        if pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            pendingOffset = 0
        }
        if remaining > 0, let body = kept {
            keptOffset += remaining
            if keptOffset >= body.count {
                kept = nil
                keptOffset = 0
            }
        }
    }

    /// The responder for a new request: the previous one is reused when the handler kept no reference to it.
    func responder(for token: UInt64, loop: LoopHandle) -> HTTPResponder {
        self.token = token
        if responder != nil, isKnownUniquelyReferenced(&responder!) {
            responder!.token.store(token, ordering: .relaxed)
            responder!.droppable.store(false, ordering: .relaxed)
            return responder!
        }
        let fresh = HTTPResponder(loop: loop, fd: fd, peer: peer, token: token)
        responder = fresh
        return fresh
    }

    func releaseBuffers() {
        pending.removeAll()
        pendingIndex = 0
        pendingOffset = 0
        kept = nil
        keptOffset = 0
        whenWritten = nil
        responder = nil
    }
}
