import Testing

@testable import OpenWeather

@Suite struct WeatherDecoderTests {
    @Test func decodesBarcelonaInBaseUnits() throws {
        let weather = try WeatherDecoder.decode(Fixtures.bytes("current-barcelona-clouds.json"))
        #expect(weather.temperatureCelsius == 21.07)
        #expect(weather.feelsLikeCelsius == 21.32)
        #expect(weather.temperatureMinCelsius == 19.99)
        #expect(weather.temperatureMaxCelsius == 22.11)
        #expect(weather.humidityRatio == 0.8)
        #expect(weather.pressurePascals == 102_500)
        #expect(weather.groundLevelPressurePascals == nil)
        #expect(weather.windSpeedMetersPerSecond == 2.68)
        #expect(weather.windGustMetersPerSecond == 5.36)
        #expect(weather.windDirectionDegrees == 229)
        #expect(weather.cloudinessRatio == 0.2)
        #expect(weather.visibilityMeters == 10_000)
        #expect(weather.rain1hMeters == 0)
        #expect(weather.snow1hMeters == 0)
        #expect(weather.sunrise == 1_634_623_652)
        #expect(weather.sunset == 1_634_663_086)
        #expect(weather.observationTime == 1_634_666_651)
        #expect(weather.timezoneOffsetSeconds == 7200)
        #expect(weather.primaryCondition == .init(id: 801, main: "Clouds", description: "algo de nubes", icon: "02n"))
        #expect(weather.secondaryConditions.isEmpty)
        #expect(weather.cityName == "Barcelona")
        #expect(weather.country == "ES")
    }

    @Test func polarNightHasNoSunAndSnowInMeters() throws {
        let weather = try WeatherDecoder.decode(Fixtures.bytes("current-longyearbyen-polar-night-snow.json"))
        #expect(weather.sunrise == nil)
        #expect(weather.sunset == nil)
        #expect(weather.snow1hMeters == 0.00021)
        #expect(weather.rain1hMeters == 0)
        #expect(weather.windGustMetersPerSecond == nil)
        #expect(weather.groundLevelPressurePascals == 100_100)
    }

    @Test func oceanHasNoNameNorCountry() throws {
        let weather = try WeatherDecoder.decode(Fixtures.bytes("current-ocean-no-name.json"))
        #expect(weather.cityName == "")
        #expect(weather.country == nil)
        #expect(weather.timezoneOffsetSeconds == -36_000)
    }

    @Test func rainAndSeveralConditionsKeepThePrimaryFirst() throws {
        let weather = try WeatherDecoder.decode(Fixtures.bytes("current-zocca-rain.json"))
        #expect(weather.rain1hMeters == 0.00316)
        #expect(weather.primaryCondition?.id == 501 && weather.secondaryConditions.map(\.id) == [701])
        #expect(weather.primaryCondition?.main == "Rain")
    }

