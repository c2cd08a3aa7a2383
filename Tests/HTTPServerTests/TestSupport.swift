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

struct TestResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking loopback client on a raw socket; every read gives up after `timeout` seconds so no test can hang.
final class TestClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, timeout: Double = 5) throws {
        fd = try LoopbackHTTP.connect(port: port, timeoutSeconds: timeout)
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
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Reads more into the buffer; false on EOF, error or timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// One response; nil if the connection closed or timed out first. `head: true` for a HEAD request.
    func readResponse(head: Bool = false) -> TestResponse? {
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count >= 4 {
                for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
                    headEnd = i + 4
                    break
                }
            }
            if headEnd == nil && !fill() { return nil }
        }
        let lines = String(decoding: buffer[0..<headEnd! - 4], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingPrefix(" ").description
        }
        let length = head ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < headEnd! + length {
            if !fill() { return nil }
        }
        let body = Array(buffer[headEnd!..<headEnd! + length])
        buffer.removeFirst(headEnd! + length)
        return TestResponse(status: status, headers: headers, body: body)
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
func later(_ delay: Double, _ body: @escaping @Sendable () -> Void) {
    DispatchQueue.global().asyncAfter(deadline: .now() + delay, execute: body)
}
