import Testing

@testable import OpenWeather

@Suite struct ForecastTests {
    @Test func decodesZoccaInBaseUnits() throws {
        let forecast = try ForecastDecoder.decode(Fixtures.bytes("forecast-zocca.json"))
        #expect(forecast.steps.count == 40)
        #expect(forecast.steps.allSatisfy { $0.seconds == 10_800 })
        #expect(forecast.issued == 1_661_871_600 - 10_800)
        let first = try #require(forecast.steps.first)
        #expect(first.time == 1_661_871_600)
        #expect(first.temperatureCelsius == 25)
        #expect(first.feelsLikeCelsius == 24.6)
        #expect(first.humidityRatio == 0.6)
        #expect(first.pressurePascals == 101_500)
        #expect(first.windSpeedMetersPerSecond == 0.6)
        #expect(first.windGustMetersPerSecond == 1.2)
        #expect(first.cloudinessRatio == 0)
        #expect(first.precipitationProbability == 0.04)
        #expect(first.rainMeters == 0)
        #expect(first.conditionID == 800)
        #expect(forecast.steps.last?.time == 1_662_292_800)
        #expect(forecast.steps.contains { ($0.rainMeters ?? 0) > 0 })
        #expect(first.windDirectionDegrees == 349 && first.visibilityMeters == 10_000)
        #expect(forecast.gaps.missing == ["list[].visibility"], "visibility is optional, and some steps have none")
    }

