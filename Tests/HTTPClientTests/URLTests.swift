import HTTPClient
import TestSupport
import Testing

extension HTTPClientTests {
    @Suite struct URLs {
        @Test(arguments: [
            "ftp://api.openweathermap.org/data?appid=SECRET123",
            "http:///data/2.5/weather?appid=SECRET123",
            "http://?appid=SECRET123",
            "http://api.openweathermap.org:99999/data?appid=SECRET123",
            "http://api.openweathermap.org:0/data?appid=SECRET123",
            "http://api.openweathermap.org:http/data?appid=SECRET123",
            "http://api.openweathermap.org:/data?appid=SECRET123",
            "api.openweathermap.org/data/2.5/weather?appid=SECRET123",
            "http://user:SECRET123@api.openweathermap.org/",
            "http://api.openweathermap.org/data?q=two words&appid=SECRET123",
            "http://api.open weathermap.org/?appid=SECRET123",
            "http://[::1/?appid=SECRET123",
            "http://[not-ipv6]/?appid=SECRET123",
            "SECRET123://host/",
            "",
        ])
        func invalidURLs(_ text: String) {
            let error = parseFailure(text)
            guard case .invalidURL = error else {
                Issue.record("expected .invalidURL, got \(String(describing: error))")
                return
            }
            #expect(error?.kind == "invalid_url")
        }

        @Test func unsupportedSchemeIsNamed() {
            let error = parseFailure("ftp://example.org/?appid=\(secret)")
            #expect(error?.description.contains("'ftp'") == true)
        }

        /// A URL is parsed once and each request puts its own target on it: the origin is kept, and a target
        /// that could break the request line is refused without being echoed.
        @Test func aTargetGoesOnAParsedURLUnparsed() throws {
            let base = try RequestURL(parsing: "https://[::1]:8443/prefix")
            let url = try base.with(target: "/prefix/data/2.5/weather?q=S%C3%A3o%20Paulo&appid=\(secret)")
            #expect(url.target == "/prefix/data/2.5/weather?q=S%C3%A3o%20Paulo&appid=\(secret)")
            #expect(url == (try RequestURL(parsing: "https://[::1]:8443\(url.target)")))
            // All of it that is ever shown.
            #expect("\(url)" == "[::1]:8443")
            #expect(String(reflecting: url) == "[::1]:8443")
            for target in [
                "data?appid=\(secret)", "/a b?appid=\(secret)", "/?appid=\(secret)\r\nInjected: 1", "/#\(secret)", "",
            ] {
                #expect(throws: HTTPClientError.self) { try base.with(target: target) }
                do {
                    _ = try base.with(target: target)
                } catch {
                    #expect(error.kind == "invalid_url" && !error.description.contains(secret), "\(error)")
                }
            }
        }

        private func parseFailure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> HTTPClientError?
        {
            do {
                let url = try RequestURL(parsing: text)
                Issue.record("expected an error, got \(url)", sourceLocation: sourceLocation)
                return nil
            } catch {
                #expect(!error.description.contains(secret), "\(error.description)", sourceLocation: sourceLocation)
                return error
            }
        }

        @Test func headerWithLineBreakIsRejected() throws {
            let request = HTTPClientRequest(
                url: try RequestURL(parsing: "http://127.0.0.1:1/?appid=\(secret)"),
                headers: [("X-Key", "a\r\nInjected: \(secret)")])
            #expect(failure(of: request)?.kind == "invalid_url")
        }

        @Test func localhostFallsBackAcrossAddresses() throws {
            let server = try ScriptedServer([.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")])
            // The server listens on IPv4 only, so this reaches it only through the fallback to the next address.
            let response = try HTTPClient().get(
                HTTPClientRequest(url: try url(server.port, host: "localhost"), timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 200)
            #expect(server.receivedRequests.first?.contains("\r\nHost: localhost:\(server.port)\r\n") == true)

            let refused = failure(
                of: HTTPClientRequest(
                    url: try RequestURL(parsing: "http://[::1]:\(try LoopbackHTTP.closedPort())/?appid=\(secret)"),
                    timeout: .seconds(2)))
            #expect(refused?.kind == "connect")
        }
    }
}
