import OpenWeather
import TestSupport
import Testing

@testable import Simulator

/// The simulated forecast agrees with the simulated weather it forecasts.
@Suite struct ForecastModelTests {
    static let now = 1_764_500_000.0

    @Test func decodesAndFollowsTheCurrentWeatherModel() throws {
        let body = ForecastJSON.render(latitude: 48.8566, longitude: 2.3522, at: Self.now, units: "metric")
        #expect(
            body == ForecastJSON.render(latitude: 48.8566, longitude: 2.3522, at: Self.now, units: "metric"),
            "deterministic")
        let forecast = try ForecastDecoder.decode(Array(body.utf8))
        #expect(forecast.steps.count == 40)
        let first = try #require(forecast.steps.first)
        #expect(first.time <= Self.now && first.time > Self.now - 10_800, "the first step is the last 3-hour mark")
        for step in forecast.steps {
            let later = WeatherModel.reading(latitude: 48.8566, longitude: 2.3522, at: step.time)
            let lead = step.time - first.time + 10_800
            #expect(abs(step.temperatureCelsius - later.temperature) <= 0.3 * lead / 86_400 + 0.01)
            #expect(step.conditionID == later.conditionID)
            #expect(abs((step.rainMeters ?? -1) - later.rain1h * 3 / 1000) < 1e-5)
        }
        // What it says for 3 hours ahead is near what the simulator reports then.
        let ahead = try #require(forecast.value({ $0.temperatureCelsius }, at: Self.now + 10_800))
        let then = WeatherModel.reading(latitude: 48.8566, longitude: 2.3522, at: Self.now + 10_800).temperature
        #expect(abs(ahead - then) < 3)
    }

    @Test func servedThroughTheClient() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let body = try SimulatorEndpointTests.client(simulator).get(
            Forecast.request(latitude: 40.4168, longitude: -3.7038, language: "en"))
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
        let oneCall = try OneCallDecoder.decode(
            Array(OneCallJSON.render(latitude: 41.3888, longitude: 2.159, at: now).utf8))
        let weather = WeatherModel.reading(latitude: 41.3888, longitude: 2.159, at: now)
        #expect(oneCall.current.temperatureCelsius == weather.temperature)
        #expect(oneCall.hourly.steps.count > 48 && oneCall.daily.count == 8, "48 hours, then the days after them")
        #expect((oneCall.dewPointCelsius ?? .infinity) <= oneCall.current.temperatureCelsius)
        // Over two days of 6-hour blocks, some have an alert and some do not; an alert is in force when served.
        var withAlert = 0
        for block in 0..<8 {
            let time = now + Double(block) * 21_600
            let alerts = try OneCallDecoder.decode(
                Array(OneCallJSON.render(latitude: 41.3888, longitude: 2.159, at: time).utf8)
            ).alerts
            #expect(alerts.allSatisfy { $0.start <= time && time < $0.end })
            if !alerts.isEmpty { withAlert += 1 }
        }
        #expect(withAlert > 0 && withAlert < 8, "\(withAlert) of 8 blocks")
    }

    /// The minute forecast rains when the weather does: the current minute as the current rain, and a
    /// start within the hour where a rain spell begins; over a day some places see rain coming.
    @Test func theMinuteForecastFollowsTheWeather() throws {
        let now = ForecastModelTests.now
        var starts = 0
        for place in 0..<40 {
            let (latitude, longitude) = (Double(place) * 3 - 60, Double(place) * 7 - 140)
            for hour in stride(from: 0.0, to: 24, by: 1) {
                let time = now + hour * 3600 + 17
                let oneCall = try OneCallDecoder.decode(
                    Array(OneCallJSON.render(latitude: latitude, longitude: longitude, at: time).utf8))
                #expect(
                    oneCall.minutely.count == 61 && oneCall.minutely[0].time <= time
                        && time < oneCall.minutely[0].time + 60)
                let weather = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
                #expect(
                    abs(
                        oneCall.minutely[0].precipitationMetersPerSecond * 3_600_000 - (weather.rain1h + weather.snow1h)
                    ) < 1e-9)
                let nowcast = try #require(oneCall.nowcast(at: time))
                if let start = nowcast.nextStart, start > time {
                    starts += 1
                    #expect(start.truncatingRemainder(dividingBy: 10_800) == 0, "rain starts where a spell does")
                    #expect(
                        WeatherModel.reading(latitude: latitude, longitude: longitude, at: start).rain1h
                            + WeatherModel.reading(latitude: latitude, longitude: longitude, at: start).snow1h > 0)
                }
            }
        }
        #expect(starts > 0, "now and then, rain is coming within the hour")
        // `exclude` leaves parts out, as OpenWeather does.
        let less = try OneCallDecoder.decode(
            Array(
                OneCallJSON.render(latitude: 1, longitude: 2, at: now, exclude: ["minutely", "alerts", "daily"]).utf8))
        #expect(less.minutely.isEmpty && less.alerts.isEmpty && less.daily.isEmpty && less.hourly.steps.count == 48)
    }

    /// `rain=soon`: everywhere dry for 10 minutes, then rain, for the end-to-end test of the rain alert.
    @Test func rainSoonWhenSteered() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = try SimulatorEndpointTests.client(simulator)
        #expect(
            try LoopbackHTTP.request(port: simulator.port, method: "POST", path: "/_simulator/onecall?rain=soon").status
                == 200)
        let oneCall = try OneCallDecoder.decode(client.get(OneCall.request(latitude: 1, longitude: 2, language: "en")))
        let nowcast = try #require(oneCall.nowcast(at: oneCall.minutely[0].time))
        #expect(nowcast.nextStart == oneCall.minutely[0].time + 600)
        #expect(abs(nowcast.amountMeters - 51 * 2 / 60 / 1000) < 1e-12, "2 mm/h for the last 51 of the 61 minutes")
        #expect(
            try LoopbackHTTP.request(port: simulator.port, method: "POST", path: "/_simulator/onecall?rain=sometimes")
                .status == 400)
        #expect(
            try LoopbackHTTP.request(port: simulator.port, method: "POST", path: "/_simulator/onecall?rain=model")
                .status == 200)
    }

    @Test func answersWithoutTheSubscriptionWhenSwitched() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let client = try SimulatorEndpointTests.client(simulator)
        _ = try OneCallDecoder.decode(client.get(OneCall.request(latitude: 1, longitude: 2, language: "en")))
        let off = try LoopbackHTTP.request(
            port: simulator.port, method: "POST", path: "/_simulator/onecall?subscribed=false")
        #expect(off.status == 200)
        #expect {
            _ = try client.get(OneCall.request(latitude: 1, longitude: 2, language: "en"))
        } throws: { error in
            guard let error = error as? OpenWeatherError else { return false }
            return OneCall.needsSubscription(error)
        }
        _ = try client.get(CurrentWeather.request(latitude: 1, longitude: 2, language: "en"))
        simulator.setOneCallSubscribed(true)
        #expect(
            try !OneCallDecoder.decode(client.get(OneCall.request(latitude: 1, longitude: 2, language: "en"))).minutely
                .isEmpty)
        #expect(
            try OneCallDecoder.decode(
                client.get(OneCall.request(latitude: 1, longitude: 2, language: "en", exclude: [.minutely]))
            ).minutely.isEmpty)
    }
}
