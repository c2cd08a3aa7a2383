/// Decodes a `/data/2.5/weather` body (requested with `units=metric`) and checks
/// that every number is one the atmosphere can produce; anything else is a
/// `decode` failure, so a broken upstream marks the location down rather than
/// graphing nonsense.
public enum WeatherDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> CurrentWeather {
        try Fields.decode(body, convert)
    }

    private static func convert(_ root: Fields) throws(FieldError) -> CurrentWeather {
        let main = try root.object("main")
        let wind = try root.object("wind")
        let sys = try root.optionalObject("sys")
        let coord = try root.optionalObject("coord")
        let conditions = try root.list("weather").map { (condition: Fields) throws(FieldError) in
            CurrentWeather.Condition(
                id: Int(try condition.number("id", -1_000_000...1_000_000)),
                main: try condition.optionalString("main") ?? "",
                description: try condition.optionalString("description") ?? "",
                icon: try condition.optionalString("icon") ?? ""
            )
        }
        guard !conditions.isEmpty else { throw FieldError(reason: "`weather` is empty: no condition reported") }
        return CurrentWeather(
            temperatureCelsius: try main.number("temp", -100...70),
            feelsLikeCelsius: try main.number("feels_like", -120...90),
            temperatureMinCelsius: try main.number("temp_min", -100...70),
            temperatureMaxCelsius: try main.number("temp_max", -100...70),
            humidityRatio: shift(try main.number("humidity", 0...100), by: -2),
            pressurePascals: shift(try main.number("pressure", 800...1100), by: 2),
            groundLevelPressurePascals: try main.optionalNumber("grnd_level", 300...1100).map { shift($0, by: 2) },
            windSpeedMetersPerSecond: try wind.number("speed", 0...150),
            windGustMetersPerSecond: try wind.optionalNumber("gust", 0...200),
            windDirectionDegrees: try wind.optionalNumber("deg", 0...360) ?? 0,
            cloudinessRatio: shift(try root.optionalObject("clouds")?.optionalNumber("all", 0...100) ?? 0, by: -2),
            visibilityMeters: try root.optionalNumber("visibility", 0...100_000),
            rain1hMeters: shift(try root.optionalObject("rain")?.optionalNumber("1h", 0...500) ?? 0, by: -3),
            snow1hMeters: shift(try root.optionalObject("snow")?.optionalNumber("1h", 0...500) ?? 0, by: -3),
            sunrise: try sys?.optionalNumber("sunrise", 0...1e11).flatMap(positive),
            sunset: try sys?.optionalNumber("sunset", 0...1e11).flatMap(positive),
            observationTime: try root.number("dt", 1...1e11),
            timezoneOffsetSeconds: try root.optionalNumber("timezone", -50_400...50_400) ?? 0,
            conditions: conditions,
            cityName: try root.optionalString("name") ?? "",
            country: try sys?.optionalString("country").flatMap { $0.isEmpty ? nil : $0 },
            latitude: try coord?.optionalNumber("lat", -90...90) ?? 0,
            longitude: try coord?.optionalNumber("lon", -180...180) ?? 0
        )
    }

    /// `value × 10^exponent` as the decimal a person expects: 0.21 mm is 0.00021 m,
    /// not the 0.00020999999999999998 that a plain division gives. Inputs carry at
    /// most six decimals, so going through whole millionths is exact.
    static func shift(_ value: Double, by exponent: Int) -> Double {
        var scale = 1.0
        for _ in 0..<(6 - exponent) { scale *= 10 }
        return (value * 1e6).rounded() / scale
    }

    /// 0 means "no sunrise" (polar day or night), like an absent field.
    private static func positive(_ value: Double) -> Double? { value > 0 ? value : nil }
}
