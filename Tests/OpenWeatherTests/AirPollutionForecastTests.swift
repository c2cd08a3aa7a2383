import Testing

@testable import OpenWeather

@Suite struct AirPollutionForecastTests {
    static let first = 1_764_590_400.0

    static func barcelona() throws -> AirPollutionForecast {
        try AirPollutionForecastDecoder.decode(Fixtures.bytes("air-pollution-forecast-barcelona.json"))
    }

    @Test func decodesEveryHourInGramsPerCubicMeter() throws {
        let forecast = try Self.barcelona()
        #expect(forecast.steps.count == 96)
        #expect(forecast.steps.first?.observationTime == Self.first)
        #expect(forecast.steps.last?.observationTime == Self.first + 95 * 3600)
        // co, nh3, no, no2, o3, pm10, pm2_5, so2 of the first hour.
        #expect(
            forecast.steps[0].gramsPerCubicMeter == [
                0.00029205, 1.91e-06, 1.6e-07, 2.748e-05, 5.348e-05, 1.595e-05, 1.085e-05, 2.37e-06,
            ])
        #expect(forecast.steps.compactMap(\.airQualityIndex).max() == 3)
        #expect(forecast.scaleIndices.count == 96)
        #expect(
            forecast.scaleIndices[0] == AirQualityScale.allCases.map { $0.index(forecast.steps[0].gramsPerCubicMeter) })
    }

    /// A step is the hour starting at its `dt`.
    @Test func theCoveringStepIsTheHourThatHoldsTheTime() throws {
        let forecast = try Self.barcelona()
        #expect(forecast.step(covering: Self.first - 1) == nil)
        #expect(forecast.step(covering: Self.first) == 0)
        #expect(forecast.step(covering: Self.first + 3599) == 0)
        #expect(forecast.step(covering: Self.first + 3600) == 1)
        #expect(forecast.step(covering: Self.first + 96 * 3600 - 1) == 95)
        #expect(forecast.step(covering: Self.first + 96 * 3600) == nil)
    }

    @Test func concentrationsAreLinearBetweenHours() throws {
        let forecast = try Self.barcelona()
        // A quarter of the way from hour 0 (NO₂ 27.48) to hour 1 (27.65 µg/m³): 27.5225.
        #expect(forecast.gramsPerCubicMeter(at: Self.first + 900)?[3] == 2.75225e-05)
        #expect(forecast.gramsPerCubicMeter(at: Self.first + 3600)?[3] == 2.765e-05)
        #expect(forecast.gramsPerCubicMeter(at: Self.first + 95 * 3600)?[3] == forecast.steps[95].gramsPerCubicMeter[3])
        #expect(forecast.gramsPerCubicMeter(at: Self.first + 95 * 3600 + 1) == nil)
        #expect(forecast.gramsPerCubicMeter(at: Self.first - 1) == nil)
        // A pollutant one side lacks is unknown in between.
        let gap = AirPollutionForecast(steps: [
            AirPollution(airQualityIndex: 1, gramsPerCubicMeter: [1e-6, nil], observationTime: 0),
            AirPollution(airQualityIndex: 1, gramsPerCubicMeter: [3e-6, 1e-6], observationTime: 3600),
        ])
        #expect(gap.gramsPerCubicMeter(at: 1800) == [2e-6, nil])
    }

    /// The hours overlapping the window; nil when the forecast ends before it does.
    @Test func windowsTakeTheOverlappingHours() throws {
        let forecast = try Self.barcelona()
        #expect(forecast.steps(from: Self.first + 1800, to: Self.first + 1800 + 24 * 3600) == 0..<25)
        #expect(forecast.steps(from: Self.first, to: Self.first + 24 * 3600) == 0..<24)
        #expect(forecast.steps(from: Self.first, to: Self.first + 96 * 3600) == 0..<96)
        #expect(forecast.steps(from: Self.first + 1, to: Self.first + 96 * 3600 + 1) == nil)
    }

    @Test func requestHasCoordinatesAndNoUnits() {
        let request = AirPollutionForecast.request(latitude: 41.3851, longitude: 2.1734)
        #expect(request.path == "/data/2.5/air_pollution/forecast")
        #expect(request.query == [.init("lat", "41.3851"), .init("lon", "2.1734")])
    }

    static let hour = #"{"main":{"aqi":2},"components":{"co":292.05,"no2":27.48,"pm2_5":10.85},"dt":1764590400}"#

    @Test(arguments: [
        (#"{"list":[]}"#, "`list` is empty"),
        (#"{"list":{}}"#, "`list` is an object, not a list"),
        (
            #"{"list":[\#(hour.replacing("\"dt\":1764590400", with: "\"dt\":null"))]}"#,
            "`list` holds no usable forecast hour: 1 skipped, the first because missing field `list[0].dt`"
        ),
        (
            #"{"list":[\#(hour.replacing("\"dt\":1764590400", with: "\"dt\":0")),3]}"#,
            "`list` holds no usable forecast hour: 2 skipped, the first because `list[0].dt`"
        ),
    ])
    func rejectsBrokenForecasts(body: String, reason: String) {
        #expect {
            try AirPollutionForecastDecoder.decode(Array(body.utf8))
        } throws: { error in
            guard let error = error as? OpenWeatherError, case .decode(let message) = error else { return false }
            return message.contains(reason)
        }
    }

    /// A real forecast carried `main.aqi` 0 in an hour whose concentrations are all there: only that
    /// hour's own index is unknown (noted); the hour, its concentrations and its scales are kept, so
    /// nothing around it goes missing.
    @Test func anHourWithAnIndexOfZeroKeepsItsConcentrations() throws {
        let forecast = try AirPollutionForecastDecoder.decode(Fixtures.bytes("air-pollution-forecast-aqi-zero.json"))
        let whole = try Self.barcelona()
        #expect(forecast.steps.count == 96)
        #expect(forecast.gaps.skipped.isEmpty)
        #expect(forecast.gaps.fields.map(\.reason) == ["`list[26].main.aqi` = 0.0 is outside 1.0...5.0"])
        #expect(forecast.steps[26].airQualityIndex == nil)
        #expect(forecast.steps[26].gramsPerCubicMeter == whole.steps[26].gramsPerCubicMeter)
        #expect(forecast.scaleIndices[26] == whole.scaleIndices[26] && !forecast.scaleIndices[26].contains(nil))
        let hour = Self.first + 26 * 3600
        #expect(forecast.step(covering: hour + 1) == 26)
        #expect(forecast.gramsPerCubicMeter(at: hour - 1800) != nil)
        #expect(forecast.steps(from: Self.first, to: Self.first + 72 * 3600) == 0..<72)
        // An index that is not a whole number is that hour's alone to lose too; the current answer's is required.
        let half = Self.hour.replacing(#""aqi":2"#, with: #""aqi":2.5"#)
        let kept = try AirPollutionForecastDecoder.decode(Array(#"{"list":[\#(half)]}"#.utf8))
        #expect(kept.steps.map(\.airQualityIndex) == [nil])
        #expect(kept.gaps.fields.first?.reason == "`list[0].main.aqi` = 2.5 is not a whole number")
        #expect(throws: OpenWeatherError.self) { try AirPollutionDecoder.decode(Array(#"{"list":[\#(half)]}"#.utf8)) }
    }

    @Test func hoursOutOfOrderAreSkipped() throws {
        let later = Self.hour.replacing("1764590400", with: "1764594000")
        let forecast = try AirPollutionForecastDecoder.decode(
            Array(#"{"list":[\#(Self.hour),\#(Self.hour),\#(later)]}"#.utf8))
        #expect(forecast.steps.map(\.observationTime) == [1_764_590_400, 1_764_594_000])
        #expect(forecast.gaps.skipped.map(\.reason) == ["`list[1].dt` = 1764590400 is not after the hour before it"])
    }
}