    /// A step out of order or without a usable temperature is skipped (noted), the others used; a
    /// forecast of no usable step is a decode failure that says why.
    @Test func stepsOutOfOrderOrAbsurdAreSkipped() throws {
        let step = #"{"dt":1000,"main":{"temp":1,"feels_like":1,"humidity":50,"pressure":1000},"weather":[{"id":800}]}"#
        let later = step.replacing("\"dt\":1000", with: "\"dt\":2000")
        let backwards = try ForecastDecoder.decode(Array(#"{"list":[\#(later),\#(step)]}"#.utf8))
        #expect(backwards.steps.map(\.time) == [2000])
        #expect(
            backwards.gaps.skipped == [
                .init(field: "list", reason: "`list[1].dt` = 1000 is not after the step before it", count: 1)
            ])
        #expect(throws: OpenWeatherError.decode("`list` is empty: no forecast step")) {
            try ForecastDecoder.decode(Array(#"{"cod":"200","list":[]}"#.utf8))
        }
        let hot = step.replacing("\"temp\":1", with: "\"temp\":99")
        #expect(
            throws: OpenWeatherError.decode(
                """
                `list` holds no usable forecast step: 1 skipped, the first because `list[0].main.temp` = 99.0 is \
                outside -100.0...70.0
                """
            )
        ) {
            try ForecastDecoder.decode(Array(#"{"list":[\#(hot)]}"#.utf8))
        }
        #expect(try ForecastDecoder.decode(Array(#"{"list":[\#(hot),\#(later)]}"#.utf8)).steps.map(\.time) == [2000])
    }

    /// A hostile list of many broken entries: each skipped and counted, one reason kept, the good one used.
    @Test func manyBrokenEntriesAreCountedWithOneReason() throws {
        let step = #"{"dt":1000,"main":{"temp":1},"weather":[{"id":800}]}"#
        let body = #"{"list":["# + Array(repeating: "1", count: 20_000).joined(separator: ",") + "," + step + "]}"
        let forecast = try ForecastDecoder.decode(Array(body.utf8))
        #expect(forecast.steps.map(\.time) == [1000])
        #expect(
            forecast.gaps.skipped == [
                .init(field: "list", reason: "`list[0]` is a number, not an object", count: 20_000)
            ])
    }

    /// Every entry without `main.feels_like` (older answers): the forecast stands, only the felt
    /// temperature is unknown.
    @Test func aForecastWithoutFeelsLikeKeepsEverythingElse() throws {
        let text = String(decoding: Fixtures.bytes("forecast-zocca.json"), as: UTF8.self)
        let stripped = text.replacing(/"feels_like":[-0-9.]+,/, with: "")
        #expect(stripped != text)
        let forecast = try ForecastDecoder.decode(Array(stripped.utf8))
        let whole = try ForecastDecoder.decode(Fixtures.bytes("forecast-zocca.json"))
        #expect(forecast.steps.count == 40 && forecast.steps.allSatisfy { $0.feelsLikeCelsius == nil })
        #expect(forecast.steps.map(\.temperatureCelsius) == whole.steps.map(\.temperatureCelsius))
        #expect(forecast.gaps.missing == ["list[].main.feels_like"] + whole.gaps.missing)
    }

    /// A step skipped in the 2.5 forecast leaves a hole of 3 hours: nothing is read in it, and a
    /// window over it is not shown (its totals would miss the step); around it all is as before.
    @Test func aMissingStepIsAHole() throws {
        var steps = Self.simple.steps
        steps.append(Forecast.Step(time: 43_200, seconds: 10_800, temperatureCelsius: 0, rainMeters: 0.001))
        let holed = Forecast(steps: steps, issued: -10_800)
        #expect(holed.step(covering: 30_000) == nil && holed.step(covering: 32_401)?.time == 43_200)
        #expect(holed.value({ $0.temperatureCelsius }, at: 30_000) == nil)
        #expect(holed.value({ $0.temperatureCelsius }, at: 43_200) == 0)
        #expect(holed.window(from: 0, to: 43_200) == nil)
        #expect(holed.window(from: 0, to: 21_600) == Self.simple.window(from: 0, to: 21_600))
        #expect(holed.window(from: 32_400, to: 43_200)?.rainMeters == 0.001)
        // A quantity a step lacks: the window's total of it is unknown, the rest stands.
        let window = try #require(holed.window(from: 32_400, to: 43_200))
        #expect(
            window.precipitationProbabilityMax == nil && window.snowMeters == nil && window.temperatureMinCelsius == 0)
    }

    /// Three steps 3 hours apart: 10, 4, -2 °C; 0, 3, 6 mm of rain; pop 0.2, 0.5, 0.9.
    static let simple = Forecast(
        steps: [(0.0, 10.0, 0.0, 0.2), (10_800, 4, 0.003, 0.5), (21_600, -2, 0.006, 0.9)].map {
            time, temperature, rain, pop in
            Forecast.Step(
                time: time, seconds: 10_800, temperatureCelsius: temperature, feelsLikeCelsius: temperature,
                humidityRatio: 0.5,
                pressurePascals: 100_000, windSpeedMetersPerSecond: 1,
                windGustMetersPerSecond: time == 10_800 ? nil : 2,
                cloudinessRatio: 0, precipitationProbability: pop, rainMeters: rain, snowMeters: 0, conditionID: 500)
        },
        issued: -10_800)

    @Test func interpolatesBetweenTheStepsAroundATime() {
        let temperature: (Forecast.Step) -> Double? = { $0.temperatureCelsius }
        #expect(Self.simple.value(temperature, at: 0) == 10)
        #expect(Self.simple.value(temperature, at: 5_400) == 7)
        #expect(Self.simple.value(temperature, at: 2_700) == 8.5)
        #expect(Self.simple.value(temperature, at: 16_200) == 1)
        #expect(Self.simple.value(temperature, at: 21_600) == -2)
        #expect(Self.simple.value(temperature, at: -1) == nil, "before the first step")
        #expect(Self.simple.value(temperature, at: 21_601) == nil, "after the last step")
        #expect(Self.simple.value({ $0.windGustMetersPerSecond }, at: 5_400) == nil, "a step without gusts")
        #expect(Self.simple.value({ $0.windGustMetersPerSecond }, at: 0) == 2)
    }

    /// A step covers the 3 hours up to its time (its rain is "the last 3 hours").
    @Test func theStepCoveringATimeIsTheFirstAtOrAfterIt() {
        #expect(Self.simple.step(covering: 5_400)?.time == 10_800)
        #expect(Self.simple.step(covering: 10_800)?.time == 10_800)
        #expect(Self.simple.step(covering: 10_801)?.time == 21_600)
        #expect(Self.simple.step(covering: -10_799)?.time == 0)
        #expect(Self.simple.step(covering: -10_800) == nil)
        #expect(Self.simple.step(covering: 21_601) == nil)
    }

    /// The gust alert's forecast: the strongest gust of the steps in the window, not the last one;
    /// nil where no step in it reports a gust.
    @Test func windowsTakeTheStrongestGust() throws {
        let gusts: [Double?] = [5, nil, 12, 7]
        let forecast = Forecast(
            steps: gusts.enumerated().map { index, gust in
                Forecast.Step(
                    time: Double(index) * 10_800, seconds: 10_800, temperatureCelsius: 10, feelsLikeCelsius: 10,
                    humidityRatio: 0.5, pressurePascals: 100_000,
                    windSpeedMetersPerSecond: 1, windGustMetersPerSecond: gust, cloudinessRatio: 0,
                    precipitationProbability: 0, rainMeters: 0, snowMeters: 0, conditionID: 800)
            },
            issued: -10_800)
        #expect(try #require(forecast.window(from: 0, to: 32_400)).windGustMaxMetersPerSecond == 12)
        #expect(try #require(forecast.window(from: -5_400, to: 10_800)).windGustMaxMetersPerSecond == 5)
        #expect(
            try #require(forecast.window(from: 0, to: 10_800)).windGustMaxMetersPerSecond == nil,
            "only the step without a gust")
    }

