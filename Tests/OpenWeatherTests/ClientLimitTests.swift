import HTTPClient
import HTTPServer
import Testing

@testable import OpenWeather

/// The deploy reference's answer cap (deploy/docs/web.md): a weather answer is about 1 KB and anything over 256 KiB is
/// refused unread, so a broken or hostile upstream cannot make the exporter buffer megabytes.
@Suite struct ClientLimitTests {
    /// Serves one fixed body for every request.
    struct FixedBody: HTTPHandler {
        let body: [UInt8]
        func handle(_ request: HTTPRequest, responder: HTTPResponder) {
            responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: [body]))
        }
    }

    /// A real answer padded with trailing whitespace (valid JSON) to exactly `size` bytes.
    static func answer(size: Int) -> [UInt8] {
        let fixture = Fixtures.bytes("current-barcelona-clouds.json")
        return fixture + [UInt8](repeating: UInt8(ascii: " "), count: size - fixture.count)
    }

    static func fetch(_ body: [UInt8]) throws -> Result<CurrentWeather, OpenWeatherError> {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.eventLoops = 1
        let server = try HTTPServer(configuration: configuration, handler: FixedBody(body: body))
        server.start()
        defer { server.shutdown() }
        let client = try OpenWeatherClient(
            configuration: .init(baseURL: "http://127.0.0.1:\(server.port)", apiKey: "k", timeout: .seconds(5)),
            userAgent: "test")
        return Result { () throws(OpenWeatherError) in try client.currentWeather(latitude: 41.39, longitude: 2.16) }
    }

    @Test func theDefaultCapIs256KiB() {
        #expect(OpenWeatherClient.Configuration(baseURL: "http://x", apiKey: "k").maxBodyBytes == 256 * 1024)
    }

    @Test func anAnswerOfExactlyTheCapIsRead() throws {
        let weather = try Self.fetch(Self.answer(size: 256 * 1024)).get()
        #expect(weather.cityName == "Barcelona")
    }

    @Test func oneByteOverTheCapIsRefused() throws {
        let result = try Self.fetch(Self.answer(size: 256 * 1024 + 1))
        guard case .failure(.transport(.tooLarge(let limit))) = result else {
            Issue.record("expected tooLarge, got \(result)")
            return
        }
        #expect(limit == 256 * 1024)
    }
}
