import Testing

@testable import OpenWeather

/// The history endpoints a backfill reads: One Call's timemachine and air pollution's history.
@Suite struct HistoryTests {
    @Test func aTimemachineRecordDecodesAsOneCallsCurrentWeather() throws {
        let london = try TimemachineDecoder.decode(Fixtures.bytes("onecall-timemachine-london-rain.json"))
        #expect(london.observationTime == 1_764_493_200)
        #expect(london.temperatureCelsius == 8.62 && london.humidityRatio == 0.93 && london.pressurePascals == 100_300)
        #expect(london.rain1hMeters == 0.00194 && london.windGustMetersPerSecond == 12.35)
        #expect(london.sunrise == 1_764_488_626 && london.primaryCondition?.description == "moderate rain")
        let polar = try TimemachineDecoder.decode(
            Fixtures.bytes("onecall-timemachine-longyearbyen-1990-polar-night.json"))
        #expect(polar.sunrise == nil && polar.sunset == nil && polar.windGustMetersPerSecond == nil)
        #expect(polar.snow1hMeters == 0.00027 && polar.timezoneOffsetSeconds == 3600)
        #expect(throws: OpenWeatherError.decode("`data` is empty: no weather reported for that moment")) {
            try TimemachineDecoder.decode(Array(#"{"lat":1,"lon":2,"data":[]}"#.utf8))
        }
        // No condition: the moment's condition is left out, not the moment.
        let bare = try TimemachineDecoder.decode(
            Array(#"{"data":[{"dt":1,"temp":1,"pressure":1000,"humidity":5,"weather":[]}]}"#.utf8))
        #expect(bare.primaryCondition == nil && bare.feelsLikeCelsius == nil && bare.temperatureCelsius == 1)
        #expect(bare.gaps.missing.contains("data[].weather[].id") && bare.gaps.missing.contains("data[].feels_like"))
        #expect(throws: OpenWeatherError.decode("missing field `data[0].temp`")) {
            try TimemachineDecoder.decode(Array(#"{"data":[{"dt":1,"feels_like":1}]}"#.utf8))
        }
    }

    @Test func theAirPollutionHistoryDecodesEveryHourInOrder() throws {
        let hours = try AirPollutionHistoryDecoder.decode(Fixtures.bytes("air-pollution-history-barcelona.json"))
        #expect(hours.count == 24)
        #expect(hours.first?.observationTime == 1_764_504_000 && hours.last?.observationTime == 1_764_586_800)
        #expect(try AirPollutionHistoryDecoder.decode(Array(#"{"coord":[50,50],"list":[]}"#.utf8)).isEmpty)
        let backwards =
            #"""
            {"list":[{"main":{"aqi":1},"components":{"co":1},"dt":7200},{"main":{"aqi":1},"components":{"co":1},\#
            "dt":3600}]}
            """#
        // An hour out of order is skipped, the others written.
        #expect(try AirPollutionHistoryDecoder.decode(Array(backwards.utf8)).map(\.observationTime) == [7200])
    }

    @Test func theRequestsCarryTheMomentAndTheRange() {
        let weather = History.weatherRequest(latitude: 51.5, longitude: -0.12, at: 1_764_493_200, language: "de")
        #expect(weather.path == "/data/3.0/onecall/timemachine")
        #expect(
            weather.query.map { "\($0.name)=\($0.value)" } == [
                "lat=51.5", "lon=-0.12", "dt=1764493200", "units=metric", "lang=de",
            ])
        let air = History.airPollutionRequest(latitude: 41.4, longitude: 2.2, from: 1_764_504_000, to: 1_764_586_800)
        #expect(
            air.query.map { "\($0.name)=\($0.value)" } == ["lat=41.4", "lon=2.2", "start=1764504000", "end=1764586800"])
    }
}