    @Test func windowsTakeExtremesAndProportionalTotals() throws {
        // 1.5 h to 4.5 h: 7 °C at the start, the 4 °C step, 1 °C at the end; half of each of the last two steps' rain.
        let window = try #require(Self.simple.window(from: 5_400, to: 16_200))
        #expect(window.temperatureMinCelsius == 1)
        #expect(window.temperatureMaxCelsius == 7)
        #expect(window.precipitationProbabilityMax == 0.9)
        #expect(abs((window.rainMeters ?? 1) - 0.0045) < 1e-12)
        #expect(window.snowMeters == 0)
        // The whole forecast from its first step: every step counts, the first one's period is before it.
        let whole = try #require(Self.simple.window(from: 0, to: 21_600))
        #expect(whole.temperatureMinCelsius == -2)
        #expect(whole.temperatureMaxCelsius == 10)
        #expect(whole.precipitationProbabilityMax == 0.9)
        #expect(abs((whole.rainMeters ?? 1) - 0.009) < 1e-12)
        #expect(Self.simple.window(from: 5_400, to: 21_601) == nil, "the forecast does not reach the end")
        // Starting before the first step: the start has no temperature, the steps inside do.
        let early = try #require(Self.simple.window(from: -3_600, to: 10_800))
        #expect(early.temperatureMinCelsius == 4)
        #expect(early.temperatureMaxCelsius == 10)
        #expect(early.precipitationProbabilityMax == 0.5)
    }

    /// One Call's shape: steps, then days; a day's step covers the time since the step before it and
    /// brings its own extremes.
    @Test func daysAfterTheStepsCoverTheirWholeSpan() throws {
        func step(
            _ time: Double, _ temperature: Double, rain: Double, pop: Double, low: Double? = nil, high: Double? = nil
        ) -> Forecast.Step {
            Forecast.Step(
                time: time, seconds: low == nil ? 10_800 : 86_400, temperatureCelsius: temperature,
                feelsLikeCelsius: temperature, humidityRatio: 0.5, pressurePascals: 100_000,
                windSpeedMetersPerSecond: 1, windGustMetersPerSecond: nil, cloudinessRatio: 0,
                precipitationProbability: pop,
                rainMeters: rain, snowMeters: 0, conditionID: 500, dayMinimumCelsius: low, dayMaximumCelsius: high)
        }
        let forecast = Forecast(
            steps: [
                step(0, 10, rain: 0, pop: 0.2), step(10_800, 4, rain: 0.003, pop: 0.5),
                step(97_200, 20, rain: 0.010, pop: 0.9, low: -5, high: 25),
                step(183_600, 15, rain: 0, pop: 0.1, low: 0, high: 18),
            ],
            issued: -10_800)
        #expect(forecast.step(covering: 50_000)?.time == 97_200)
        #expect(forecast.value({ $0.temperatureCelsius }, at: 54_000) == 12)
        let window = try #require(forecast.window(from: 5_400, to: 100_000))
        // 7 °C now, the 4 °C step, the day's -5 and 25 °C; its end falls in the next day's span.
        #expect(window.temperatureMinCelsius == -5)
        #expect(window.temperatureMaxCelsius == 25)
        #expect(window.precipitationProbabilityMax == 0.9)
        // Half of the 3 mm step and the whole 10 mm day: steps alone, each amount over its span.
        #expect(window.rainMeters == 0.0115)
    }

