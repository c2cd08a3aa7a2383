import TestSupport
import Testing

@testable import HTTPClient

extension HTTPClientTests {
    @Suite struct Proxies {
        private func client(_ proxy: String, caFile: String? = nil) throws -> HTTPClient {
            HTTPClient(
                configuration: .init(
                    proxy: ProxyConfiguration(proxy: try ProxyServer(parsing: proxy, origin: "test")),
                    trustedCAFile: caFile))
        }

        @Test func httpsGoesThroughAConnectTunnelWithTLSToTheOrigin() throws {
            let tls = try TLSFixture.shared.get()
            let proxy = try TestProxy()
            defer { proxy.stop() }
            let client = try client("http://127.0.0.1:\(proxy.port)", caFile: tls.caFile)
            let response = try client.get(
                HTTPClientRequest(url: try url(tls.goodPort, scheme: "https", host: "localhost"), timeout: .seconds(10))
            )
            #expect(response.status == 200)
            // The origin saw our SNI: the TLS session runs to it, not to the proxy.
            #expect(response.header("x-sni") == "localhost")
            #expect(proxy.heads.first?.hasPrefix("CONNECT localhost:\(tls.goodPort) HTTP/1.1\r\n") == true)
            // The path and its key stay inside the tunnel.
            #expect(!proxy.heads.joined().contains(secret))
            #expect(!proxy.heads.joined().lowercased().contains("proxy-authorization"))
        }

        @Test func credentialsGoAsProxyAuthorization() throws {
            let tls = try TLSFixture.shared.get()
            // base64("user:p@ss word")
            let proxy = try TestProxy(requiredAuthorization: "Basic dXNlcjpwQHNzIHdvcmQ=")
            defer { proxy.stop() }
            let client = try client("http://user:p%40ss%20word@127.0.0.1:\(proxy.port)", caFile: tls.caFile)
            let response = try client.get(
                HTTPClientRequest(url: try url(tls.goodPort, scheme: "https", host: "localhost"), timeout: .seconds(10))
            )
            #expect(response.status == 200)
            #expect(proxy.tunnels == 1)
        }

        @Test func missingOrWrongCredentialsAreTheProxysFailure() throws {
            let tls = try TLSFixture.shared.get()
            let proxy = try TestProxy(requiredAuthorization: "Basic dXNlcjpwYXNz")
            defer { proxy.stop() }
            for (proxyURL, expected) in [
                ("http://127.0.0.1:\(proxy.port)", "wants credentials"),
                ("http://user:WRONGPASS@127.0.0.1:\(proxy.port)", "rejects the credentials"),
            ] {
                let error = failure(
                    of: HTTPClientRequest(
                        url: try url(tls.goodPort, scheme: "https", host: "localhost"), timeout: .seconds(10)),
                    client: try client(proxyURL, caFile: tls.caFile))
                #expect(error?.kind == "proxy")
                #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
                #expect(error?.description.contains("127.0.0.1:\(proxy.port)") == true)
                #expect(error?.description.contains("WRONGPASS") == false)
            }
        }

        @Test func refusedTunnelIsCodeProxy() throws {
            let proxy = try TestProxy(mode: .refuse(403))
            defer { proxy.stop() }
            let error = failure(
                of: HTTPClientRequest(url: try url(443, scheme: "https", host: "api.example"), timeout: .seconds(5)),
                client: try client("127.0.0.1:\(proxy.port)"))
            #expect(error?.kind == "proxy")
            #expect(error?.description == "proxy 127.0.0.1:\(proxy.port) refused the tunnel to api.example:443: 403")
        }

        @Test func unreachableProxyIsCodeProxy() throws {
            let port = try LoopbackHTTP.closedPort()
            let error = failure(
                of: HTTPClientRequest(url: try url(443, scheme: "https", host: "api.example"), timeout: .seconds(5)),
                client: try client("http://127.0.0.1:\(port)"))
            #expect(error?.kind == "proxy")
            #expect(error?.description.contains("proxy 127.0.0.1:\(port)") == true)
        }

        @Test func proxyDyingMidTunnelFailsThePollNamingTheProxy() throws {
            let tls = try TLSFixture.shared.get()
            // Lets the start of the server's handshake through, then hangs up on both sides.
            let proxy = try TestProxy(mode: .dieAfter(bytes: 100))
            defer { proxy.stop() }
            let error = failure(
                of: HTTPClientRequest(
                    url: try url(tls.goodPort, scheme: "https", host: "localhost"), timeout: .seconds(10)),
                client: try client("http://127.0.0.1:\(proxy.port)", caFile: tls.caFile))
            #expect(error != nil && error != .timeout)
            #expect(
                error?.description.contains("through proxy 127.0.0.1:\(proxy.port)") == true,
                "\(String(describing: error))")
        }

        @Test func httpURLGoesToTheProxyInAbsoluteForm() throws {
            let proxy = try TestProxy()
            defer { proxy.stop() }
            let client = try client("http://me:pw@127.0.0.1:\(proxy.port)")
            let first = try client.get(
                HTTPClientRequest(
                    url: try RequestURL(parsing: "http://api.example:8080/data?appid=\(secret)"), timeout: .seconds(5)))
            #expect(first.body == Array("GET http://api.example:8080/data?appid=\(secret) HTTP/1.1".utf8))
            #expect(proxy.heads[0].contains("\r\nHost: api.example:8080\r\n"))
            #expect(proxy.heads[0].contains("\r\nProxy-Authorization: Basic bWU6cHc=\r\n"))
        }

