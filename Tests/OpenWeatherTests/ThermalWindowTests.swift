import Testing

@testable import OpenWeather

/// Issue 41, where the indices meet the readings: a reading's indices from what it carries (none made
/// up for an input it lacks), and the forecast windows' extremes with the temperature's semantics.
@Suite struct ThermalWindowTests {
    @Test func aReadingsIndicesAreTheFormulasOfItsInputs() throws {
        let values = ThermalIndex.Values(temperature: 30, humidityRatio: 0.5, windSpeed: 2)
        #expect(values.heatIndex == ThermalIndex.heatIndex(temperature: 30, relativeHumidity: 50))
        #expect(values.humidex == ThermalIndex.humidex(temperature: 30, relativeHumidity: 50))
        #expect(values.windChill == 30, "above 10 °C the wind chill is the temperature")
        #expect(values.wetBulb == ThermalIndex.wetBulb(temperature: 30, relativeHumidity: 50))
        #expect(
            values.apparentTemperature
                == ThermalIndex.apparentTemperature(temperature: 30, relativeHumidity: 50, windSpeed: 2))
        // The publishers' values: NWS chart 96 °F at 50 % is 108 °F; Stull's example 20 °C at 50 % is
        // 13.7 °C; Environment Canada's chart -20 °C in 20 km/h is -30.
        let hot = try #require(
            ThermalIndex.Values(temperature: (96 - 32) * 5 / 9, humidityRatio: 0.5, windSpeed: 1).heatIndex)
        #expect(abs(hot * 9 / 5 + 32 - 108) <= 1)
        let stull = try #require(ThermalIndex.Values(temperature: 20, humidityRatio: 0.5, windSpeed: nil).wetBulb)
        #expect((stull * 10).rounded() / 10 == 13.7)
        let cold = try #require(
            ThermalIndex.Values(temperature: -20, humidityRatio: nil, windSpeed: 20 / 3.6).windChill)
        #expect(cold.rounded() == -30)
    }

    @Test func anInputMissingLeavesItsIndicesOut() {
        let dry = ThermalIndex.Values(temperature: 30, humidityRatio: nil, windSpeed: 2)
        #expect(dry.heatIndex == nil && dry.humidex == nil && dry.wetBulb == nil && dry.apparentTemperature == nil)
        #expect(dry.windChill == 30)
        let calm = ThermalIndex.Values(temperature: -5, humidityRatio: 0.5, windSpeed: nil)
        #expect(calm.windChill == nil && calm.apparentTemperature == nil)
        #expect(calm.heatIndex != nil && calm.humidex != nil && calm.wetBulb != nil)
        // Outside Stull's domain (under 5 % humidity, above 50 °C): no wet bulb, the others stay.
        let desert = ThermalIndex.Values(temperature: 45, humidityRatio: 0.04, windSpeed: 3)
        #expect(desert.wetBulb == nil && desert.heatIndex != nil)
        #expect(ThermalIndex.Values(temperature: 51, humidityRatio: 0.2, windSpeed: 3).wetBulb == nil)
    }

    /// The humidity as the answer gave it: 0.29 is 29 %, not the 28.999999999999996 a product gives.
    @Test func theHumidityIsThePercentageSent() {
        let values = ThermalIndex.Values(temperature: 35, humidityRatio: 0.29, windSpeed: 1)
        #expect(values.heatIndex == ThermalIndex.heatIndex(temperature: 35, relativeHumidity: 29))
        #expect(values.wetBulb == ThermalIndex.wetBulb(temperature: 35, relativeHumidity: 29))
    }

    static func step(_ hours: Double, _ celsius: Double, humidity: Double?, wind: Double?) -> Forecast.Step {
        Forecast.Step(
            time: hours * 3600, seconds: 10_800, temperatureCelsius: celsius, humidityRatio: humidity,
            windSpeedMetersPerSecond: wind)
    }

    /// Hot first, then cooling, then cold and windy.
    static let forecast = Forecast(
        steps: [
            step(0, 36, humidity: 0.5, wind: 1), step(3, 33, humidity: 0.5, wind: 2),
            step(6, 20, humidity: 0.6, wind: 3), step(9, -10, humidity: 0.8, wind: 5),
            step(12, -5, humidity: 0.7, wind: 8), step(15, 0, humidity: 0.7, wind: 2),
        ], issued: -10_800)

    static func index(_ at: Int) -> ThermalIndex.Values { forecast.thermal[at] }

    @Test func windowsTakeTheIndicesExtremesWithTheirEndsInterpolated() throws {
        // 1.5 h to 10.5 h: the start halfway between the first two steps, the end halfway between the last two
        // of the window; the steps at 3, 6 and 9 h inside.
        let window = try #require(Self.forecast.window(from: 5_400, to: 37_800))
        let start = (Self.index(0).heatIndex! + Self.index(1).heatIndex!) / 2
        #expect(abs(window.heatIndexMaxCelsius! - start) < 1e-9, "the hottest is at the start, between two steps")
        #expect(abs(window.wetBulbMaxCelsius! - (Self.index(0).wetBulb! + Self.index(1).wetBulb!) / 2) < 1e-9)
        #expect(window.windChillMinCelsius == Self.index(3).windChill!, "the step at 9 h")
        // The whole forecast: the first step is its start.
        let whole = try #require(Self.forecast.window(from: 0, to: 54_000))
        #expect(whole.heatIndexMaxCelsius == Self.index(0).heatIndex)
        #expect(whole.windChillMinCelsius == [3, 4].map { Self.index($0).windChill! }.min())
        #expect(Self.index(4).windChill! < -12, "-5 °C in 29 km/h")
    }

    @Test func aStepInsideWithoutAnIndexLeavesTheWindowsExtremeOut() throws {
        var steps = Self.forecast.steps
        steps[2].humidityRatio = nil
        steps[4].windSpeedMetersPerSecond = nil
        steps[1].humidityRatio = 0.03
        let forecast = Forecast(steps: steps, issued: -10_800)
        let window = try #require(forecast.window(from: 5_400, to: 37_800))
        #expect(window.heatIndexMaxCelsius == nil && window.wetBulbMaxCelsius == nil)
        #expect(window.windChillMinCelsius == forecast.thermal[3].windChill, "the wind is there up to 10.5 h")
        #expect(window.temperatureMaxCelsius == 34.5, "the temperature's extremes stay")
        // Only around the start: the start is left out, the rest counts (here the end, on the step at 9 h).
        let later = try #require(forecast.window(from: 23_400, to: 32_400))
        #expect(later.heatIndexMaxCelsius == forecast.thermal[3].heatIndex)
        #expect(try #require(forecast.window(from: 36_000, to: 50_000)).windChillMinCelsius == nil)
        // A step outside Stull's domain inside: no wet bulb, the heat index stays.
        let dry = try #require(forecast.window(from: 0, to: 10_800 + 1))
        #expect(dry.wetBulbMaxCelsius == nil && dry.heatIndexMaxCelsius != nil)
    }
}
