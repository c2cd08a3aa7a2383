import Locking

/// An open connection to an origin (or through a proxy to it), used by one request at a time:
/// the pool hands it over under its lock, so it is never shared.
final class Connection: @unchecked Sendable {
    let socket: Socket
    let tls: TLSStream?
    var idleSince = ContinuousClock.now

    init(socket: Socket, tls: TLSStream?) {
        self.socket = socket
        self.tls = tls
    }

    var stream: any ByteStream { tls ?? socket }
}

/// Keep-alive connections waiting for their next request, by route, newest first, and the TLS
/// session last seen on each route for resumption. Closing is releasing: a connection dropped
/// from the pool closes its socket.
final class ConnectionPool: Sendable {
    private struct State {
        var idle: [String: [Connection]] = [:]
        var sessions: [String: TLSSession] = [:]
    }

    /// Idle connections kept per route; 0 turns reuse off.
    let maxIdle: Int
    let idleTimeout: Duration
    private let state = Locked(State())

    init(maxIdle: Int, idleTimeout: Duration) {
        self.maxIdle = max(0, maxIdle)
        self.idleTimeout = idleTimeout
    }

    /// The most recently used idle connection that is still fit to carry a request. One the server
    /// closed (or sent something unasked on), or idle longer than `idleTimeout`, is closed instead.
    func take(_ route: String) -> Connection? {
        while true {
            let candidate = state.withLock { $0.idle[route]?.popLast() }
            guard let candidate else { return nil }
            // Checked outside the lock: a poll(2) per candidate is cheap but not free.
            guard ContinuousClock.now - candidate.idleSince < idleTimeout else { continue }
            let usable = candidate.tls.map(\.isUsableAfterIdle) ?? !candidate.socket.isReadableOrClosed
            if usable { return candidate }
        }
    }

    /// Keeps `connection` for the next request on `route`; beyond `maxIdle` the oldest one closes.
    func put(_ connection: Connection, route: String) {
        guard maxIdle > 0 else { return }
        connection.idleSince = .now
        let evicted = state.withLock { state -> Connection? in
            state.idle[route, default: []].append(connection)
            return state.idle[route]!.count > maxIdle ? state.idle[route]!.removeFirst() : nil
        }
        _ = evicted  // released here, outside the lock
    }

    /// With reuse off (`maxIdle` 0) every connection pays a full handshake, as if new to the origin.
    func session(for route: String) -> TLSSession? {
        maxIdle > 0 ? state.withLock { $0.sessions[route] } : nil
    }

    func keep(_ session: TLSSession, for route: String) {
        guard maxIdle > 0 else { return }
        state.withLock { $0.sessions[route] = session }
    }

    /// Idle connections on every route, for tests and diagnostics.
    var idleCount: Int { state.withLock { $0.idle.values.reduce(0) { $0 + $1.count } } }
}