    /// An hourly step of One Call's shape, its rain in millimetres.
    static func hour(_ time: Double, rain: Double = 0) -> Forecast.Step {
        Forecast.Step(time: time, seconds: 3600, temperatureCelsius: 10, rainMeters: rain / 1000, snowMeters: 0)
    }

    /// A One Call day at its noon `dt`, its total in millimetres.
    static func day(_ time: Double, rain: Double) -> Forecast.Step {
        Forecast.Step(
            time: time, seconds: 86_400, temperatureCelsius: 10, rainMeters: rain / 1000, snowMeters: rain / 2000,
            dayMinimumCelsius: 5, dayMaximumCelsius: 15)
    }

    /// The issue's case: 48 hours up to the third day's noon, which brings 15.68 mm over its calendar day,
    /// 7.8 mm of it in its first twelve hourly steps. Its second half falls after the hours, inside
    /// the 72 hours: counted, not spread over the next day's (dry) span, nor lost between two steps.
    @Test func aOneCallDayFallsOnItsOwnDayAfterTheHours() throws {
        let noon = 2 * 86_400 + 43_200.0
        let hours = (0..<48).map { Self.hour(noon - Double(47 - $0) * 3600, rain: $0 >= 36 ? 0.65 : 0) }
        let days = [86_400 + 43_200.0, noon, noon + 86_400, noon + 172_800].enumerated().map {
            Self.day($1, rain: [3, 15.68, 0, 1][$0])
        }
        let forecast = Forecast(hours: hours, days: days, issued: hours[0].time)
        #expect(forecast.steps.map(\.time).suffix(3) == [noon, noon + 86_400, noon + 172_800], "days after the hours")
        let now = hours[0].time
        let window = try #require(forecast.window(from: now, to: now + 72 * 3600))
        #expect(window.rainMeters == 0.01564, "7.8 mm in the hours, 7.84 mm of the day after them")
        #expect(window.snowMeters == 0.00392)
        #expect(window.temperatureMinCelsius == 5 && window.temperatureMaxCelsius == 15, "the next day's extremes")
        // The day after: its noon ± 12 h; a window of half of it holds half its total.
        #expect(forecast.window(from: noon + 172_800 - 43_200, to: noon + 172_800)?.rainMeters == 0.0005)
    }

    /// A day whose noon follows the hours: the part of it before the last hour is the hours'.
    @Test func texarkanasDaysSpreadOverTheirLocalDays() throws {
        let forecast = try OneCallDecoder.decode(Fixtures.bytes("onecall-texarkana-alerts.json")).hourly
        func near(_ meters: Double?, _ millimeters: Double) -> Bool {
            abs((meters ?? .nan) * 1000 - millimeters) < 1e-6
        }
        let last = 1_685_095_200.0  // 05:00 local (UTC-5), the 48th hour
        let midnight = last + 19 * 3600  // the end of the third day, 0.55 mm over its 24 hours
        #expect(near(forecast.window(from: last, to: midnight)?.rainMeters, 0.55 * 19 / 24), "19 of its 24 hours")
        #expect(near(forecast.window(from: midnight, to: midnight + 86_400)?.rainMeters, 0.75), "the fourth, whole")
        #expect(near(forecast.window(from: midnight - 3600, to: midnight + 3600)?.rainMeters, (0.55 + 0.75) / 24))
    }

    /// Where clocks go back, noon to noon is 25 hours: the days meet halfway, leaving no hole.
    @Test func daysTwentyFiveHoursApartMeetHalfway() throws {
        let forecast = Forecast(
            hours: [Self.hour(-3600), Self.hour(0)], days: [Self.day(43_200, rain: 24), Self.day(133_200, rain: 88.2)],
            issued: 0)
        let window = try #require(forecast.window(from: 0, to: 133_200))
        #expect(window.rainMeters == 0.069, "the first day whole, 12.5 h of the second's 24.5 h")
    }
}
