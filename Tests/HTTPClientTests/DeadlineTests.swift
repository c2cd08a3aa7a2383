import Glibc
import HTTPClient
import TestSupport
import Testing

extension HTTPClientTests {
    /// The upper bounds here check that the deadline is honoured at all, with a wide margin (a busy
    /// machine under ThreadSanitizer); they are not speed targets.
    @Suite struct Deadlines {
        @Test func serverThatNeverAnswers() throws {
            let server = try ScriptedServer([.readRequest, .holdOpen])
            let start = ContinuousClock.now
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .milliseconds(300)))
            let elapsed = ContinuousClock.now - start
            server.finish()
            #expect(error == .timeout)
            #expect(error?.kind == "timeout")
            #expect(elapsed >= .milliseconds(300))
            #expect(elapsed < .seconds(10))
        }

        @Test func peerThatNeverAccepts() throws {
            // The kernel completes the handshake on the backlog; nobody ever reads or writes.
            let (listener, port) = try LoopbackHTTP.listen(backlog: 4)
            defer { _ = close(listener) }
            let error = failure(of: HTTPClientRequest(url: try url(port), timeout: .milliseconds(200)))
            #expect(error == .timeout)
        }

        @Test func bodyTrickledPastTheDeadline() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"),
                .trickle(String(repeating: "x", count: 100), every: .milliseconds(50)),
            ])
            let start = ContinuousClock.now
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .milliseconds(500)))
            let elapsed = ContinuousClock.now - start
            server.finish()
            #expect(error == .timeout)
            #expect(elapsed < .seconds(10))
        }

        @Test func headerTrickledPastTheDeadline() throws {
            let server = try ScriptedServer([
                .readRequest,
                .trickle("HTTP/1.1 200 OK\r\nX-Slow: " + String(repeating: "y", count: 100), every: .milliseconds(20)),
            ])
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .milliseconds(300)))
            server.finish()
            #expect(error == .timeout)
        }
    }
}
