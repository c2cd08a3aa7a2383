import Glibc
import TestSupport
import Testing
@testable import HTTPServer

@Suite("HTTPServer peer close", .blocking)
struct PeerCloseTests {
    /// Half a request and the FIN arriving together give one edge: the server must still see
    /// the end of stream at once, not hold the descriptor until the read timeout.
    @Test func halfARequestThenACloseIsClosedAtOnce() throws {
        let server = try startServer { $0.readTimeout = .seconds(30) }
        defer { server.shutdown() }
        for _ in 0..<50 {
            let client = try TestClient(port: server.port)
            client.send("GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: half")
            Glibc.shutdown(client.fd, Int32(SHUT_WR))
        }
        #expect(waitUntil(seconds: 10) { serverSockets(port: server.port, state: .closeWait) == 0 },
                "\(serverSockets(port: server.port, state: .closeWait)) connections held after their clients left")
        let client = try TestClient(port: server.port)
        client.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
    }
}
