import Testing

@testable import OpenWeather

@Suite struct OneCallTests {
    @Test func decodesTexarkanaInBaseUnits() throws {
        let oneCall = try OneCallDecoder.decode(Fixtures.bytes("onecall-texarkana-alerts.json"))
        #expect(oneCall.current.temperatureCelsius == 19.4)
        #expect(oneCall.current.temperatureMinCelsius == nil)
        #expect(oneCall.current.humidityRatio == 0.89)
        #expect(oneCall.current.pressurePascals == 101_400)
        #expect(oneCall.current.windSpeedMetersPerSecond == 3.13)
        #expect(oneCall.current.windGustMetersPerSecond == 6.71)
        #expect(oneCall.current.cloudinessRatio == 0.53)
        #expect(oneCall.current.observationTime == 1_684_929_490)
        #expect(oneCall.current.primaryCondition?.id == 803)
        #expect(oneCall.dewPointCelsius == 17.54)
        #expect(oneCall.uvIndex == 0.16)
        #expect(oneCall.hourly.steps.count == 48 + 6, "48 hours, then the 6 days after the last hour")
        #expect(oneCall.hourly.steps[48].time == 1_685_120_400 && oneCall.hourly.steps[48].dayMinimumCelsius != nil)
        #expect(oneCall.hourly.steps[0].seconds == 3600 && oneCall.hourly.steps[48].seconds == 86_400)
        #expect(oneCall.hourly.issued == 1_684_929_490)
        #expect(oneCall.hourly.steps[0].dewPointCelsius == 17.3)
        #expect(oneCall.hourly.steps[0].conditionID == 500)
        #expect(oneCall.daily.count == 8)
        #expect(
            oneCall.daily[0] == .init(time: 1_684_947_600, temperatureMinCelsius: 16.5, temperatureMaxCelsius: 27.3))
        #expect(oneCall.alerts.map(\.event) == ["Heat Advisory", "Flood Watch"])
        #expect(oneCall.alerts[0].start == 1_684_940_400 && oneCall.alerts[0].end == 1_684_976_400)
    }

    @Test func theSubscriptionAnswerIsToldApartFromABadKey() {
        #expect(
            OneCall.needsSubscription(
                .http(
                    status: 401,
                    message:
                        """
                        Please note that using One Call 3.0 requires a separate subscription to the One Call by Call \
                        plan.
                        """,
                    retryAfterSeconds: nil)))
        #expect(!OneCall.needsSubscription(.http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil)))
        #expect(!OneCall.needsSubscription(.http(status: 500, message: "subscription", retryAfterSeconds: nil)))
    }

    /// A key without the subscription works for the free APIs: its reason must not send the reader to the key.
    @Test func theSubscriptionAnswerDoesNotBlameTheKey() {
        let noSubscription = OpenWeatherError.http(
            status: 401,
            message:
                "Please note that using One Call 3.0 requires a separate subscription to the One Call by Call plan.",
            retryAfterSeconds: nil)
        #expect(noSubscription.description.hasSuffix("(the key is valid, but not subscribed to this API)"))
        #expect(!noSubscription.description.contains("wrong"))
        let badKey = OpenWeatherError.http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil)
        #expect(badKey.description.contains("the API key is missing, wrong, or not active yet"))
    }

    @Test func withoutAlertsThereAreNone() throws {
        let body =
            #"""
            {"lat":1,"lon":2,"timezone_offset":0,"current":{"dt":1000,"temp":10,"feels_like":9,"pressure":1000,\#
            "humidity":50,"dew_point":0,"uvi":1,"weather":[{"id":800}]}}
            """#
        let oneCall = try OneCallDecoder.decode(Array(body.utf8))
        #expect(oneCall.alerts.isEmpty && oneCall.hourly.steps.isEmpty && oneCall.daily.isEmpty)
    }
}

/// The minute forecast: decoded in m/s and range-checked, and read from the render's now.
@Suite struct NowcastTests {
    /// Texarkana's minute forecast: dry for 30 minutes from 1684929480, then 0.2 mm/h rising by 0.2 each minute to 6.2.
    static let first = 1_684_929_480.0

    @Test func decodesTheMinuteForecast() throws {
        let oneCall = try OneCallDecoder.decode(Fixtures.bytes("onecall-texarkana-alerts.json"))
        #expect(oneCall.minutely.count == 61)
        #expect(oneCall.minutely.first == .init(time: Self.first, precipitationMetersPerSecond: 0))
        #expect(oneCall.minutely[30].time == Self.first + 1800)
        #expect(abs(oneCall.minutely[30].precipitationMetersPerSecond * 3_600_000 - 0.2) < 1e-12, "mm/h to m/s")
        // At the answer's own time (10 s into the first minute): rain from minute 30; 0.2 + 0.4 + ... + 6.2 mm/h, a
        // minute each.
        let nowcast = try #require(oneCall.nowcast(at: oneCall.current.observationTime))
        #expect(nowcast.nextStart == Self.first + 1800)
        #expect(abs(nowcast.amountMeters - 99.2 / 60 / 1000) < 1e-12)
    }

    @Test func anAnswerWithoutMinutesHasNoNowcast() throws {
        let body =
            #"""
            {"lat":1,"lon":2,"current":{"dt":1000,"temp":10,"feels_like":9,"pressure":1000,"humidity":50,\#
            "dew_point":0,"weather":[{"id":800}]}}
            """#
        let oneCall = try OneCallDecoder.decode(Array(body.utf8))
        #expect(oneCall.minutely.isEmpty && oneCall.nowcast(at: 1000) == nil)
    }

    /// A minute without a usable `dt` or `precipitation`, or too close to the one before, is skipped
    /// (noted); the others are used.
    @Test func absurdMinutesAreSkipped() throws {
        func body(_ minutely: String) -> [UInt8] {
            Array(
                #"""
                {"current":{"dt":1000,"temp":10,"feels_like":9,"pressure":1000,"humidity":50,"dew_point":0,\#
                "weather":[{"id":800}]},"minutely":[\#(minutely)]}
                """#
                .utf8)
        }
        for (minutely, reason) in [
            (#"{"dt":960,"precipitation":-1}"#, "`minutely[0].precipitation` = -1.0 is outside"),
            (#"{"dt":960,"precipitation":2001}"#, "`minutely[0].precipitation` = 2001.0 is outside"),
            (#"{"dt":960}"#, "missing field `minutely[0].precipitation`"),
            (#"{"dt":0,"precipitation":0}"#, "`minutely[0].dt` = 0.0 is outside"),
            (
                #"{"dt":960,"precipitation":0},{"dt":990,"precipitation":0}"#,
                "`minutely[1].dt` = 990 is less than a minute after the step before it"
            ),
            (
                #"{"dt":960,"precipitation":0},{"dt":960,"precipitation":0}"#,
                "`minutely[1].dt` = 960 is less than a minute after the step before it"
            ),
        ] {
            let oneCall = try OneCallDecoder.decode(body(minutely))
            #expect(oneCall.minutely.count == (minutely.contains("},{") ? 1 : 0))
            #expect(oneCall.gaps.skipped.map(\.field) == ["minutely"], "\(reason)")
            #expect(oneCall.gaps.skipped.first?.reason.hasPrefix(reason) == true, "\(reason)")
            #expect(oneCall.current.temperatureCelsius == 10)
        }
        #expect(
            (try? OneCallDecoder.decode(body(#"{"dt":960,"precipitation":2000},{"dt":1020,"precipitation":0}"#)))?
                .minutely.count == 2)
    }

    /// Minutes from 0 at `rates` mm/h each.
    static func forecast(_ rates: [Double]) -> OneCall {
        var oneCall = try! OneCallDecoder.decode(Fixtures.bytes("onecall-texarkana-alerts.json"))
        oneCall.minutely = rates.enumerated().map {
            .init(time: Double($0.offset * 60), precipitationMetersPerSecond: $0.element / 3_600_000)
        }
        return oneCall
    }

    static func meters(_ millimetersPerHourMinutes: Double) -> Double { millimetersPerHourMinutes / 60 / 1000 }

    @Test func rainNowStartsAtTheCurrentMinute() throws {
        let oneCall = Self.forecast([6, 6, 0, 3] + Array(repeating: 0, count: 57))
        // 15 s into the second minute: the first is past, the second counts for its last 45 s.
        let nowcast = try #require(oneCall.nowcast(at: 75))
        #expect(nowcast.nextStart == 60)
        #expect(abs(nowcast.amountMeters - Self.meters(6 * 0.75 + 3)) < 1e-15)
    }

    @Test func rainOnlyInTheLastMinuteOfTheHour() throws {
        let oneCall = Self.forecast(Array(repeating: 0, count: 60) + [12])
        let nowcast = try #require(oneCall.nowcast(at: 30))
        #expect(nowcast.nextStart == 3600)
        #expect(abs(nowcast.amountMeters - Self.meters(12)) < 1e-15)
        // Inside that minute, it is rain now; after it, the forecast is over.
        #expect(oneCall.nowcast(at: 3630)?.nextStart == 3600)
        #expect(abs((oneCall.nowcast(at: 3630)?.amountMeters ?? 0) - Self.meters(6)) < 1e-15)
        #expect(oneCall.nowcast(at: 3660) == nil)
    }

    @Test func noRainIsNoStartAndNothingToCome() throws {
        let nowcast = try #require(Self.forecast(Array(repeating: 0, count: 61)).nowcast(at: 100))
        #expect(nowcast == Nowcast(nextStart: nil, amountMeters: 0))
    }

    /// `now` on a step's start: the step before has ended and counts for nothing; the one starting is whole.
    @Test func aStepBoundaryExactlyAtNow() throws {
        let oneCall = Self.forecast([6, 0, 3] + Array(repeating: 0, count: 58))
        let atBoundary = try #require(oneCall.nowcast(at: 60))
        #expect(atBoundary.nextStart == 120, "the rain of the minute that just ended is past")
        #expect(abs(atBoundary.amountMeters - Self.meters(3)) < 1e-15)
        let before = try #require(oneCall.nowcast(at: 59.5))
        #expect(before.nextStart == 0)
        #expect(abs(before.amountMeters - Self.meters(6 / 120.0 + 3)) < 1e-15)
        // A forecast that starts later than now is read from its first step on.
        #expect(oneCall.nowcast(at: -600)?.nextStart == 0)
        #expect(abs((oneCall.nowcast(at: -600)?.amountMeters ?? 0) - Self.meters(9)) < 1e-15)
    }

    @Test func theRequestLeavesOutWhatIsExcluded() {
        let whole = OneCall.request(latitude: 1, longitude: 2, language: "en")
        #expect(!whole.query.contains { $0.name == "exclude" }, "by default every part is asked for")
        let less = OneCall.request(latitude: 1, longitude: 2, language: "en", exclude: [.minutely, .alerts])
        #expect(less.query.last == .init("exclude", "minutely,alerts"))
    }

    static func texarkana(replacing replacements: [(String, String)]) throws -> OneCall {
        var text = String(decoding: Fixtures.bytes("onecall-texarkana-alerts.json"), as: UTF8.self)
        for (old, new) in replacements {
            #expect(text.contains(old), "\(old)")
            text = text.replacing(old, with: new)
        }
        return try OneCallDecoder.decode(Array(text.utf8))
    }

    /// `current` without `wind_deg`, `uvi` and `dew_point`: no north wind, no UV index of 0, no dew
    /// point; the rest of the answer as it is.
    @Test func currentWithoutWindDirectionOrUVIndexLeavesThemOut() throws {
        let whole = try OneCallDecoder.decode(Fixtures.bytes("onecall-texarkana-alerts.json"))
        #expect(whole.gaps.isEmpty)
        let oneCall = try Self.texarkana(replacing: [
            (#""uvi":0.16,"#, ""), (#""dew_point":17.54,"#, ""),
            (#""wind_deg":93,"wind_gust":6.71"#, #""wind_gust":6.71"#),
        ])
        #expect(oneCall.uvIndex == nil && oneCall.dewPointCelsius == nil && oneCall.current.windDirectionDegrees == nil)
        #expect(oneCall.gaps.missing == ["current.wind_deg", "current.dew_point", "current.uvi"])
        var expected = whole
        expected.uvIndex = nil
        expected.dewPointCelsius = nil
        expected.current.windDirectionDegrees = nil
        expected.gaps = oneCall.gaps
        #expect(oneCall == expected)
    }

    /// An hour without `temp` is skipped (noted), the others are used; a day without `temp.day` keeps
    /// its extremes but adds no step after the hours.
    @Test func aBadHourOrDayIsSkippedAlone() throws {
        let whole = try OneCallDecoder.decode(Fixtures.bytes("onecall-texarkana-alerts.json"))
        let oneCall = try Self.texarkana(replacing: [
            (#"{"dt":1684933200,"temp":"#, #"{"dt":1684933200,"heat":"#),
            (#""temp":{"day":26.4,"min":16.5,"#, #""temp":{"min":16.5,"#),
            (#"{"dt":1685120400,"sunrise""#, #"{"dt":"soon","sunrise""#),
        ])
        #expect(oneCall.hourly.steps.count == whole.hourly.steps.count - 2, "one hour and one day fewer")
        #expect(!oneCall.hourly.steps.contains { $0.time == 1_684_933_200 || $0.time == 1_685_120_400 })
        #expect(oneCall.daily.count == 7 && oneCall.daily[0] == whole.daily[0])
        #expect(oneCall.daily.map(\.position) == [0, 1, 3, 4, 5, 6, 7], "the day skipped keeps its place empty")
        #expect(oneCall.daily[2] == whole.daily[3])
        #expect(oneCall.gaps.skipped.map(\.field) == ["hourly", "daily"])
        #expect(oneCall.gaps.missing == [], "day 0 comes before the last hour: its temp.day is not read")
        // The hour missing: nothing read across it, everything else as before.
        #expect(oneCall.hourly.value({ $0.temperatureCelsius }, at: 1_684_931_400) == nil)
        #expect(oneCall.hourly.step(covering: 1_684_931_400) == nil)
        #expect(
            oneCall.hourly.value({ $0.temperatureCelsius }, at: 1_684_940_400)
                == whole.hourly.value({ $0.temperatureCelsius }, at: 1_684_940_400))
        #expect(oneCall.hourly.window(from: 1_684_926_000, to: 1_684_940_400) == nil)
        #expect(
            oneCall.hourly.window(from: 1_684_936_800, to: 1_684_944_000)
                == whole.hourly.window(from: 1_684_936_800, to: 1_684_944_000))
    }

    /// Alert tags are kept (for routing); an alert without `event` is skipped, the others kept.
    @Test func alertsKeepTheirTagsAndABadOneIsSkipped() throws {
        let whole = try OneCallDecoder.decode(Fixtures.bytes("onecall-texarkana-alerts.json"))
        #expect(whole.alerts.map(\.tags) == [["Extreme temperature value"], ["Flood"]])
        let oneCall = try Self.texarkana(replacing: [(#""event":"Heat Advisory","#, "")])
        #expect(oneCall.alerts.map(\.event) == ["Flood Watch"])
        #expect(oneCall.gaps.skipped == [.init(field: "alerts", reason: "missing field `alerts[0].event`", count: 1)])
    }
}
