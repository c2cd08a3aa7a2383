import OpenWeather
import Testing

@testable import Simulator

/// The simulated forecast agrees with the simulated weather it forecasts.
@Suite struct ForecastModelTests {
    static let now = 1_764_500_000.0

    @Test func decodesAndFollowsTheCurrentWeatherModel() throws {
        let body = ForecastJSON.render(latitude: 48.8566, longitude: 2.3522, at: Self.now, units: "metric")
        #expect(body == ForecastJSON.render(latitude: 48.8566, longitude: 2.3522, at: Self.now, units: "metric"), "deterministic")
        let forecast = try ForecastDecoder.decode(Array(body.utf8))
        #expect(forecast.steps.count == 40)
        let first = try #require(forecast.steps.first)
        #expect(first.time <= Self.now && first.time > Self.now - 10_800, "the first step is the last 3-hour mark")
        for step in forecast.steps {
            let later = WeatherModel.reading(latitude: 48.8566, longitude: 2.3522, at: step.time)
            let lead = step.time - first.time + 10_800
            #expect(abs(step.temperatureCelsius - later.temperature) <= 0.3 * lead / 86_400 + 0.01)
            #expect(step.conditionID == later.conditionID)
            #expect(abs(step.rainMeters - later.rain1h * 3 / 1000) < 1e-5)
        }
        // What it says for 3 hours ahead is near what the simulator reports then.
        let ahead = try #require(forecast.value({ $0.temperatureCelsius }, at: Self.now + 10_800))
        let then = WeatherModel.reading(latitude: 48.8566, longitude: 2.3522, at: Self.now + 10_800).temperature
        #expect(abs(ahead - then) < 3)
    }

    @Test func servedThroughTheClient() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let body = try SimulatorEndpointTests.client(simulator).get(Forecast.request(latitude: 40.4168, longitude: -3.7038, language: "en"))
        let forecast = try ForecastDecoder.decode(body)
        #expect(forecast.steps.count == 40)
        #expect(simulator.requests.map(\.path) == ["/data/2.5/forecast"])
        SimulatorEndpointTests.expectHTTP(400, "wrong latitude") { () throws(OpenWeatherError) in
            _ = try SimulatorEndpointTests.client(simulator).get(Forecast.request(latitude: 95, longitude: 0, language: "en"))
        }
    }
}