        @Test func noProxyHostsGoDirect() throws {
            let server = try KeepAliveServer()
            defer { server.stop() }
            let proxyPort = try LoopbackHTTP.closedPort()
            let settings = try ProxyConfiguration(environment: [
                "HTTP_PROXY": "http://127.0.0.1:\(proxyPort)", "NO_PROXY": "example.com,127.0.0.0/8",
            ])
            let client = HTTPClient(configuration: .init(proxy: settings))
            #expect(try client.get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5))).status == 200)
            #expect(
                failure(
                    of: HTTPClientRequest(
                        url: try RequestURL(parsing: "http://api.other:1/?appid=\(secret)"), timeout: .seconds(5)),
                    client: client)?.kind == "proxy")
        }

        @Test func environmentPrecedence() throws {
            let api = try RequestURL(parsing: "https://api.openweathermap.org/data")
            let plain = try RequestURL(parsing: "http://api.openweathermap.org/data")
            var settings = try ProxyConfiguration(environment: [
                "https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2", "ALL_PROXY": "all:3",
            ])
            #expect(settings.proxy(for: api)?.description == "lower:1")
            #expect(settings.proxy(for: plain)?.description == "all:3")
            settings = try ProxyConfiguration(environment: ["HTTPS_PROXY": "http://upper:2", "http_proxy": "h:4"])
            #expect(settings.proxy(for: api)?.description == "upper:2")
            #expect(settings.proxy(for: plain)?.description == "h:4")
            settings = try ProxyConfiguration(environment: ["HTTPS_PROXY": "proxy.corp", "NO_PROXY": "*"])
            #expect(settings.proxy(for: api) == nil)
            settings = try ProxyConfiguration(environment: ["HTTPS_PROXY": ""])
            #expect(settings.proxy(for: api) == nil)
            // An explicit proxy ignores NO_PROXY.
            #expect(
                ProxyConfiguration(proxy: try ProxyServer(parsing: "p:1", origin: "x")).proxy(for: api)?.description
                    == "p:1")
        }

        @Test func badProxyURLsSayWhatIsWrongWithoutQuotingThem() throws {
            for (text, expected) in [
                ("socks5://user:TOPSECRET@h:1080", "socks5:// proxies are not supported"),
                ("https://h:443", "https:// proxies are not supported"),
                ("http://user:TOPSECRET@h:99999", "port must be a number"),
                ("http://TOPSECRET%zz@h:1", "bad %-escape"),
            ] {
                do {
                    _ = try ProxyConfiguration(environment: ["HTTPS_PROXY": text])
                    Issue.record("\(expected): accepted")
                } catch {
                    #expect(error.description.contains("$HTTPS_PROXY"))
                    #expect(error.description.contains(expected), "\(error.description)")
                    #expect(!error.description.contains("TOPSECRET"))
                }
            }
            let server = try ProxyServer(parsing: "http://u:TOPSECRET@[::1]:3128", origin: "x")
            #expect(server.description == "[::1]:3128")
            #expect("\(server)".contains("TOPSECRET") == false)
            var dumped = ""
            dump(ProxyConfiguration(proxy: server), to: &dumped)
            #expect(!dumped.contains("TOPSECRET") && !dumped.contains("Basic"), "\(dumped)")
            #expect(!String(reflecting: ProxyConfiguration(proxy: server)).contains("Basic"))
            #expect(try ProxyServer(parsing: "proxy.corp", origin: "x").description == "proxy.corp:80")
        }

        /// The authority's reason comes from `RequestURL`'s case, worded once: not "invalid URL" twice.
        @Test func aBadAuthoritySaysInvalidURLOnce() {
            #expect(
                throws: HTTPClientError.invalidURL(
                    "x: not a proxy URL: missing host; give one like http://proxy.example:3128")
            ) {
                try ProxyServer(parsing: "http://:3128", origin: "x")
            }
        }

        @Test(arguments: [
            ("example.com", "example.com", 443, true),
            ("example.com", "api.example.com", 443, true),
            (".example.com", "api.example.com", 443, true),
            (".example.com", "example.com", 443, true),
            ("*.example.com", "api.example.com", 443, true),
            ("example.com", "notexample.com", 443, false),
            ("example.com:8443", "api.example.com", 443, false),
            ("example.com:8443", "api.example.com", 8443, true),
            ("10.0.0.0/8", "10.1.2.3", 443, true),
            ("10.0.0.0/8", "11.1.2.3", 443, false),
            ("10.0.0.0/8", "ten.example", 443, false),
            ("192.168.1.7", "192.168.1.7", 80, true),
            ("192.168.1.7:80", "192.168.1.7", 443, false),
            ("::1", "::1", 443, true),
            ("[::1]:443", "::1", 443, true),
            ("fd00::/8", "fd12::1", 443, true),
            ("fd00::/8", "fe80::1", 443, false),
            ("*", "anything.at.all", 1, true),
            ("a.com, b.com localhost", "localhost", 1, true),
            ("", "example.com", 443, false),
        ])
        func noProxyMatching(list: String, host: String, port: Int, bypass: Bool) {
            #expect(NoProxy(list).matches(host: host, port: UInt16(port)) == bypass, "\(list) vs \(host):\(port)")
        }
    }
}
