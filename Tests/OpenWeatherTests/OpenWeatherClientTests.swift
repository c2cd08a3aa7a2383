import Dispatch
import Glibc
import HTTPClient
import OpenWeather
import Simulator
import TestSupport
import Testing

/// The client over real sockets: the simulator for answers, a one-shot server for odd ones.
@Suite struct OpenWeatherClientHTTPTests {
    /// A key with characters that travel percent-encoded.
    static let key = "k3y/with+odd&chars=1"
    static let encodedKey = "k3y%2Fwith%2Bodd%26chars%3D1"

    /// Serves `reply` once on 127.0.0.1 and returns the port.
    private func oneShotServer(_ reply: String) throws -> UInt16 { try oneShotServer { _ in reply } }

    /// Answers one request on 127.0.0.1 with what `reply` makes of its head; returns the port.
    func oneShotServer(_ reply: @escaping @Sendable (String) -> String) throws -> UInt16 {
        let (fd, port) = try LoopbackHTTP.listen(backlog: 4)
        DispatchQueue.global().async {
            defer { close(fd) }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 5000) == 1 else { return }
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var buffer = [UInt8](repeating: 0, count: 8192)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let count = recv(connection, &buffer, buffer.count, 0)
            let head = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
            _ = Array(reply(head).utf8).withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
        }
        return port
    }

    private func client(_ port: UInt16) throws -> OpenWeatherClient {
        try OpenWeatherClient(
            configuration: .init(baseURL: "http://127.0.0.1:\(port)", apiKey: Self.key, timeout: .seconds(5)),
            userAgent: "test")
    }

    /// The answer that once killed the exporter (a negative chunk size) is a `decode` failure of one poll.
    @Test func aNegativeChunkSizeIsADecodeFailure() throws {
        let port = try oneShotServer(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-b\r\nhello world\r\n0\r\n\r\n")
        let error = #expect(throws: OpenWeatherError.self) {
            try client(port).currentWeather(latitude: 1, longitude: 2)
        }
        #expect(error == .transport(.malformed("invalid chunk size: the line must start with hex digits")))
        #expect(error?.code == "decode")
    }

    @Test func redirectIsNotFollowedAndNamesItsLocationWithoutTheKey() throws {
        let port = try oneShotServer(
            """
            HTTP/1.1 301 Moved Permanently\r\n\
            Location: https://api.example/data/2.5/weather?lat=1&appid=\(Self.encodedKey)\r\nContent-Length: 0\r\n\r\n
            """
        )
        #expect(
            throws: OpenWeatherError.http(
                status: 301,
                message:
                    """
                    redirect to https://api.example/data/2.5/weather?lat=1&appid=<redacted>, not followed: check \
                    --openweather.url
                    """,
                retryAfterSeconds: nil)
        ) {
            try client(port).currentWeather(latitude: 1, longitude: 2)
        }
    }

    /// The Location is cut at 300 bytes after the redaction: a key that starts just before the cut
    /// leaves not even its first letters.
    @Test func aRedirectWithTheKeyAtTheCutLeavesNoPiece() throws {
        // 298 bytes, then the key: its first 2 bytes fall before the cut.
        let prefix = "https://api.example/" + String(repeating: "p", count: 271) + "?appid="
        let shifted = prefix + Self.encodedKey + "&x=1"
        #expect(prefix.utf8.count == 298)
        let client = try client(
            try oneShotServer("HTTP/1.1 302 Found\r\nLocation: \(shifted)\r\nContent-Length: 0\r\n\r\n"))
        do {
            _ = try client.currentWeather(latitude: 1, longitude: 2)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains("?appid=<redacted>, not followed"), "\(error.description)")
        }
    }

    @Test func echoedKeyIsRedactedInEveryForm() throws {
        let lower = Self.encodedKey.replacing("%2F", with: "%2f")
        let port = try oneShotServer(
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 200\r\n\r\n"
                + String(
                    """
                    {"message":"bad appid \(Self.encodedKey) or \(lower) or \
                    \(Self.key.replacing("/", with: "\\/"))"}
                    """
                    .padding(200)))
        let client = try client(port)
        do {
            _ = try client.currentWeather(latitude: 1, longitude: 2)
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains("k3y"), "\(error.description)")
            #expect(error.description.contains("<redacted>"))
        }
    }

    /// A key echoed at byte 140 of a 160-byte excerpt once left its first 20 characters in the log,
    /// the landing page and the state file: the body is redacted before it is cut.
    @Test func aKeyEchoedAcrossTheCutLeavesNoPiece() throws {
        let key = "held-out-secret-key-0123456789abcdef"
        let body = String(repeating: "x", count: 140) + key + " was not accepted"
        let port = try oneShotServer(
            "HTTP/1.1 500 Internal Server Error\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let client = try OpenWeatherClient(
            configuration: .init(baseURL: "http://127.0.0.1:\(port)", apiKey: key, timeout: .seconds(5)),
            userAgent: "test")
        do {
            _ = try client.currentWeather(latitude: 1, longitude: 2)
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains("held-out"), "\(error)")
            #expect(error.description.contains(String(repeating: "x", count: 140) + "<redacted>"), "\(error)")
        }
    }

    /// A proxy answering 502 with the request echoed back: the key and the proxy's credentials in
    /// every form (plain, percent-encoded as in the URL, the base64 of `Proxy-Authorization`) are cut.
    @Test func aProxyEchoingTheRequestShowsNoCredentials() throws {
        let port = try oneShotServer { head in
            let lines = head.split(separator: "\r\n").map(String.init)
            // The proxy's own words first, then the headers last sent first, so all of it is in the excerpt.
            let body =
                "bad gateway for alice:pa%40ss%2Fw0rd (alice:pa@ss/w0rd) " + lines.reversed().joined(separator: " | ")
            return
                """
                HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\
                \(body)
                """
        }
        let proxy = try ProxyServer(parsing: "http://alice:pa%40ss%2Fw0rd@127.0.0.1:\(port)", origin: "test")
        let client = try OpenWeatherClient(
            configuration: .init(
                baseURL: "http://api.example", apiKey: Self.key, timeout: .seconds(5),
                http: .init(proxy: ProxyConfiguration(proxy: proxy))),
            userAgent: "test")
        do {
            _ = try client.currentWeather(latitude: 1, longitude: 2)
            Issue.record("expected an error")
        } catch {
            let text = error.description
            #expect(
                text.contains("502") && text.contains("bad gateway")
                    && text.contains("Proxy-Authorization: Basic <redacted>"), "\(text)")
            for piece in ["pa@ss", "pa%40ss", "w0rd", "YWxpY2U6cGFAc3MvdzByZA==", "YWxpY2U6", "k3y"] {
                #expect(!text.contains(piece), "\(piece) in \(text)")
            }
        }
    }

    @Test func anyEndpointGoesThroughGet() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = try OpenWeatherClient(
            configuration: .init(baseURL: simulator.baseURL, apiKey: "key", timeout: .seconds(5)), userAgent: "test")
        let body = try client.get(
            APIRequest(
                path: "/data/2.5/weather",
                query: [.init("lat", "10.5"), .init("lon", "20.25"), .init("units", "metric")]))
        #expect(try WeatherDecoder.decode(body).latitude == 10.5)
        #expect(simulator.requests.last?.latitude == 10.5)
        // A path the simulator does not know is an HTTP error like any other.
        #expect(throws: OpenWeatherError.self) { try client.get(APIRequest(path: "/no/such/endpoint", query: [])) }
        for _ in 0..<5 { _ = try client.currentWeather(latitude: 1, longitude: 2) }
    }
}

extension String {
    /// Pads with spaces to exactly `count` bytes (for a fixed Content-Length).
    func padding(_ count: Int) -> String {
        self + String(repeating: " ", count: max(0, count - utf8.count))
    }
}
