import OpenWeather
import Platform
import TestSupport
import Testing

@testable import Simulator

/// Issue 29 §3: the demo's cold place is cold in every season, and a place can be made hotter or
/// colder by hand on every endpoint alike.
@Suite(.blocking) struct DemoSteeringTests {
    static let rinconada = (latitude: -14.6306, longitude: -69.4456)

    /// The 24-hour minimum of the simulated forecast is below 0 °C at La Rinconada on every day of the
    /// year (sampled every 5 days at four times of day), so `below=0` is crossed by the forecast.
    @Test func laRinconadasForecastGoesBelowZeroInEverySeason() throws {
        let start = 1_767_225_600.0  // 2026-01-01T00:00:00Z
        var warmest = -Double.infinity
        for day in stride(from: 0.0, to: 365, by: 5) {
            for hour in [0.0, 6, 12, 18] {
                let now = start + day * 86_400 + hour * 3600
                let forecast = try ForecastDecoder.decode(
                    Array(
                        ForecastJSON.render(
                            latitude: Self.rinconada.latitude, longitude: Self.rinconada.longitude, at: now,
                            units: "metric"
                        ).utf8))
                let low = forecast.steps.filter { $0.time > now && $0.time <= now + 86_400 }.map(\.temperatureCelsius)
                    .min()!
                warmest = max(warmest, low)
            }
        }
        #expect(warmest < -1, "the warmest 24-hour minimum of the year is \(warmest) °C")
        // A place at the same latitude at sea level is far warmer: the height is what makes it cold.
        let sea = WeatherModel.reading(latitude: -14.6306, longitude: -75, at: start)
        let high = WeatherModel.reading(
            latitude: Self.rinconada.latitude, longitude: Self.rinconada.longitude, at: start)
        #expect(sea.temperature - high.temperature > 25)
    }

