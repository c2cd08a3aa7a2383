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
            // Found by the http-response fuzz target: accepted unless the line began the reader's buffer.
            ("header line with an empty name", "HTTP/1.1 200 OK\r\n: value\r\nContent-Length: 0\r\n\r\n"),
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

        /// A chunk-size line is hex digits, then optionally `;` and extensions, then CRLF. Each of these once
        /// reached `Int(_:radix:)` or the reader's ranges: `-b` trapped the whole exporter.
        @Test(arguments: [
            ("-b", "invalid chunk size: the line must start with hex digits"),
            ("-0", "invalid chunk size: the line must start with hex digits"),
            ("+5", "invalid chunk size: the line must start with hex digits"),
            ("0x10", "invalid chunk size: only hex digits, then optionally ';' and extensions"),
            ("1000000000000000", "chunk size larger than 15 hex digits"),
            ("FFFFFFFFFFFFFFFFFFFFFFFF", "chunk size larger than 15 hex digits"),
            ("", "invalid chunk size: the line must start with hex digits"),
            (" 5", "invalid chunk size: the line must start with hex digits"),
            ("5 ", "invalid chunk size: only hex digits, then optionally ';' and extensions"),
            ("5\t", "invalid chunk size: only hex digits, then optionally ';' and extensions"),
            ("5 x", "invalid chunk size: only hex digits, then optionally ';' and extensions"),
            ("5\u{0B}", "invalid chunk size: only hex digits, then optionally ';' and extensions"),
            ("5\n", "chunk line ends in a bare LF, not CRLF"),
            ("5\r\r", "invalid chunk size: only hex digits, then optionally ';' and extensions"),
        ])
        func chunkSizeLinesOutsideTheGrammarAreRefused(line: String, reason: String) throws {
            // Each size line is followed by a CRLF unless it carries its own line end.
            let end = line.hasSuffix("\n") ? "" : "\r\n"
            let reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(line)\(end)hello\r\n0\r\n\r\n"
            let server = try ScriptedServer([.readRequest, .send(reply), .holdOpen])
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(error == .malformed(reason))
            #expect(error?.kind == "decode")
        }

        @Test(arguments: [
            ("5\r\nhelloXY\r\n0\r\n\r\n", "chunk data not followed by CRLF where its size ends"),
            ("5\r\nhello\n0\r\n\r\n", "chunk data not followed by CRLF where its size ends"),
            ("5\r\nhello\r\n0\n\r\n", "chunk line ends in a bare LF, not CRLF"),
            ("5\r\nhello", "connection closed after a chunk"),
            ("5\r\nhello\r\n0\r\nX-Trailer: 1\r\n", "connection closed inside the trailers"),
        ])
        func chunkDataWithoutItsCRLFIsRefused(body: String, reason: String) throws {
            let reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
            let server = try ScriptedServer([.readRequest, .send(reply)])
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(error == .malformed(reason))
        }

        /// The answer that trapped the exporter: the client refuses it and the next request is served.
        @Test func aNegativeChunkSizeLeavesTheClientServing() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-b\r\nhello world\r\n0\r\n\r\n"),
                .holdOpen,
            ])
            let client = HTTPClient()
            #expect(throws: HTTPClientError.malformed("invalid chunk size: the line must start with hex digits")) {
                try client.get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            }
            server.finish()
            let next = try ScriptedServer([
                .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"),
            ])
            let response = try client.get(HTTPClientRequest(url: try url(next.port), timeout: .seconds(5)))
            next.finish()
            #expect(response.body == Array("ok".utf8))
        }

        /// Content-Length is digits only: a sign, a plus or a value past 18 digits is refused.
        @Test(arguments: ["-1", "+5", "0x10", "1e3", "9999999999999999999", "5 5", "", " , 5"])
        func contentLengthOutsideTheGrammarIsRefused(value: String) throws {
            let reply = "HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nhello"
            let server = try ScriptedServer([.readRequest, .send(reply)])
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(error == .malformed("invalid Content-Length"))
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
