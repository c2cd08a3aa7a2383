import JSON

/// Decodes a `/data/2.5/weather` body (requested with `units=metric`) and checks that every number
/// is one the atmosphere can produce.
///
/// Field policy. Required, else the answer is a `decode` failure (the location shows down rather than
/// graphing nonsense): the body an object with `dt` and `main.temp`. Everything else is optional: a
/// field absent, null, of another type or out of range leaves out its own series (noted in `gaps`),
/// never the reading, and is never replaced by a number. Optional: `main.feels_like`, `.temp_min`,
/// `.temp_max`, `.humidity`; the sea-level pressure, `main.sea_level` or else `main.pressure` (older
/// answers carry the ground level in `pressure` beside a `sea_level`); `main.grnd_level`; `wind.speed`,
/// `.deg`, `.gust`; `clouds.all`; `visibility`; `rain.1h`, `rain.3h`, `snow.1h`, `snow.3h` (the whole
/// `rain` or `snow` object is left out when none falls: that is 0, not a gap); `sys.sunrise`,
/// `sys.sunset` (absent or 0 in polar day and night); `timezone`; `weather[].id` (`weather[0]` is the
/// primary condition; a later one never takes its place). Texts become labels and are `""` when
/// absent, as OpenWeather itself sends far from any city: `name`, `sys.country`, `weather[].main`,
/// `.description`, `.icon`. `coord` is kept when given (the location's own coordinates come first).
public enum WeatherDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> CurrentWeather {
        try Fields.decode(body, convert)
    }

    private static func convert(_ root: Fields) throws(FieldError) -> CurrentWeather {
        let root = try root.requireObject()
        let main = try root.object("main")
        let wind = root.part("wind")
        let sys = root.part("sys")
        let coord = root.part("coord")
        let temperature = try main.number("temp", -100...70)
        let observation = try root.number("dt", 1...1e11)
        let (primary, secondary) = conditions(root)
        var weather = CurrentWeather(
            temperatureCelsius: temperature,
            feelsLikeCelsius: main.optional("feels_like", -120...90),
            temperatureMinCelsius: main.optional("temp_min", -100...70),
            temperatureMaxCelsius: main.optional("temp_max", -100...70),
            humidityRatio: main.optional("humidity", 0...100).map { shift($0, by: -2) },
            pressurePascals: seaLevelPressure(main),
            groundLevelPressurePascals: main.optional("grnd_level", 300...1100).map { shift($0, by: 2) },
            windSpeedMetersPerSecond: wind.optional("speed", 0...150),
            windGustMetersPerSecond: wind.optional("gust", 0...200),
            windDirectionDegrees: wind.optional("deg", 0...360),
            cloudinessRatio: root.part("clouds").optional("all", 0...100).map { shift($0, by: -2) },
            visibilityMeters: root.optional("visibility", 0...100_000),
            rain1hMeters: fallen(root, "rain", "1h", 0...500),
            rain3hMeters: fallen(root, "rain", "3h", 0...1000),
            snow1hMeters: fallen(root, "snow", "1h", 0...500),
            snow3hMeters: fallen(root, "snow", "3h", 0...1000),
            sunrise: sunTime(sys, "sunrise"),
            sunset: sunTime(sys, "sunset"),
            observationTime: observation,
            timezoneOffsetSeconds: root.optional("timezone", -50_400...50_400),
            primaryCondition: primary,
            secondaryConditions: secondary,
            cityName: root.optionalText("name") ?? "",
            country: sys.optionalText("country").flatMap { $0.isEmpty ? nil : $0 },
            latitude: coord.peek("lat", -90...90),
            longitude: coord.peek("lon", -180...180)
        )
        weather.gaps = root.gaps
        return weather
    }

    /// Sea-level pressure in pascals: `sea_level` when given, else `pressure`; noted as `pressure` when
    /// neither is usable.
    static func seaLevelPressure(_ main: Fields) -> Double? {
        (main.peek("sea_level", 800...1100) ?? main.optional("pressure", 800...1100)).map { shift($0, by: 2) }
    }

    /// Metres of rain or snow over `span` (`1h`, `3h`): 0 when the whole object is left out (none
    /// fell), nil and noted when it is there without a usable `span`.
    static func fallen(_ fields: Fields, _ key: String, _ span: String, _ range: ClosedRange<Double>) -> Double? {
        fallenMillimeters(fields, key, span, range).map { shift($0, by: -3) }
    }

    /// The same in millimetres, as sent.
    static func fallenMillimeters(
        _ fields: Fields, _ key: String, _ span: String, _ range: ClosedRange<Double>
    ) -> Double? {
        guard fields.has(key) else { return 0 }
        return fields.part(key).optional(span, range)
    }

    /// A sunrise or sunset; absent or 0 (polar day or night) is none, noted.
    static func sunTime(_ fields: Fields, _ key: String) -> Double? {
        guard let time = fields.optional(key, 0...1e11) else { return nil }
        guard time > 0 else {
            fields.log?.missing(fields.name(key), "`\(fields.name(key))` is 0: none that day (polar day or night)")
            return nil
        }
        return time
    }

    /// `weather[]`: the primary condition (`weather[0]`) and the others, in order. An entry without a
    /// usable `id` is left out (noted as `weather[].id`), and a later one never becomes the primary.
    static func conditions(
        _ fields: Fields
    ) -> (primary: CurrentWeather.Condition?, secondary: [CurrentWeather.Condition]) {
        var items: [JSONValue] = []
        if case .array(let list)? = fields.value["weather"] { items = list }
        guard !items.isEmpty else {
            let list = fields.name("weather")
            fields.log?.missing(list + "[].id", "`\(list)` is absent or empty: no condition reported")
            return (nil, [])
        }
        let found = items.enumerated().map { index, item -> CurrentWeather.Condition? in
            let entry = Fields(item, path: "\(fields.name("weather"))[\(index)]", log: fields.log)
            return entry.optional("id", -1_000_000...1_000_000).map { id in
                CurrentWeather.Condition(
                    id: Int(id), main: entry.optionalText("main") ?? "",
                    description: entry.optionalText("description") ?? "",
                    icon: entry.optionalText("icon") ?? "")
            }
        }
        return (found[0], found.dropFirst().compactMap { $0 })
    }

    /// `value × 10^exponent` as the decimal a person expects: 0.21 mm is 0.00021 m,
    /// not the 0.00020999999999999998 that a plain division gives. Inputs carry at
    /// most six decimals, so going through whole millionths is exact.
    static func shift(_ value: Double, by exponent: Int) -> Double {
        var scale = 1.0
        for _ in 0..<(6 - exponent) { scale *= 10 }
        return (value * 1e6).rounded() / scale
    }
}
