import OpenWeather
import TestSupport
import Testing

@testable import Simulator

@Suite struct SolarTimesTests {
    /// Real sunrise and sunset times: two from OpenWeather's captured answers
    /// (shared/openweather/fixtures; the ocean fixture is synthetic and not used), and
    /// London's longest day (03:43 and 20:21 UTC on 20 June 2024).
    @Test(
        arguments: [
            (41.3888, 2.159, 7200.0, 1_634_666_651.0, 1_634_623_652.0, 1_634_663_086.0),  // Barcelona, October
            (44.34, 10.99, 7200, 1_661_870_592, 1_661_834_187, 1_661_882_248),  // Zocca, August
            (51.5074, -0.1278, 3600, 1_718_900_000, 1_718_854_980, 1_718_914_860),  // London, June
        ] as [(Double, Double, Double, Double, Double, Double)])
    func withinAFewMinutesOfTheRealTimes(
        latitude: Double, longitude: Double, timezone: Double, time: Double, sunrise: Double, sunset: Double
    ) throws {
        let day = SolarTimes.day(containing: time, latitude: latitude, longitude: longitude, timezoneOffset: timezone)
        let computedSunrise = try #require(day.sunrise)
        let computedSunset = try #require(day.sunset)
        #expect(abs(computedSunrise - sunrise) < 180, "sunrise off by \(computedSunrise - sunrise) s")
        #expect(abs(computedSunset - sunset) < 180, "sunset off by \(computedSunset - sunset) s")
    }

    @Test func polarNightAndPolarDayHaveNoSunriseNorSunset() {
        // Longyearbyen on 21 December and on 21 June.
        let night = SolarTimes.day(
            containing: 1_703_152_800, latitude: 78.2232, longitude: 15.6356, timezoneOffset: 3600)
        #expect(night == SolarTimes.Day(sunrise: nil, sunset: nil))
        let day = SolarTimes.day(containing: 1_718_964_000, latitude: 78.2232, longitude: 15.6356, timezoneOffset: 3600)
        #expect(day == SolarTimes.Day(sunrise: nil, sunset: nil))
    }
}

@Suite struct WeatherModelTests {
    /// 2024-07-15 00:00 UTC, a summer day in London.
    static let midnight = 1_721_001_600.0

    @Test func temperatureFollowsLocalSolarTimeAndHumidityMovesAgainstIt() {
        // London is near solar noon at 12:00 UTC: warmest mid-afternoon, coolest before dawn.
        var afternoon: [Double] = []
        var dawn: [Double] = []
        var humidityAfternoon: [Double] = []
        var humidityDawn: [Double] = []
        for day in 0..<20 {
            let base = Self.midnight + Double(day) * 86_400
            let warm = WeatherModel.reading(latitude: 51.5074, longitude: -0.1278, at: base + 15 * 3600)
            let cold = WeatherModel.reading(latitude: 51.5074, longitude: -0.1278, at: base + 5 * 3600)
            afternoon.append(warm.temperature)
            dawn.append(cold.temperature)
            humidityAfternoon.append(warm.humidity)
            humidityDawn.append(cold.humidity)
        }
        let mean = { (values: [Double]) -> Double in values.reduce(0, +) / Double(values.count) }
        let (warm, cold) = (mean(afternoon), mean(dawn))
        #expect(warm > cold + 4)
        let (dry, damp) = (mean(humidityAfternoon), mean(humidityDawn))
        #expect(dry < damp)
        // Tokyo's afternoon comes nine hours earlier in UTC.
        let tokyoAfternoon = WeatherModel.reading(latitude: 35.6762, longitude: 139.6503, at: Self.midnight + 6 * 3600)
        let tokyoNight = WeatherModel.reading(latitude: 35.6762, longitude: 139.6503, at: Self.midnight + 19 * 3600)
        #expect(tokyoAfternoon.temperature > tokyoNight.temperature)
    }

    @Test func plausibleRangesAndRainNowAndThen() {
        var rainy = 0
        var windSpeeds = Set<Double>()
        for hour in stride(from: 0.0, to: 24 * 30, by: 1) {
            let reading = WeatherModel.reading(latitude: 40.7128, longitude: -74.006, at: Self.midnight + hour * 3600)
            #expect((-40...50).contains(reading.temperature))
            #expect((0...100).contains(reading.humidity))
            #expect((950...1060).contains(reading.pressure))
            #expect(reading.windSpeed >= 0 && reading.windSpeed < 40)
            #expect(reading.windGust >= reading.windSpeed)
            #expect((0..<360).contains(reading.windDirection))
            #expect((0...100).contains(reading.clouds))
            if reading.rain1h > 0 || reading.snow1h > 0 {
                rainy += 1
                #expect((500..<700).contains(reading.conditionID))
            }
            windSpeeds.insert(reading.windSpeed)
        }
        #expect(rainy > 0, "it should rain now and then")
        #expect(rainy < 24 * 30 / 2, "but not most of the time")
        #expect(windSpeeds.count > 100, "wind varies")
    }

    @Test func renderedJSONDecodesWithOurDecoder() throws {
        for hour in stride(from: 0.0, to: 48, by: 3) {
            let reading = WeatherModel.reading(latitude: -33.8688, longitude: 151.2093, at: Self.midnight + hour * 3600)
            let weather = try WeatherDecoder.decode(
                Array(WeatherJSON.render(reading, units: "metric", cityID: 2_147_714).utf8))
            #expect(weather.temperatureCelsius == reading.temperature)
            #expect(weather.cityName == "Sydney")
            #expect(weather.country == "AU")
            #expect(weather.sunrise != nil && weather.sunset != nil)
            #expect(weather.windGustMetersPerSecond != nil && weather.visibilityMeters != nil)
            #expect(weather.groundLevelPressurePascals != nil)
        }
    }

