import Dispatch
import Glibc
import HTTPClient
import Locking
import TestSupport
import Testing

extension HTTPClientTests {
    @Suite struct Failures {
        @Test func tooLargeByContentLengthFailsWithoutReadingTheBody() throws {
            // The server sends no body at all: waiting for it would end in a timeout instead.
            let server = try ScriptedServer([
                .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n"), .holdOpen,
            ])
            let error = failure(
                of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5), maxBodyBytes: 1000))
            server.finish()
            #expect(error == .tooLarge(limit: 1000))
            #expect(error?.kind == "decode")
        }

        @Test func tooLargeByChunkedStream() throws {
            let chunk = "64\r\n" + String(repeating: "z", count: 100) + "\r\n"
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                .send(String(repeating: chunk, count: 50)),
                .holdOpen,
            ])
            let error = failure(
                of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5), maxBodyBytes: 1000))
            server.finish()
            #expect(error == .tooLarge(limit: 1000))
        }

        @Test func tooLargeWhileReadingUntilClose() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "w", count: 5000)),
                .holdOpen,
            ])
            let error = failure(
                of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5), maxBodyBytes: 1000))
            server.finish()
            #expect(error == .tooLarge(limit: 1000))
        }

        @Test(arguments: [
            ("truncated Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b"),
            ("truncated chunked body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nshort"),
            ("garbage status line", "SSH-2.0-OpenSSH_9.2\r\n\r\n"),
            ("status without code", "HTTP/1.1 OK\r\n\r\n"),
            ("bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            (
                "chunk longer than its size",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n"
            ),
            ("conflicting Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc"),
            ("header line without colon", "HTTP/1.1 200 OK\r\nnot a header\r\n\r\n"),
            ("closed inside the head", "HTTP/1.1 200 OK\r\nContent-"),
            ("closed without a response", ""),
            (
                "oversized head",
                "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: 0123456789abcdef\r\n", count: 3000) + "\r\n"
            ),
        ])
        func malformedResponses(name: String, reply: String) throws {
            let server = try ScriptedServer([.readRequest, .send(reply)])
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            guard case .malformed = error else {
                Issue.record("\(name): expected .malformed, got \(String(describing: error))")
                return
            }
            #expect(error?.kind == "decode")
        }

        @Test func connectionRefused() throws {
            let port = try LoopbackHTTP.closedPort()
            let error = failure(of: HTTPClientRequest(url: try url(port), timeout: .seconds(5)))
            guard case .connect(let reason) = error else {
                Issue.record("expected .connect, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("127.0.0.1:\(port)"))
            #expect(reason.lowercased().contains("refused"))
            #expect(error?.kind == "connect")
        }

        @Test func unresolvableName() throws {
            // getaddrinfo cannot be interrupted, so the test bounds itself by waiting on another thread.
            // A 64-character label is refused by glibc before any query is sent: a plain `.invalid`
            // name would be asked of the configured nameserver, which is not on loopback.
            let host = String(repeating: "n", count: 64) + ".invalid"
            let request = HTTPClientRequest(
                url: try RequestURL(parsing: "http://\(host)/data?appid=\(secret)"), timeout: .seconds(2))
            let outcome = Locked<HTTPClientError?>(nil)
            let finished = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                let error = failure(of: request)
                outcome.withLock { $0 = error }
                finished.signal()
            }
            guard finished.wait(timeout: .now() + .seconds(30)) == .success else {
                Issue.record("the resolver did not answer within 30 s; cannot check the .dns mapping here")
                return
            }
            let error = outcome.withLock { $0 }
            guard case .dns(let failedHost, _) = error else {
                Issue.record("expected .dns, got \(String(describing: error))")
                return
            }
            #expect(failedHost == host)
            #expect(error?.kind == "dns")
        }
    }
}
