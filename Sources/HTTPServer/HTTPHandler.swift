import Synchronization

public protocol HTTPHandler: Sendable {
    /// Called on an event-loop thread: must not block. Slow work (e.g. a simulated delay) responds later through
    /// `responder`.
    func handle(_ request: HTTPRequest, responder: HTTPResponder)
}

/// Given to the handler for each request; may be used synchronously inside `handle` or later from any thread (then the
/// event loop is woken through an eventfd). Calls after the connection is gone are no-ops. Exactly one of:
/// `respond(_:)`, or `writeHead` + any number of `writeBody` + `end()`; calls out of that order are ignored.
public final class HTTPResponder: Sendable {
    private let loop: LoopHandle
    private let fd: Int32
    /// Where the connection comes from (the client's address, or a proxy's in front of it).
    public let peer: PeerAddress
    /// Which request this answers; a stale responder finds a different token on its connection and does nothing.
    let token: Atomic<UInt64>
    /// Set by the event loop when the connection closes: nothing done for this request can reach the client.
    let closed = Atomic<Bool>(false)
    /// Set by the handler for a request that only waits; cleared for each new request on the connection.
    let droppable = Atomic<Bool>(false)

    init(loop: LoopHandle, fd: Int32, peer: PeerAddress, token: UInt64) {
        self.loop = loop
        self.fd = fd
        self.peer = peer
        self.token = Atomic(token)
    }

    /// True once the connection is gone (the client left, or the server dropped it): slow work for
    /// this request, such as a queued password check, can be skipped.
    public var isConnectionClosed: Bool {
        closed.load(ordering: .relaxed)
    }

    /// Says that this request only waits (e.g. for a password check not yet run), so at the connection
    /// limit its connection may be dropped like an idle one. Holds until the next request on the connection.
    public func markDroppable() {
        droppable.store(true, ordering: .relaxed)
    }

    /// Sends a whole response; the server adds Content-Length (the sum of the body chunks), Date and Connection.
    public func respond(_ response: HTTPResponse) {
        submit(.respond(response))
    }

    /// Starts a streamed response of exactly `contentLength` body bytes; bytes beyond it are dropped and
    /// an `end()` before it closes the connection, since the framing cannot be repaired.
    public func writeHead(status: Int, headers: [(name: String, value: String)], contentLength: Int) {
        submit(.head(status: status, headers: headers, contentLength: max(0, contentLength)))
    }

    public func writeBody(_ bytes: [UInt8]) {
        submit(.body(bytes, whenWritten: nil))
    }

    /// `writeBody`, then `whenWritten` once these bytes and all before them are in the socket (for a HEAD
    /// request, at once): a producer that makes its next part only then holds one part per client, however
    /// slowly the client reads. Called on the event loop's thread, so it must not block (hand the work to
    /// a queue), and not at all when the connection closes first (the closure is released then).
    public func writeBody(_ bytes: [UInt8], whenWritten: @escaping @Sendable () -> Void) {
        submit(.body(bytes, whenWritten: whenWritten))
    }

    public func end() {
        submit(.end)
    }

    private func submit(_ call: ResponderCall) {
        loop.submit(fd: fd, token: token.load(ordering: .relaxed), call)
    }
}

/// A responder call carried to the connection's event loop.
enum ResponderCall: Sendable {
    case respond(HTTPResponse)
    case head(status: Int, headers: [(name: String, value: String)], contentLength: Int)
    case body([UInt8], whenWritten: (@Sendable () -> Void)?)
    case end
}
