import OpenWeather
import TestSupport
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
        let client = try SimulatorEndpointTests.client(simulator)
        SimulatorEndpointTests.expectHTTP(400, "wrong latitude") { () throws(OpenWeatherError) in
            _ = try client.get(Forecast.request(latitude: 95, longitude: 0, language: "en"))
        }
    }
}

/// The simulated One Call: the same weather as the 2.5 endpoints, alerts now and then, and the
/// switch that answers as for a key without the subscription.
@Suite struct OneCallModelTests {
    @Test func agreesWithTheCurrentWeatherAndHasAlertsNowAndThen() throws {
        let now = ForecastModelTests.now
        let oneCall = try OneCallDecoder.decode(Array(OneCallJSON.render(latitude: 41.3888, longitude: 2.159, at: now).utf8))
        let weather = WeatherModel.reading(latitude: 41.3888, longitude: 2.159, at: now)
        #expect(oneCall.current.temperatureCelsius == weather.temperature)
        #expect(oneCall.hourly.steps.count > 48 && oneCall.daily.count == 8, "48 hours, then the days after them")
        #expect(oneCall.dewPointCelsius <= oneCall.current.temperatureCelsius)
        // Over two days of 6-hour blocks, some have an alert and some do not; an alert is in force when served.
        var withAlert = 0
        for block in 0..<8 {
            let time = now + Double(block) * 21_600
            let alerts = try OneCallDecoder.decode(Array(OneCallJSON.render(latitude: 41.3888, longitude: 2.159, at: time).utf8)).alerts
            #expect(alerts.allSatisfy { $0.start <= time && time < $0.end })
            if !alerts.isEmpty { withAlert += 1 }
        }
        #expect(withAlert > 0 && withAlert < 8, "\(withAlert) of 8 blocks")
    }

    @Test func answersWithoutTheSubscriptionWhenSwitched() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = try SimulatorEndpointTests.client(simulator)
        _ = try OneCallDecoder.decode(client.get(OneCall.request(latitude: 1, longitude: 2, language: "en")))
        let off = try LoopbackHTTP.request(port: simulator.port, method: "POST", path: "/_simulator/onecall?subscribed=false")
        #expect(off.status == 200)
        #expect {
            _ = try client.get(OneCall.request(latitude: 1, longitude: 2, language: "en"))
        } throws: { error in
            guard let error = error as? OpenWeatherError else { return false }
            return OneCall.needsSubscription(error)
        }
        _ = try client.get(CurrentWeather.request(latitude: 1, longitude: 2, language: "en"))
        simulator.setOneCallSubscribed(true)
        _ = try OneCallDecoder.decode(client.get(OneCall.request(latitude: 1, longitude: 2, language: "en")))
    }
}
