import Dispatch
import Glibc
import TestSupport

@testable import HTTPServer

/// A handler built from a closure, so each test states its behaviour inline.
struct ClosureHandler: HTTPHandler {
    let body: @Sendable (HTTPRequest, HTTPResponder) -> Void
    func handle(_ request: HTTPRequest, responder: HTTPResponder) { body(request, responder) }
}

/// Answers "METHOD path?query body-bytes" so tests can see what the server parsed.
let echo: @Sendable (HTTPRequest, HTTPResponder) -> Void = { request, responder in
    let text = "\(request.method) \(request.path)?\(request.query) \(request.body.count)"
    responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: [Array(text.utf8)]))
}

/// A started server on an ephemeral loopback port with two loops; short timeouts are set per test.
func startServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void = echo
) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.eventLoops = 2
    configure(&configuration)
    let server = try HTTPServer(configuration: configuration, handler: ClosureHandler(body: handler))
    server.start()
    return server
}

/// A blocking loopback client on a raw socket; every read gives up after `timeout` seconds so no test can hang.
/// The default is a ceiling for a response on a busy machine under ThreadSanitizer, not a timing: no
/// test waits it out on success.
final class TestClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, host: String = "127.0.0.1", maxSegment: Int32? = nil, timeout: Double = 30) throws {
        fd = try LoopbackHTTP.connect(port: port, host: host, maxSegment: maxSegment, timeoutSeconds: timeout)
    }

    /// This client's own port (the server's socket has it as its remote port).
    var localPort: UInt16 {
        var address = sockaddr_in6()
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        // sin_port and sin6_port sit at the same offset, in network byte order.
        return UInt16(bigEndian: address.sin6_port)
    }

    deinit { close(fd) }

    /// Asks the kernel to reset rather than linger, like a client that crashes.
    func abort() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool { (try? LoopbackHTTP.send(fd, bytes)) != nil }

    /// One response; nil if the connection closed or timed out first, or what came is not HTTP.
    /// `head: true` for a HEAD request.
    func readResponse(head: Bool = false) -> LoopbackResponse? {
        while true {
            do {
                if let response = try LoopbackResponse.take(from: &buffer, head: head) { return response }
            } catch {
                return nil
            }
            if !LoopbackHTTP.receive(fd, into: &buffer) { return nil }
        }
    }

    /// True when the server closed the connection (EOF or reset) with nothing more to read before the timeout.
    func waitForClose() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { continue }
            if n == 0 { return true }
            return errno == ECONNRESET
        }
    }

    var hasBufferedBytes: Bool { !buffer.isEmpty }
}

func request(_ path: String = "/", method: String = "GET", extra: String = "") -> String {
    "\(method) \(path) HTTP/1.1\r\nHost: test\r\n\(extra)\r\n"
}

func seconds(since start: Int64) -> Double {
    Double(monotonicNow() - start) / 1e9
}

/// Runs `body` on another thread after `delay` seconds, the way a slow handler would answer.
/// On a queue of its own: the global queue does not grow past the cores, so CPU-bound tests running
/// beside (a sanitizer's run on two shared cores) can hold a 50 ms answer back past the client's 5 s
/// timeout; a queue of its own gets a thread of its own.
private let laterQueue = DispatchQueue(label: "HTTPServerTests.later")

func later(_ delay: Double, _ body: @escaping @Sendable () -> Void) {
    laterQueue.asyncAfter(deadline: .now() + delay, execute: body)
}

/// TCP states as /proc/net/tcp writes them.
enum TCPState: String {
    case established = "01"
    case closeWait = "08"
}

/// Server-side sockets on 127.0.0.1:`port` in `state`, from /proc/net/tcp: what the server
/// holds, seen from outside it. With `peers` (the clients' own ports, `TestClient.localPort`), only
/// the connections of those clients: another test's server may have had the same port number
/// earlier and still hold connections on it, since every test runs in this one process.
func serverSockets(port: UInt16, state: TCPState, peers: [UInt16]? = nil) -> Int {
    func hex(_ port: UInt16) -> String {
        let digits = String(port, radix: 16, uppercase: true)
        return ":" + String(repeating: "0", count: 4 - digits.count) + digits
    }
    // Whole addresses, 127.0.0.1 at both ends (the servers here listen there): the same port numbers
    // can be in use at once on ::1 by other tests' servers and clients (Linux shares an ephemeral
    // port between connections to different destinations), which counted 7 sockets for 3 once.
    let loopback = "0100007F"
    let local = loopback + hex(port)
    let remotes = peers.map { Set($0.map { loopback + hex($0) }) }
    // Distinct peers, not lines: the kernel writes /proc/net/tcp a chunk per read, and a socket that
    // moves in the table between two reads is listed twice (4 sockets counted for 3, under load).
    var seen = Set<Substring>()
    guard let text = try? readFile("/proc/net/tcp") else { return 0 }
    for line in String(decoding: text, as: UTF8.self).split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 3, fields[1] == local, fields[3] == state.rawValue else { continue }
        if let remotes, !remotes.contains(String(fields[2])) { continue }
        seen.insert(fields[2])
    }
    return seen.count
}
