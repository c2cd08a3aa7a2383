import OpenWeather
import TestSupport
import Testing

@testable import Simulator

/// The new endpoints as the exporter sees them: through the real client and decoders.
@Suite(.blocking) struct SimulatorEndpointTests {
    static func client(_ simulator: Simulator, key: String = "test-key") throws -> OpenWeatherClient {
        try OpenWeatherClient(
            configuration: .init(baseURL: simulator.baseURL, apiKey: key, timeout: .seconds(5)), userAgent: "test")
    }

    static func expectHTTP(_ status: Int, _ message: String, _ call: () throws(OpenWeatherError) -> Void) {
        #expect {
            try call()
        } throws: { error in
            guard case .http(let code, let text, _) = error as? OpenWeatherError else { return false }
            return code == status && text.contains(message)
        }
    }

    @Test func airPollutionDecodes() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let air = try AirPollutionDecoder.decode(
            Self.client(simulator).get(AirPollution.request(latitude: 37.9838, longitude: 23.7275)))
        #expect((1...5).contains(air.airQualityIndex ?? 0))
        #expect(air.gramsPerCubicMeter.allSatisfy { $0 != nil })
        #expect(air.observationTime.truncatingRemainder(dividingBy: 3600) == 0)
        let client = try Self.client(simulator)
        Self.expectHTTP(400, "wrong latitude") { () throws(OpenWeatherError) in
            _ = try client.get(AirPollution.request(latitude: 95, longitude: 0))
        }
        #expect(simulator.requests.map(\.path) == ["/data/2.5/air_pollution", "/data/2.5/air_pollution"])
        #expect(simulator.requests.first?.latitude == 37.9838)
    }

    /// 96 hours from the current one, each the hour the current call will report then, so the
    /// forecast sees the model's rush hours.
    @Test func airPollutionForecastDecodesAndFollowsTheModel() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = try Self.client(simulator)
        let forecast = try AirPollutionForecastDecoder.decode(
            client.get(AirPollutionForecast.request(latitude: 51.5074, longitude: -0.1278)))
        #expect(forecast.steps.count == 96)
        let start = try #require(forecast.steps.first?.observationTime)
        #expect(start.truncatingRemainder(dividingBy: 3600) == 0)
        for (offset, step) in forecast.steps.enumerated() where offset % 7 == 0 {
            let model = AirPollutionModel.reading(
                latitude: 51.5074, longitude: -0.1278, at: start + Double(offset) * 3600)
            #expect(step.observationTime == start + Double(offset) * 3600)
            #expect(step.airQualityIndex == model.index)
        }
        // London's solar time is UTC: NO₂ at 08:00 above 03:00 on every day the forecast holds.
        for day in 0..<3 {
            let midnight = (start / 86_400).rounded(.up) * 86_400 + Double(day) * 86_400
            let at = { (hour: Double) in
                forecast.steps[Int((midnight + hour * 3600 - start) / 3600)].gramsPerCubicMeter[3]!
            }
            #expect(at(8) > at(3))
        }
        #expect(simulator.requests.map(\.path) == ["/data/2.5/air_pollution/forecast"])
    }

    @Test func geocodingByNameAndPostalCode() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = try Self.client(simulator)
        func places(_ query: PlaceQuery) throws(OpenWeatherError) -> [Place] {
            try Geocoding.decode(client.get(Geocoding.request(query)), for: query)
        }

        let london = try places(.name("London"))
        #expect(london.map(\.country) == ["GB", "CA", "US"])
        #expect(
            london.first
                == Place(name: "London", state: "England", country: "GB", latitude: 51.5074, longitude: -0.1278))
        #expect(
            try places(.name("Springfield,IL,US")) == [
                Place(name: "Springfield", state: "Illinois", country: "US", latitude: 39.7817, longitude: -89.6501)
            ])
        #expect(try places(.name("new york")).first?.state == "New York")
        #expect(try places(.name("Tokyo")).first?.state == nil)
        #expect(try places(.name("Xyzzyville")) == [])
        #expect(
            try places(.zip("94040,US")) == [
                Place(name: "Mountain View", state: nil, country: "US", latitude: 37.3855, longitude: -122.088)
            ])
        Self.expectHTTP(404, "not found") { () throws(OpenWeatherError) in _ = try places(.zip("00000,US")) }
        Self.expectHTTP(400, "Nothing to geocode") { () throws(OpenWeatherError) in _ = try places(.name("")) }

        // Without `limit` OpenWeather answers its best match only.
        let one = try LoopbackHTTP.request(port: simulator.port, path: "/geo/1.0/direct?q=London&appid=test-key")
        #expect(try Geocoding.decode(one.body, for: .name("London")).count == 1)
        #expect(simulator.requests.map(\.path).filter { $0.hasPrefix("/geo/1.0/") }.count == 9)
        #expect(simulator.requests.allSatisfy { $0.latitude.isNaN })
    }

    @Test func everyEndpointChecksTheKey() throws {
        let simulator = try Simulator(acceptedKeys: ["good"])
        defer { simulator.stop() }
        let requests = [
            CurrentWeather.request(latitude: 1, longitude: 2, language: "en"),
            AirPollution.request(latitude: 1, longitude: 2),
            Geocoding.request(.name("Paris")),
            Geocoding.request(.zip("94040,US")),
        ]
        let bad = try Self.client(simulator, key: "bad")
        for request in requests {
            Self.expectHTTP(401, "Invalid API key") { () throws(OpenWeatherError) in _ = try bad.get(request) }
            #expect(try !Self.client(simulator, key: "good").get(request).isEmpty)
        }
        #expect(simulator.requests.map(\.status) == [401, 200, 401, 200, 401, 200, 401, 200])
    }

    @Test func aFaultCanHitOneEndpointOnly() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = try Self.client(simulator)
        let port = simulator.port
        #expect(
            try LoopbackHTTP.request(
                port: port, method: "POST", path: "/_simulator/fault?status=500&path=/data/2.5/air_pollution"
            ).status == 200)
        Self.expectHTTP(500, "Bad Gateway") { () throws(OpenWeatherError) in
            _ = try client.get(AirPollution.request(latitude: 41.39, longitude: 2.16))
        }
        #expect(
            try WeatherDecoder.decode(
                client.get(CurrentWeather.request(latitude: 41.39, longitude: 2.16, language: "en"))
            ).cityName == "Barcelona")
        #expect(try !Geocoding.decode(client.get(Geocoding.request(.name("Paris"))), for: .name("Paris")).isEmpty)
        // An unknown path would silently fault nothing: refused.
        #expect(
            try LoopbackHTTP.request(
                port: port, method: "POST", path: "/_simulator/fault?status=500&path=/data/2.5/nothing"
            ).status == 400)

        let log = try LoopbackHTTP.request(port: port, path: "/_simulator/requests").text.split(separator: "\n").map {
            $0.split(separator: " ")
        }
        #expect(log.map(\.count) == [5, 5, 5])
        #expect(log.map { $0[3] } == ["500", "200", "200"])
        #expect(log.map { $0[4] } == ["/data/2.5/air_pollution", "/data/2.5/weather", "/geo/1.0/direct"])
        #expect(log[0][1] == "41.39" && log[0][2] == "2.16")

        // A chosen answer, for alert drills: here a very poor air quality index.
        simulator.clearFaults()
        let poor = #"{"list":[{"main":{"aqi":5},"components":{"pm2_5":91.5},"dt":1700000000}]}"#
        let encoded = poor.utf8.map { "%" + String($0, radix: 16, uppercase: true) }.joined()
        #expect(
            try LoopbackHTTP.request(
                port: port, method: "POST", path: "/_simulator/fault?path=/data/2.5/air_pollution&body=\(encoded)"
            ).status == 200)
        let air = try AirPollutionDecoder.decode(client.get(AirPollution.request(latitude: 1, longitude: 2)))
        #expect(air.airQualityIndex == 5)
        #expect(air.gramsPerCubicMeter[6] == 9.15e-05)

        simulator.setFault(Fault(response: .status(429, retryAfter: "60"), path: "/geo/1.0/zip"))
        Self.expectHTTP(429, "temporary blocked") { () throws(OpenWeatherError) in
            _ = try client.get(Geocoding.request(.zip("94040,US")))
        }
        #expect(try !client.get(AirPollution.request(latitude: 1, longitude: 2)).isEmpty)
    }

    @Test(arguments: Fault.Malformation.allCases)
    func malformedAnswersAreDecodeErrorsOnEveryEndpoint(_ malformation: Fault.Malformation) throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        simulator.setFault(Fault(response: .malformed(malformation)))
        let client = try Self.client(simulator)
        let decoders: [(APIRequest, ([UInt8]) throws(OpenWeatherError) -> Void)] = [
            (
                CurrentWeather.request(latitude: 1, longitude: 2, language: "en"),
                { (body) throws(OpenWeatherError) in _ = try WeatherDecoder.decode(body) }
            ),
            (
                AirPollution.request(latitude: 1, longitude: 2),
                { (body) throws(OpenWeatherError) in _ = try AirPollutionDecoder.decode(body) }
            ),
            (
                Geocoding.request(.name("London")),
                { (body) throws(OpenWeatherError) in _ = try Geocoding.decode(body, for: .name("London")) }
            ),
            (
                Geocoding.request(.zip("94040,US")),
                { (body) throws(OpenWeatherError) in _ = try Geocoding.decode(body, for: .zip("94040,US")) }
            ),
        ]
        for (request, decode) in decoders {
            let body = try client.get(request)
            #expect {
                try decode(body)
            } throws: { error in
                guard case .decode = error as? OpenWeatherError else { return false }
                return true
            }
        }
    }
}
