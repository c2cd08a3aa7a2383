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
        #expect(oneCall.current.conditions.first?.id == 803)
        #expect(oneCall.dewPointCelsius == 17.54)
        #expect(oneCall.uvIndex == 0.16)
        #expect(oneCall.hourly.steps.count == 48 + 6, "48 hours, then the 6 days after the last hour")
        #expect(oneCall.hourly.steps[48].time == 1_685_120_400 && oneCall.hourly.steps[48].dayMinimumCelsius != nil)
        #expect(oneCall.hourly.stepSeconds == 3600)
        #expect(oneCall.hourly.issued == 1_684_929_490)
        #expect(oneCall.hourly.steps[0].dewPointCelsius == 17.3)
        #expect(oneCall.hourly.steps[0].conditionID == 500)
        #expect(oneCall.daily.count == 8)
        #expect(oneCall.daily[0] == .init(time: 1_684_947_600, temperatureMinCelsius: 16.5, temperatureMaxCelsius: 27.3))
        #expect(oneCall.alerts.map(\.event) == ["Heat Advisory", "Flood Watch"])
        #expect(oneCall.alerts[0].start == 1_684_940_400 && oneCall.alerts[0].end == 1_684_976_400)
    }

    @Test func theSubscriptionAnswerIsToldApartFromABadKey() {
        #expect(OneCall.needsSubscription(.http(status: 401, message: "Please note that using One Call 3.0 requires a separate subscription to the One Call by Call plan.", retryAfterSeconds: nil)))
        #expect(!OneCall.needsSubscription(.http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil)))
        #expect(!OneCall.needsSubscription(.http(status: 500, message: "subscription", retryAfterSeconds: nil)))
    }

    /// A key without the subscription works for the free APIs: its reason must not send the reader to the key.
    @Test func theSubscriptionAnswerDoesNotBlameTheKey() {
        let noSubscription = OpenWeatherError.http(
            status: 401, message: "Please note that using One Call 3.0 requires a separate subscription to the One Call by Call plan.", retryAfterSeconds: nil)
        #expect(noSubscription.description.hasSuffix("(the key is valid, but not subscribed to this API)"))
        #expect(!noSubscription.description.contains("wrong"))
        let badKey = OpenWeatherError.http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil)
        #expect(badKey.description.contains("the API key is missing, wrong, or not active yet"))
    }

    @Test func withoutAlertsThereAreNone() throws {
        let body = #"{"lat":1,"lon":2,"timezone_offset":0,"current":{"dt":1000,"temp":10,"feels_like":9,"pressure":1000,"humidity":50,"dew_point":0,"uvi":1,"weather":[{"id":800}]}}"#
        let oneCall = try OneCallDecoder.decode(Array(body.utf8))
        #expect(oneCall.alerts.isEmpty && oneCall.hourly.steps.isEmpty && oneCall.daily.isEmpty)
    }
}
