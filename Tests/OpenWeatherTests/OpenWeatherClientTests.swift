import Dispatch
import Glibc
import OpenWeather
import Simulator
import Testing

/// The client over real sockets: the simulator for answers, a one-shot server for odd ones.
@Suite struct OpenWeatherClientHTTPTests {
    /// A key with characters that travel percent-encoded.
    static let key = "k3y/with+odd&chars=1"
    static let encodedKey = "k3y%2Fwith%2Bodd%26chars%3D1"

    /// Serves `reply` once on 127.0.0.1 and returns the port; the request head read is handed to `received`.
    private func oneShotServer(_ reply: String) throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { close(fd); throw TestError("bind failed") }
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
            _ = recv(connection, &buffer, buffer.count, 0)
            _ = Array(reply.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    private func client(_ port: UInt16) -> OpenWeatherClient {
        OpenWeatherClient(settings: .init(baseURL: "http://127.0.0.1:\(port)", apiKey: Self.key, timeout: .seconds(5)), userAgent: "test")
    }

    @Test func redirectIsNotFollowedAndNamesItsLocationWithoutTheKey() throws {
        let port = try oneShotServer(
            "HTTP/1.1 301 Moved Permanently\r\nLocation: https://api.example/data/2.5/weather?lat=1&appid=\(Self.encodedKey)\r\nContent-Length: 0\r\n\r\n")
        #expect(throws: OpenWeatherError.http(
            status: 301,
            message: "redirect to https://api.example/data/2.5/weather?lat=1&appid=<redacted>, not followed: check --openweather.url",
            retryAfterSeconds: nil)) {
            try client(port).currentWeather(latitude: 1, longitude: 2)
        }
    }

    @Test func echoedKeyIsRedactedInEveryForm() throws {
        let lower = Self.encodedKey.replacing("%2F", with: "%2f")
        let port = try oneShotServer(
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 200\r\n\r\n"
                + String("{\"message\":\"bad appid \(Self.encodedKey) or \(lower) or \(Self.key.replacing("/", with: "\\/"))\"}".padding(200)))
        do {
            _ = try client(port).currentWeather(latitude: 1, longitude: 2)
            Issue.record("expected an error")
        } catch {
            #expect(!error.description.contains("k3y"), "\(error.description)")
            #expect(error.description.contains("<redacted>"))
        }
    }

    @Test func anyEndpointGoesThroughGet() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = OpenWeatherClient(settings: .init(baseURL: simulator.baseURL, apiKey: "key", timeout: .seconds(5)), userAgent: "test")
        let body = try client.get(APIRequest(path: "/data/2.5/weather", query: [.init("lat", "10.5"), .init("lon", "20.25"), .init("units", "metric")]))
        #expect(try WeatherDecoder.decode(body).latitude == 10.5)
        #expect(simulator.requests.last?.latitude == 10.5)
        // A path the simulator does not know is an HTTP error like any other.
        #expect(throws: OpenWeatherError.self) { try client.get(APIRequest(path: "/no/such/endpoint", query: [])) }
        for _ in 0..<5 { _ = try client.currentWeather(latitude: 1, longitude: 2) }
    }
}

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension String {
    /// Pads with spaces to exactly `count` bytes (for a fixed Content-Length).
    func padding(_ count: Int) -> String {
        self + String(repeating: " ", count: max(0, count - utf8.count))
    }
}
