import Glibc
import Locking
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
        #expect(
            waitUntil(seconds: 10) { serverSockets(port: server.port, state: .closeWait) == 0 },
            "\(serverSockets(port: server.port, state: .closeWait)) connections held after their clients left")
        let client = try TestClient(port: server.port)
        client.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
    }

    /// A client that sends FIN before its answer has left (as nginx takes it): the server closes at once
    /// instead of sitting in CLOSE_WAIT until the handler answers, and tells the handler, so a queued
    /// password check is not run for nobody. The FIN after the request, and with it.
    @Test func aFINBeforeTheAnswerClosesAndTellsTheHandler() throws {
        let held = Locked<[HTTPResponder]>([])
        let server = try startServer(handler: { _, responder in held.withLock { $0.append(responder) } })
        defer { server.shutdown(gracePeriod: .zero) }
        var clients: [TestClient] = []
        for together in [false, true, false, true] {
            let client = try TestClient(port: server.port)
            client.send(request("/slow"))
            if !together {
                let count = clients.count + 1
                #expect(waitUntil(seconds: 5) { held.withLock { $0.count } == count })
            }
            Glibc.shutdown(client.fd, Int32(SHUT_WR))
            clients.append(client)
        }
        #expect(waitUntil(seconds: 5) { held.withLock { $0.count } == 4 })
        for client in clients {
            #expect(client.waitForClose(), "a client that left is still connected")
        }
        #expect(serverSockets(port: server.port, state: .closeWait, peers: clients.map(\.localPort)) == 0)
        #expect(held.withLock { $0.allSatisfy(\.isConnectionClosed) })
        // A request still waiting on a connection that is open is not reported closed.
        let open = try TestClient(port: server.port)
        open.send(request("/slow"))
        #expect(waitUntil(seconds: 5) { held.withLock { $0.count } == 5 })
        #expect(held.withLock { !$0[4].isConnectionClosed })
    }
}
