import Glibc
import TestSupport
import Testing
@testable import HTTPServer

@Suite("HTTPServer peer close")
struct PeerCloseTests {
    /// Server-side sockets on `port` whose peer has closed but which the server still holds
    /// (TCP state CLOSE_WAIT), from /proc/net/tcp: other tests' ports do not count.
    static func closeWaitCount(port: UInt16) -> Int {
        guard let file = fopen("/proc/net/tcp", "r") else { return -1 }
        defer { fclose(file) }
        var count = 0
        var line = [CChar](repeating: 0, count: 512)
        let local = String(format4: port)
        while fgets(&line, Int32(line.count), file) != nil {
            let fields = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.split(separator: " ")
            if fields.count > 3, fields[1].hasSuffix(":" + local), fields[3] == "08" { count += 1 }
        }
        return count
    }

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
        #expect(waitUntil(seconds: 10) { Self.closeWaitCount(port: server.port) == 0 },
                "\(Self.closeWaitCount(port: server.port)) connections held after their clients left")
        let client = try TestClient(port: server.port)
        client.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
    }
}

extension String {
    /// A port as /proc/net/tcp writes it: four upper-case hex digits.
    init(format4 port: UInt16) {
        let hex = String(port, radix: 16, uppercase: true)
        self = String(repeating: "0", count: 4 - hex.count) + hex
    }
}
