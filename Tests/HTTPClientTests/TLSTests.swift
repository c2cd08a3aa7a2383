import HTTPClient
import Testing

extension HTTPClientTests {
    @Suite struct TLS {
        private func fixture() throws -> TLSFixture {
            try TLSFixture.shared.get()
        }

        @Test func httpsToAPlainHTTPServer() throws {
            let server = try ScriptedServer([.readAny, .send("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")])
            let error = failure(of: HTTPClientRequest(url: try url(server.port, scheme: "https"), timeout: .seconds(5)))
            server.finish()
            #expect(error?.kind == "tls")
        }

        @Test func httpsToAServerThatNeverAnswersTheHandshake() throws {
            let server = try ScriptedServer([.readAny, .holdOpen])
            let error = failure(
                of: HTTPClientRequest(url: try url(server.port, scheme: "https"), timeout: .milliseconds(300)))
            server.finish()
            #expect(error == .timeout)
        }

        @Test func successByIPAddress() throws {
            let tls = try fixture()
            let client = HTTPClient(trustedCAFile: tls.caFile)
            let response = try client.get(
                HTTPClientRequest(url: try url(tls.goodPort, scheme: "https"), timeout: .seconds(10)))
            #expect(response.status == 200)
            #expect(response.body == Array(#"{"ok":true}"#.utf8))
            // RFC 6066: no SNI for an IP address.
            #expect(response.header("x-sni") == "")
        }

        @Test func successByNameSendsSNI() throws {
            let tls = try fixture()
            let client = HTTPClient(trustedCAFile: tls.caFile)
            let response = try client.get(
                HTTPClientRequest(url: try url(tls.goodPort, scheme: "https", host: "localhost"), timeout: .seconds(10))
            )
            #expect(response.status == 200)
            #expect(response.header("x-sni") == "localhost")
        }

        @Test func certificateForAnotherHost() throws {
            let tls = try fixture()
            let client = HTTPClient(trustedCAFile: tls.caFile)
            for host in ["127.0.0.1", "localhost"] {
                let error = failure(
                    of: HTTPClientRequest(
                        url: try url(tls.wrongHostPort, scheme: "https", host: host), timeout: .seconds(10)),
                    client: client)
                guard case .tls(let reason) = error else {
                    Issue.record("\(host): expected .tls, got \(String(describing: error))")
                    continue
                }
                #expect(reason.hasPrefix("certificate verify failed:"))
                #expect(reason.contains("mismatch"))
            }
        }

        @Test func untrustedCertificateAuthority() throws {
            let tls = try fixture()
            let error = failure(
                of: HTTPClientRequest(url: try url(tls.goodPort, scheme: "https"), timeout: .seconds(10)))
            guard case .tls(let reason) = error else {
                Issue.record("expected .tls, got \(String(describing: error))")
                return
            }
            #expect(reason.hasPrefix("certificate verify failed:"))
        }

        @Test func unreadableCAFile() throws {
            let client = HTTPClient(trustedCAFile: "/nonexistent/ca.pem")
            let error = failure(
                of: HTTPClientRequest(url: try RequestURL(parsing: "https://127.0.0.1:1/?appid=\(secret)")),
                client: client)
            #expect(error?.kind == "tls")
        }
    }
}
