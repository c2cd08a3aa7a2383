import HTTPClient
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
            let error = failure(of: HTTPClientRequest(url: text, timeout: .seconds(2)))
            guard case .invalidURL = error else {
                Issue.record("expected .invalidURL, got \(String(describing: error))")
                return
            }
            #expect(error?.kind == "invalid_url")
        }

        @Test func unsupportedSchemeIsNamed() {
            let error = failure(of: HTTPClientRequest(url: "ftp://example.org/?appid=\(secret)"))
            #expect(error?.description.contains("'ftp'") == true)
        }

        @Test func headerWithLineBreakIsRejected() {
            let request = HTTPClientRequest(url: "http://127.0.0.1:1/?appid=\(secret)", headers: [("X-Key", "a\r\nInjected: \(secret)")])
            #expect(failure(of: request)?.kind == "invalid_url")
        }

        @Test func localhostFallsBackAcrossAddresses() throws {
            let server = try ScriptedServer([.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")])
            // The server listens on IPv4 only, so this reaches it only through the fallback to the next address.
            let response = try HTTPClient().get(HTTPClientRequest(url: url(server.port, host: "localhost"), timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 200)
            #expect(server.receivedRequests.first?.contains("\r\nHost: localhost:\(server.port)\r\n") == true)

            let refused = failure(of: HTTPClientRequest(url: "http://[::1]:\(try ScriptedServer.closedPort())/?appid=\(secret)", timeout: .seconds(2)))
            #expect(refused?.kind == "connect")
        }
    }
}