    @Test func unknownPlacesAnswerLikeTheOcean() throws {
        let reading = WeatherModel.reading(latitude: -45, longitude: -140, at: Self.midnight)
        let weather = try WeatherDecoder.decode(Array(WeatherJSON.render(reading, units: "metric", cityID: 1).utf8))
        #expect(weather.cityName == "")
        #expect(weather.country == nil)
    }
}

@Suite(.blocking) struct SimulatorServerTests {
    @Test func answersLikeOpenWeatherAndChecksTheKey() throws {
        let simulator = try Simulator(acceptedKeys: ["good"])
        defer { simulator.stop() }
        let ok = try LoopbackHTTP.request(
            port: simulator.port, path: "/data/2.5/weather?lat=51.5074&lon=-0.1278&appid=good&units=metric")
        #expect(ok.status == 200)
        #expect(ok.header("content-type")?.hasPrefix("application/json") == true)
        #expect(try WeatherDecoder.decode(ok.body).cityName == "London")

        // Without units=metric the API answers in kelvin.
        let kelvin = try LoopbackHTTP.request(
            port: simulator.port, path: "/data/2.5/weather?lat=51.5074&lon=-0.1278&appid=good")
        #expect(kelvin.text.contains(#""temp":2"#))

        let wrongKey = try LoopbackHTTP.request(port: simulator.port, path: "/data/2.5/weather?lat=1&lon=2&appid=bad")
        #expect(wrongKey.status == 401)
        #expect(wrongKey.text.contains("Invalid API key"))

        let badLatitude = try LoopbackHTTP.request(
            port: simulator.port, path: "/data/2.5/weather?lat=99&lon=2&appid=good")
        #expect(badLatitude.status == 400)
        #expect(badLatitude.text == #"{"cod":"400","message":"wrong latitude"}"#)

        #expect(try LoopbackHTTP.request(port: simulator.port, path: "/data/2.5/onecall").status == 404)
        #expect(simulator.requests.count == 4)
    }

    @Test func faultsOverHTTP() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let port = simulator.port
        let weather = "/data/2.5/weather?lat=1&lon=2&appid=k&units=metric"
        #expect(
            try LoopbackHTTP.request(port: port, method: "POST", path: "/_simulator/fault?status=429&retry_after=30")
                .status == 200)
        let limited = try LoopbackHTTP.request(port: port, path: weather)
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") == "30")
        #expect(limited.text.contains("temporary blocked"))
        #expect(try LoopbackHTTP.request(port: port, method: "DELETE", path: "/_simulator/fault").status == 200)
        #expect(try LoopbackHTTP.request(port: port, path: weather).status == 200)

        #expect(
            try LoopbackHTTP.request(port: port, method: "POST", path: "/_simulator/fault?malformed=truncated&lat=1")
                .status == 200)
        let truncated = try LoopbackHTTP.request(port: port, path: weather)
        #expect(throws: OpenWeatherError.self) { try WeatherDecoder.decode(truncated.body) }
        #expect(try LoopbackHTTP.request(port: port, path: "/data/2.5/weather?lat=3&lon=2&appid=k").status == 200)

        #expect(try LoopbackHTTP.request(port: port, method: "POST", path: "/_simulator/fault?bogus=1").status == 200)
        #expect(
            try LoopbackHTTP.request(port: port, method: "POST", path: "/_simulator/fault?malformed=nope").status == 400
        )
        let log = try LoopbackHTTP.request(port: port, path: "/_simulator/requests")
        #expect(log.text.split(separator: "\n").count == 4)

        // A request body is served as the answer: a captured response replayed.
        #expect(try LoopbackHTTP.request(port: port, method: "DELETE", path: "/_simulator/fault").status == 200)
        #expect(
            try LoopbackHTTP.request(port: port, method: "POST", path: "/_simulator/fault", body: #"{"cod":200,"x":1}"#)
                .status == 200)
        let replayed = try LoopbackHTTP.request(port: port, path: weather)
        #expect(replayed.status == 200)
        #expect(replayed.text == #"{"cod":200,"x":1}"#)
    }

    /// Faults were appended without end: each answer looks at every one, and each may hold a body.
    @Test func faultsStopAtTheMostKeptUntilCleared() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        func add() throws -> (status: Int, text: String) {
            let answer = try LoopbackHTTP.request(
                port: simulator.port, method: "POST", path: "/_simulator/fault?status=500&lat=7")
            return (answer.status, answer.text)
        }
        for _ in 0..<Simulator.State.maxFaults { #expect(try add().status == 200) }
        let full = try add()
        #expect(full.status == 400)
        #expect(full.text == "256 faults are set already, the most kept; DELETE /_simulator/fault clears them\n")
        #expect(simulator.state.withLock { $0.faults.count } == 256)
        #expect(
            try LoopbackHTTP.request(port: simulator.port, method: "DELETE", path: "/_simulator/fault").status == 200)
        #expect(try add().status == 200)
    }

    @Test func delayedAnswersArriveLate() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        simulator.setFault(Fault(delay: .milliseconds(100)))
        let start = ContinuousClock.now
        let response = try LoopbackHTTP.request(port: simulator.port, path: "/data/2.5/weather?lat=1&lon=2&appid=k")
        #expect(response.status == 200)
        #expect(ContinuousClock.now - start >= .milliseconds(95))
    }
}
