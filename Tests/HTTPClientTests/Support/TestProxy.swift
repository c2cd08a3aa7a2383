import Dispatch
import Glibc
import Locking
import Synchronization
import TestSupport

/// A forward proxy on loopback, written here rather than taken from Debian (tinyproxy, squid)
/// so each test can make it misbehave on cue: refuse, demand credentials, die mid-tunnel.
/// CONNECT opens a tunnel to 127.0.0.1 at the port asked for; an absolute-form GET (an
/// http:// URL through the proxy) is answered by the proxy itself, echoing what it got.
final class TestProxy: Sendable {
    enum Mode: Sendable {
        case tunnel
        /// Answers CONNECT with this status and closes.
        case refuse(Int)
        /// Accepts the tunnel, forwards this many bytes from the origin, then closes both sides.
        case dieAfter(bytes: Int)
    }

    let port: UInt16
    private let listener: Int32
    private let mode: Mode
    /// `Basic ...` that must come as Proxy-Authorization, or nil for none.
    private let requiredAuthorization: String?
    private let seen = Locked((heads: [String](), tunnels: 0))
    private let stopped = Atomic<Bool>(false)

    init(mode: Mode = .tunnel, requiredAuthorization: String? = nil) throws {
        self.mode = mode
        self.requiredAuthorization = requiredAuthorization
        (listener, port) = try LoopbackHTTP.listen(backlog: 64)
        acceptConnections(
            on: listener, until: { [self] in stopped.load(ordering: .relaxed) }, serve: { [self] fd in handle(fd) })
    }

    deinit { stopped.store(true, ordering: .relaxed) }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Request heads received, in order.
    var heads: [String] { seen.withLock { $0.heads } }
    /// Tunnels opened to an origin.
    var tunnels: Int { seen.withLock { $0.tunnels } }

    private func handle(_ client: Int32) {
        var head: [UInt8] = []
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            var entry = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 5000) == 1 else { return }
            var byte: UInt8 = 0
            guard recv(client, &byte, 1, 0) == 1 else { return }
            head.append(byte)
        }
        let text = String(decoding: head, as: UTF8.self)
        seen.withLock { $0.heads.append(text) }
        let lines = text.split(separator: "\r\n")
        if let required = requiredAuthorization,
            !lines.contains(where: { $0.lowercased().hasPrefix("proxy-authorization:") && $0.hasSuffix(" \(required)") }
            )
        {
            _ = sendAll(
                client,
                Array(
                    """
                    HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\
                    Content-Length: 0\r\n\r\n
                    """
                    .utf8))
            return
        }
        let requestLine = lines.first.map(String.init) ?? ""
        guard requestLine.hasPrefix("CONNECT ") else {
            // An http:// URL through the proxy: answer it here, saying what came.
            let body = requestLine
            _ = sendAll(client, Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
            return
        }
        if case .refuse(let status) = mode {
            _ = sendAll(client, Array("HTTP/1.1 \(status) Refused\r\nContent-Length: 9\r\n\r\nforbidden".utf8))
            return
        }
        let target = requestLine.split(separator: " ")[1]
        guard let port = target.split(separator: ":").last.flatMap({ UInt16($0) }),
            let origin = try? LoopbackHTTP.connect(port: port)
        else {
            _ = sendAll(client, Array("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n".utf8))
            return
        }
        defer { close(origin) }
        seen.withLock { $0.tunnels += 1 }
        guard sendAll(client, Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)) else { return }
        var budget = if case .dieAfter(let bytes) = mode { bytes } else { Int.max }
        splice(client, origin, originBudget: &budget)
    }

    /// Copies both ways until either side closes, or `originBudget` bytes came from the origin.
    private func splice(_ client: Int32, _ origin: Int32, originBudget: inout Int) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            var entries = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: origin, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&entries, 2, 5000) > 0 else { return }
            for (index, entry) in entries.enumerated() where entry.revents != 0 {
                let from = index == 0 ? client : origin
                let to = index == 0 ? origin : client
                var n = recv(from, &buffer, buffer.count, 0)
                guard n > 0 else { return }
                if from == origin {
                    n = min(n, originBudget)
                    originBudget -= n
                }
                guard sendAll(to, Array(buffer[..<n])) else { return }
                if originBudget <= 0 { return }
            }
        }
    }
}