    @Test func aPlaceIsMadeHotterOrColderOnEveryEndpointUntilCleared() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let london = "lat=51.51&lon=-0.13&units=metric"
        func now() throws -> Double {
            let body = try OneCall4EndpointTests.get(simulator, "/data/2.5/weather?\(london)").text
            return try WeatherDecoder.decode(Array(body.utf8)).temperatureCelsius
        }
        func forecastFirst() throws -> Double {
            let body = try OneCall4EndpointTests.get(simulator, "/data/2.5/forecast?\(london)").text
            return try ForecastDecoder.decode(Array(body.utf8)).steps[0].temperatureCelsius
        }
        func oneCall() throws -> Double {
            let body = try OneCall4EndpointTests.get(simulator, "/data/3.0/onecall?\(london)").text
            return try OneCallDecoder.decode(Array(body.utf8)).current.temperatureCelsius
        }
        let before = (try now(), try forecastFirst(), try oneCall())
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=51.51&shift=35")
        let after = (try now(), try forecastFirst(), try oneCall())
        // The model moves a little with the clock between requests (its 90-minute wave): within a degree.
        #expect(abs(after.0 - before.0 - 35) < 1, "\(before.0) → \(after.0)")
        #expect(abs(after.1 - before.1 - 35) < 1, "\(before.1) → \(after.1)")
        #expect(abs(after.2 - before.2 - 35) < 1, "\(before.2) → \(after.2)")
        // Another latitude is not touched.
        let paris = try OneCall4EndpointTests.get(simulator, "/data/2.5/weather?lat=48.8566&lon=2.3522&units=metric")
            .text
        let parisModel = WeatherModel.reading(latitude: 48.8566, longitude: 2.3522, at: SystemClock.wallSeconds())
            .temperature
        #expect(abs(try WeatherDecoder.decode(Array(paris.utf8)).temperatureCelsius - parisModel) < 1)
        #expect(
            try LoopbackHTTP.request(port: simulator.port, method: "DELETE", path: "/_simulator/weather").status == 200)
        #expect(abs(try now() - before.0) < 1)
        #expect(
            try LoopbackHTTP.request(port: simulator.port, method: "POST", path: "/_simulator/weather?shift=hot").status
                == 400)
        let controls = try LoopbackHTTP.request(port: simulator.port, path: "/_simulator/")
        #expect(controls.status == 200)
        // At the address the caller used (its Host header), as One Call 4.0's links are.
        #expect(
            controls.text.contains("curl -X POST 'http://localhost/_simulator/weather?lat=51.51&shift=35'"),
            "\(controls.text)")
    }

    /// Shifts add up (+35 then -35 is no shift), and a DELETE with lat= (and lon=) clears only that
    /// place's own: another place's shifts, and those made for every place, stay.
    @Test func shiftsAddUpAndAreClearedOnePlaceAtATime() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        // The shift the simulator applies: its answer less the model's own temperature (the model moves
        // a little with the clock between the two: within a degree).
        func shift(_ latitude: Double, _ longitude: Double) throws -> Double {
            let body = try OneCall4EndpointTests.get(
                simulator, "/data/2.5/weather?lat=\(latitude)&lon=\(longitude)&units=metric"
            ).text
            let model = WeatherModel.reading(latitude: latitude, longitude: longitude, at: SystemClock.wallSeconds())
            return try WeatherDecoder.decode(Array(body.utf8)).temperatureCelsius - model.temperature
        }
        func delete(_ query: String) throws -> (status: Int, text: String) {
            let response = try LoopbackHTTP.request(
                port: simulator.port, method: "DELETE", path: "/_simulator/weather\(query)")
            return (response.status, response.text)
        }
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=51.51&shift=35")
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=51.51&shift=-35")
        #expect(abs(try shift(51.51, -0.13)) < 1)
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=51.51&shift=10")
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=48.86&shift=5")
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?shift=1")
        #expect(abs(try shift(51.51, -0.13) - 11) < 1)
        #expect(abs(try shift(48.86, 2.35) - 6) < 1)

        let london = try delete("?lat=51.51")
        // +35 and -35 there added up to none: the +10 is the place's one shift.
        #expect(london.status == 200 && london.text == "1 temperature shifts cleared at latitude 51.51; 2 left\n")
        #expect(abs(try shift(51.51, -0.13) - 1) < 1)
        #expect(abs(try shift(48.86, 2.35) - 6) < 1)

        // Two places at one latitude, told apart by lon=.
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=51.51&lon=-0.13&shift=4")
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=51.51&lon=50&shift=7")
        #expect(abs(try shift(51.51, -0.13) - 5) < 1)
        #expect(abs(try shift(51.51, 50) - 8) < 1)
        #expect(try delete("?lat=51.51&lon=-0.13").text == "1 temperature shifts cleared at 51.51, -0.13; 3 left\n")
        #expect(abs(try shift(51.51, -0.13) - 1) < 1)
        #expect(abs(try shift(51.51, 50) - 8) < 1)

        #expect(try delete("?lat=north").status == 400)
        #expect(try delete("").text == "3 temperature shifts cleared everywhere; 0 left\n")
        #expect(abs(try shift(48.86, 2.35)) < 1)
        #expect(abs(try shift(51.51, 50)) < 1)
    }

    /// Issue 49: 200,000 shifts of ±0.001 at one place grew the list without end (25 MB more, a
    /// forecast from 13 ms to 106 ms), and `lat=nan`, `1e308`, `91`, `lon=-inf` were taken. Now a
    /// place's shifts add up to one, at most 256 places are kept, a total past ±100 °C is refused, and a
    /// coordinate that is not a place is a 400 that says why.
    @Test func shiftsStayOnePerPlaceAndTheirCoordinatesArePlaces() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        func post(_ query: String) throws -> (status: Int, text: String) {
            let response = try LoopbackHTTP.request(
                port: simulator.port, method: "POST", path: "/_simulator/weather?\(query)")
            return (response.status, response.text)
        }
        func stored() -> Int { simulator.state.withLock { $0.shifts.count } }
        for round in 0..<1000 {
            #expect(try post("lat=51.51&shift=\(round % 2 == 0 ? "" : "-")0.001").status == 200)
        }
        #expect(try post("lat=51.51&shift=0.001").status == 200)
        #expect(stored() == 1, "one shift at one place, however many were made")
        #expect(try post("lat=51.51&shift=100").text.hasPrefix("the shift there would total 100.001 °C, past ±100 °C"))

        for bad in ["lat=nan", "lat=inf", "lat=1e308", "lat=91", "lon=-181", "lon=-inf", "lat=-90.01&lon=0"] {
            let answer = try post("\(bad)&shift=1")
            #expect(answer.status == 400 && answer.text.contains("is not a place: give -"), "\(bad): \(answer.text)")
        }
        #expect(try post("lat=91&shift=1").text.hasPrefix("lat=91 is not a place: give -90 to 90; give shift=C"))
        #expect(
            try LoopbackHTTP.request(port: simulator.port, method: "DELETE", path: "/_simulator/weather?lat=nan")
                .status == 400)
        #expect(stored() == 1)

        for place in 1..<Simulator.State.maxShifts {
            #expect(try post("lat=\(-80 + Double(place) / 2)&shift=1").status == 200)
        }
        #expect(stored() == 256)
        let full = try post("lat=89&shift=1")
        #expect(full.status == 400 && full.text.hasPrefix("256 places are shifted already, the most kept"))
        #expect(try post("lat=51.51&shift=1").status == 200, "a place already shifted still adds up")
        #expect(stored() == 256)
    }

    /// `ahead_hours=` shifts only what is forecast that far ahead: the current weather (and so the
    /// current-temperature alerts) stays as it was, the forecast's later steps move.
    @Test func aShiftAheadIsInTheForecastOnly() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let tokyo = "lat=35.6762&lon=139.6503&units=metric"
        try OneCall4EndpointTests.post(simulator, "/_simulator/weather?lat=35.68&shift=-30&ahead_hours=6")
        let wall = SystemClock.wallSeconds()
        let current = try WeatherDecoder.decode(
            Array(try OneCall4EndpointTests.get(simulator, "/data/2.5/weather?\(tokyo)").text.utf8))
        let model = WeatherModel.reading(latitude: 35.6762, longitude: 139.6503, at: wall).temperature
        #expect(abs(current.temperatureCelsius - model) < 1, "\(current.temperatureCelsius) against \(model)")
        let forecast = try ForecastDecoder.decode(
            Array(try OneCall4EndpointTests.get(simulator, "/data/2.5/forecast?\(tokyo)").text.utf8))
        for step in forecast.steps {
            let own = WeatherModel.reading(latitude: 35.6762, longitude: 139.6503, at: step.time).temperature
            // A step within a minute of the 6-hour mark may fall either side of it.
            guard abs(step.time - (wall + 6 * 3600)) > 60 else { continue }
            let expected = step.time >= wall + 6 * 3600 ? own - 30 : own
            // The forecast's own error grows with the lead time: about 0.3 °C a day.
            #expect(abs(step.temperatureCelsius - expected) < 3, "step at \(step.time): \(step.temperatureCelsius)")
        }
        #expect(
            try LoopbackHTTP.request(
                port: simulator.port, method: "POST", path: "/_simulator/weather?shift=-30&ahead_hours=soon"
            ).status == 400)
    }
}
