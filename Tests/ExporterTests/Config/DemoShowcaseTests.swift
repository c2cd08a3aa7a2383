import OpenWeather
import Testing

@testable import Exporter
@testable import Simulator

/// Issue 40: the demo's showcase is a forecast alert that reaches Alertmanager's receiver. With the
/// cold spell the demo gives the simulator, Tokyo's forecast is below its lower threshold within any
/// 24 hours of the year while its current temperature never is, so no current alert mutes it.
@Suite struct DemoShowcaseTests {
    @Test func tokyosForecastCrossesItsThresholdWhileItsTemperatureStaysAbove() throws {
        let spell = DemoLocations.coldSpell
        let tokyo = try #require(DemoLocations.all.first { $0.name == spell.place })
        let coordinates = try #require(tokyo.coordinates)
        #expect(coordinates.latitude == spell.latitude)
        let below = try #require(tokyo.alerts.resolved(defaults: .builtIn).belowCelsius)
        let shift = TemperatureShift(latitude: spell.latitude, celsius: spell.celsius, ahead: spell.hoursAhead * 3600)
        let start = 1_767_225_600.0  // 2026-01-01T00:00:00Z
        var coldestNow = Double.infinity
        var warmestLow = -Double.infinity
        for day in stride(from: 0.0, to: 365, by: 5) {
            for hour in stride(from: 0.0, to: 24, by: 3) {
                let now = start + day * 86_400 + hour * 3600
                let (current, forecast) = try WeatherModel.$shifts.withValue([shift.at(now: now)]) {
                    (
                        WeatherModel.reading(latitude: coordinates.latitude, longitude: coordinates.longitude, at: now)
                            .temperature,
                        try ForecastDecoder.decode(
                            Array(
                                ForecastJSON.render(
                                    latitude: coordinates.latitude, longitude: coordinates.longitude, at: now,
                                    units: "metric"
                                ).utf8))
                    )
                }
                coldestNow = min(coldestNow, current)
                let low = forecast.steps.filter { $0.time > now && $0.time <= now + 86_400 }.map(\.temperatureCelsius)
                    .min()!
                warmestLow = max(warmestLow, low)
            }
        }
        // With room: a degree of hysteresis, and the forecast's own error.
        #expect(coldestNow > below + 2, "Tokyo's coldest temperature of the year is \(coldestNow) °C")
        #expect(warmestLow < below - 2, "Tokyo's warmest 24-hour forecast minimum of the year is \(warmestLow) °C")
    }

    /// Only the demo's own places get the spell: a demo of the user's places is left as the model has it.
    @Test func onlyTheDemosOwnPlacesGetTheSpell() throws {
        #expect(try load(["--demo"], environment: [:]).demoColdSpell?.place == "Tokyo")
        #expect(try load(["--demo", "--location", "Tokyo=35.6762,139.6503"], environment: [:]).demoColdSpell == nil)
    }
}