    @Test func zeroSunriseMeansNone() throws {
        let body =
            #"""
            {"weather":[{"id":800}],"main":{"temp":1,"feels_like":1,"temp_min":1,"temp_max":1,"pressure":1000,\#
            "humidity":50},"wind":{"speed":1},"dt":1700000000,"sys":{"sunrise":0,"sunset":0}}
            """#
        let weather = try WeatherDecoder.decode(Array(body.utf8))
        #expect(weather.sunrise == nil)
        #expect(weather.sunset == nil)
        #expect(weather.cloudinessRatio == nil, "no clouds.all: no cloud cover, not 0")
        #expect(
            weather.gaps.fields.first { $0.field == "sys.sunrise" }?.reason
                == "`sys.sunrise` is 0: none that day (polar day or night)")
    }

    @Test(arguments: [
        ("", "not valid JSON"),
        ("<html>502</html>", "not valid JSON"),
        (#"{"weather":[{"id":800}],"main":{"temp":"#, "not valid JSON"),
        (#"{"weather":[{"id":800}],"wind":{"speed":1},"dt":1}"#, "missing field `main`"),
        (
            #"""
            {"weather":[{"id":800}],"main":{"temp":"warm","feels_like":1,"temp_min":1,"temp_max":1,"pressure":1000,\#
            "humidity":5},"wind":{"speed":1},"dt":1}
            """#,
            "`main.temp` is a string, not a number"
        ),
        (
            #"""
            {"weather":[{"id":800}],"main":{"temp":9999,"feels_like":1,"temp_min":1,"temp_max":1,"pressure":1000,\#
            "humidity":5},"wind":{"speed":1},"dt":1}
            """#,
            "`main.temp` = 9999.0 is outside"
        ),
        (#"{"weather":[{"id":800}],"main":{"temp":NaN}}"#, "not valid JSON"),
        (#"{"main":{"temp":1}}"#, "missing field `dt`"),
        (#"{"main":{"feels_like":1},"dt":1}"#, "missing field `main.temp`"),
        (#"[1,2]"#, "the body is a list, not an object"),
    ])
    func rejectsBrokenBodies(body: String, reason: String) {
        #expect {
            try WeatherDecoder.decode(Array(body.utf8))
        } throws: { error in
            guard case .decode(let message) = error as? OpenWeatherError else { return false }
            return message.contains(reason)
        }
    }

    @Test func errorCodesAndHints() {
        #expect(OpenWeatherError.http(status: 401, message: "Invalid API key", retryAfterSeconds: nil).code == "401")
        #expect(
            OpenWeatherError.http(status: 401, message: "x", retryAfterSeconds: nil).description.contains(
                "couple of hours"))
        #expect(
            OpenWeatherError.http(status: 429, message: "x", retryAfterSeconds: nil).description.contains("rate limit"))
        #expect(OpenWeatherError.decode("x").code == "decode")
        #expect(OpenWeatherError.transport(.timeout).code == "timeout")
        #expect(OpenWeatherError.transport(.connect("refused")).code == "connect")
    }
}

@Suite struct OpenWeatherClientTests {
    @Test func errorMessageComesFromTheBodyWithoutTheKey() {
        #expect(
            OpenWeatherClient.errorMessage(Fixtures.bytes("error-400-bad-coordinates.json"), redacting: ["K"])
                == "wrong latitude")
        #expect(
            OpenWeatherClient.errorMessage(Fixtures.bytes("error-404-not-found.json"), redacting: ["K"])
                == "city not found")
        let echoed = OpenWeatherClient.errorMessage(
            Array("<html>\nbad request for appid=SECRET42\n</html>".utf8), redacting: ["SECRET42"])
        #expect(!echoed.contains("SECRET42"))
        #expect(!echoed.contains("\n"))
    }

    @Test func targetAsksForMetricUnitsAndEncodesTheKey() throws {
        let client = try OpenWeatherClient(
            configuration: .init(baseURL: "http://127.0.0.1:1/", apiKey: "a b&c", language: "zh_cn"), userAgent: "test")
        #expect(
            client.target(CurrentWeather.request(latitude: 51.5, longitude: -0.12, language: "zh_cn"))
                == "/data/2.5/weather?lat=51.5&lon=-0.12&units=metric&lang=zh_cn&appid=a%20b%26c")
    }
}

extension WeatherDecoderTests {
    static let longKey = "held-out-secret-key-0123456789abcdef"

    /// Redacted before the cut: a key crossing byte 160 of a body, or 300 of a Location, leaves no piece.
    @Test(arguments: [0, 100, 140, 150, 157, 158, 159, 160])
    func aKeyAnywhereNearTheCutIsRedactedWhole(offset: Int) {
        let body = String(repeating: "x", count: offset) + Self.longKey + String(repeating: "y", count: 200)
        let message = OpenWeatherClient.errorMessage(Array(body.utf8), redacting: [Self.longKey])
        #expect(!message.contains("held"), "\(message)")
        if offset < 160 { #expect(message.contains("<redacted>")) }
    }

    /// An echo that itself stops inside the key (an upstream that cut it) loses that piece too.
    @Test func aBodyEndingInsideTheKeyLosesThatPiece() {
        let message = OpenWeatherClient.errorMessage(
            Array("bad appid=\(Self.longKey.prefix(20))".utf8), redacting: [Self.longKey])
        #expect(message == "bad appid=<redacted>")
        let json = OpenWeatherClient.errorMessage(
            Array(#"{"message": "bad appid=held-out-secret-key-01"}"#.utf8), redacting: [Self.longKey])
        #expect(json == "bad appid=<redacted>")
    }

    /// Older answers (and many samples) have no `main.feels_like` and no `timezone`: everything else is
    /// read; those two are left out and noted, never made up.
    @Test func anAnswerWithoutFeelsLikeKeepsEverythingElse() throws {
        let weather = try WeatherDecoder.decode(Fixtures.bytes("current-london-2017-no-feels-like.json"))
        #expect(
            weather.temperatureCelsius == 7.17 && weather.humidityRatio == 0.81 && weather.pressurePascals == 101_200)
        #expect(
            weather.windSpeedMetersPerSecond == 4.1 && weather.windDirectionDegrees == 80
                && weather.cloudinessRatio == 0.9)
        #expect(weather.sunrise == 1_485_762_037 && weather.primaryCondition?.id == 300 && weather.cityName == "London")
        #expect(weather.feelsLikeCelsius == nil && weather.timezoneOffsetSeconds == nil)
        #expect(weather.gaps.missing == ["main.feels_like", "main.grnd_level", "wind.gust", "timezone"])
        #expect(weather.gaps.skipped.isEmpty)
    }

    /// A calm answer without `wind.deg`, a shower given over 3 hours only, clouds without `all`, and the
    /// ground level in `main.pressure` beside a `sea_level`: no north wind, no dry last hour, no clear
    /// sky, and the sea-level pressure as sent.
    @Test func gapsAreLeftOutNotMadeNumbers() throws {
        let weather = try WeatherDecoder.decode(Fixtures.bytes("current-zocca-calm-ground-pressure.json"))
        #expect(weather.windSpeedMetersPerSecond == 0.5 && weather.windDirectionDegrees == nil)
        #expect(weather.rain1hMeters == nil && weather.rain3hMeters == 0.00125)
        #expect(weather.snow1hMeters == 0 && weather.snow3hMeters == 0, "no snow object: none fell")
        #expect(weather.cloudinessRatio == nil)
        #expect(weather.pressurePascals == 101_600 && weather.groundLevelPressurePascals == 93_300)
        #expect(weather.primaryCondition?.description == "light intensity shower rain")
        #expect(weather.secondaryConditions == [.init(id: 701, main: "Mist", description: "mist", icon: "50d")])
        #expect(weather.gaps.missing == ["wind.gust", "wind.deg", "clouds.all", "rain.1h"])
    }

    /// Absent, null, of another type or out of range: the same for every optional field.
    @Test(arguments: [
        (#""humidity":80"#, #""humidity":500"#, "main.humidity", "`main.humidity` = 500.0 is outside 0.0...100.0"),
        (#""humidity":80"#, #""humidity":null"#, "main.humidity", "absent or null"),
        (#""deg":229"#, #""deg":"SW""#, "wind.deg", "`wind.deg` is a string, not a number"),
        (#""all":20"#, #""all":-1"#, "clouds.all", "`clouds.all` = -1.0 is outside 0.0...100.0"),
        (#""timezone":7200"#, #""timezone":99999"#, "timezone", "`timezone` = 99999.0 is outside -50400.0...50400.0"),
        (
            #""pressure":1025"#, #""pressure":10250"#, "main.pressure",
            "`main.pressure` = 10250.0 is outside 800.0...1100.0"
        ),
        (#"{"id":801,"#, #"{"id":"801","#, "weather[].id", "`weather[0].id` is a string, not a number"),
    ])
    func anUnusableOptionalFieldIsLeftOutAndNoted(
        present: String, replaced: String, field: String, reason: String
    ) throws {
        let text = String(decoding: Fixtures.bytes("current-barcelona-clouds.json"), as: UTF8.self)
        #expect(text.contains(present))
        let weather = try WeatherDecoder.decode(Array(text.replacing(present, with: replaced).utf8))
        let whole = try WeatherDecoder.decode(Fixtures.bytes("current-barcelona-clouds.json"))
        #expect(
            weather.gaps.fields.filter { !whole.gaps.missing.contains($0.field) } == [
                .init(field: field, reason: reason, count: 1)
            ])
        #expect(
            weather.temperatureCelsius == whole.temperatureCelsius && weather.feelsLikeCelsius == whole.feelsLikeCelsius
        )
    }
}
