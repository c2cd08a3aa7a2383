import Dispatch
import TestSupport
import Testing

@testable import HTTPClient

extension HTTPClientTests {
    @Suite struct Pool {
        private func get(
            _ client: HTTPClient, _ port: UInt16, sourceLocation: SourceLocation = #_sourceLocation
        ) throws -> HTTPClientResponse {
            try client.get(HTTPClientRequest(url: try url(port), timeout: .seconds(5)))
        }

        @Test func keepAliveConnectionCarriesManyRequests() throws {
            let server = try KeepAliveServer()
            defer { server.stop() }
            let client = HTTPClient()
            for n in 1...20 {
                let response = try get(client, server.port)
                #expect(response.body == Array(#"{"n":\#(n)}"#.utf8))
            }
            #expect(server.connections == 1)
            #expect(client.statistics.connections == 1)
            #expect(!server.heads[0].lowercased().contains("connection: close"))
        }

        @Test func serverClosingAfterEachAnswerCostsNoPoll() throws {
            // The server hangs up after every answer without saying so: the idle connection
            // is found closed and replaced before the request goes out.
            let server = try KeepAliveServer(.init(closeAfter: 1))
            defer { server.stop() }
            let client = HTTPClient()
            for _ in 1...5 {
                #expect(try get(client, server.port).status == 200)
            }
            #expect(server.requests == 5)
        }

        @Test func requestLostOnAReusedConnectionIsSentOnceMore() throws {
            // The server reads the second request and hangs up without a byte of answer, as one
            // closing an idle connection at that instant would: the GET goes again on a new one.
            let server = try KeepAliveServer(.init(dropRequest: 2))
            defer { server.stop() }
            let client = HTTPClient()
            #expect(try get(client, server.port).body == Array(#"{"n":1}"#.utf8))
            #expect(try get(client, server.port).body == Array(#"{"n":1}"#.utf8))
            #expect(server.connections == 2)
            #expect(server.requests == 3)
        }

        @Test func noRetryOnceTheAnswerHasBegun() throws {
            let server = try ScriptedServer([
                .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
                .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Le"),
            ])
            let client = HTTPClient()
            #expect(try get(client, server.port).status == 200)
            let error = failure(of: HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)), client: client)
            server.finish()
            guard case .malformed = error else {
                Issue.record("expected .malformed, got \(String(describing: error))")
                return
            }
            #expect(server.receivedRequests.count == 2)
        }

        @Test func idleConnectionPastTheIdleTimeoutIsReplaced() throws {
            let server = try KeepAliveServer()
            defer { server.stop() }
            let client = HTTPClient(configuration: .init(idleTimeout: .milliseconds(50)))
            let start = ContinuousClock.now
            #expect(try get(client, server.port).status == 200)
            #expect(try get(client, server.port).status == 200)
            // Reused when the connection was idle less than the limit, which it is unless the machine
            // is so busy that the two requests took longer than that (then nothing is shown either way).
            #expect(server.connections == 1 || ContinuousClock.now - start >= .milliseconds(50))
            let before = server.connections
            // Waiting out the client's idle limit is the behaviour under test.
            sleep(for: .milliseconds(80))
            #expect(try get(client, server.port).status == 200)
            #expect(server.connections == before + 1)
        }

        @Test func serverIdleTimeoutIsSurvived() throws {
            let server = try KeepAliveServer(.init(idleClose: .milliseconds(50)))
            defer { server.stop() }
            let client = HTTPClient()
            #expect(try get(client, server.port).status == 200)
            #expect(waitUntil(seconds: 5) { server.closed == 1 }, "the server did not close the idle connection")
            #expect(try get(client, server.port).status == 200)
            #expect(server.connections == 2)
        }

        @Test func connectionCloseIsHonoured() throws {
            let server = try KeepAliveServer(.init(sayClose: true))
            defer { server.stop() }
            let client = HTTPClient()
            for _ in 1...3 { #expect(try get(client, server.port).status == 200) }
            #expect(client.idleConnections == 0)
            #expect(server.connections == 3)
        }

        @Test func reuseOffOpensAConnectionPerRequest() throws {
            let server = try KeepAliveServer()
            defer { server.stop() }
            let client = HTTPClient(configuration: .init(maxIdleConnections: 0))
            for _ in 1...3 { #expect(try get(client, server.port).status == 200) }
            #expect(server.connections == 3)
        }

        @Test func poolIsBounded() throws {
            let server = try KeepAliveServer()
            defer { server.stop() }
            let client = HTTPClient(configuration: .init(maxIdleConnections: 2))
            // Connections opened by hand through the client's own path would need internals; instead
            // run requests from several threads at once so several connections exist together.
            let group = DispatchGroup()
            for _ in 0..<8 {
                DispatchQueue.global().async(group: group) {
                    for _ in 0..<5 {
                        _ = try? client.get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
                    }
                }
            }
            #expect(group.wait(timeout: .now() + .seconds(30)) == .success)
            #expect(client.idleConnections <= 2)
            #expect(server.requests == 40)
        }

        @Test func tlsConnectionIsReusedAfterIdling() throws {
            let tls = try TLSFixture.shared.get()
            let client = HTTPClient(trustedCAFile: tls.caFile)
            var numbers: [String] = []
            for _ in 1...3 {
                let response = try client.get(
                    HTTPClientRequest(
                        url: try url(tls.goodPort, path: "/keep?appid=\(secret)", scheme: "https", host: "localhost"),
                        timeout: .seconds(10)))
                numbers.append(response.header("x-request-on-connection") ?? "?")
            }
            #expect(numbers == ["1", "2", "3"])
            #expect(client.statistics.connections == 1)
        }

        @Test func tlsSessionsAreResumed() throws {
            let tls = try TLSFixture.shared.get()
            let client = HTTPClient(trustedCAFile: tls.caFile)
            var resumed: [String] = []
            // The fixture closes every connection after one answer, so each request needs a new one.
            for _ in 1...4 {
                let response = try client.get(
                    HTTPClientRequest(
                        url: try url(tls.goodPort, scheme: "https", host: "localhost"), timeout: .seconds(10)))
                resumed.append(response.header("x-resumed") ?? "?")
            }
            #expect(resumed == ["no", "yes", "yes", "yes"])
            #expect(client.statistics.fullHandshakes == 1)
            #expect(client.statistics.resumedHandshakes == 3)
        }
    }
}
