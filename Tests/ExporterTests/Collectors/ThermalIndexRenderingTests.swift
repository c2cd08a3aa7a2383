import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// Issue 41: the heat and cold indices as series, from readings with known inputs (the publishers'
/// values the formula tests use), left out where an input is missing or outside the formula's domain;
/// and the forecast windows' extremes.
@Suite struct ThermalIndexRenderingTests {
    static let now = 1_700_000_000.0

    /// The current weather of each place, as an answer with only these fields would carry it.
    static func weather(_ main: String, wind: String?) throws -> CurrentWeather {
        let wind = wind.map { #","wind":{"speed":\#($0)}"# } ?? ""
        return try WeatherDecoder.decode(Array(#"{"dt":1699999900,"main":{\#(main)}\#(wind)}"#.utf8))
    }

    static func render(_ readings: [String: CurrentWeather]) -> String {
        let locations = readings.keys.sorted().enumerated().map {
            Location(name: $1, latitude: Double($0), longitude: 0)
        }
        let store = ReadingStore.allSources(locations, sources: [WeatherSource()], now: now - 60)
        for (name, reading) in readings { store.success(name, "weather", reading, now: now - 30) }
        return String(decoding: renderPlain(store.snapshot(), now: now), as: UTF8.self)
    }

    static func value(_ text: String, _ family: String, _ location: String) -> Double? {
        ForecastRenderingTests.value(text, "openweather_\(family){location=\"\(location)\"}")
    }

    @Test func eachIndexFromAReadingWithKnownInputs() throws {
        let text = Self.render([
            // The NWS chart: 96 °F at 50 % is 108 °F.
            "Hot": try Self.weather(#""temp":35.5556,"humidity":50"#, wind: "2"),
            // Stull's example: 20 °C at 50 % is 13.7 °C.
            "Mild": try Self.weather(#""temp":20,"humidity":50"#, wind: "1"),
            // Environment Canada's chart: -20 °C in 20 km/h is -30; no humidity sent.
            "Cold": try Self.weather(#""temp":-20"#, wind: "5.5556"),
        ])
        let heat = try #require(Self.value(text, "heat_index_celsius", "Hot"))
        #expect(abs(heat * 9 / 5 + 32 - 108) <= 1, "\(heat)")
        #expect(Self.value(text, "wet_bulb_temperature_celsius", "Mild").map { ($0 * 10).rounded() / 10 } == 13.7)
        #expect(Self.value(text, "wind_chill_celsius", "Cold")?.rounded() == -30)
        // The rest, as the formulas give them (to the exposition's six decimals).
        func near(_ family: String, _ location: String, _ expected: Double?) {
            let shown = Self.value(text, family, location)
            #expect(
                shown != nil && abs(shown! - expected!) < 1e-5, "\(family) at \(location): \(String(describing: shown))"
            )
        }
        near("humidex_celsius", "Hot", ThermalIndex.humidex(temperature: 35.5556, relativeHumidity: 50))
        near("wind_chill_celsius", "Hot", 35.5556)
        near(
            "apparent_temperature_celsius", "Hot",
            ThermalIndex.apparentTemperature(temperature: 35.5556, relativeHumidity: 50, windSpeed: 2))
        near("heat_index_celsius", "Mild", ThermalIndex.heatIndex(temperature: 20, relativeHumidity: 50))
        // Without the humidity, every index that needs it is left out; the wind chill stays.
        for family in [
            "heat_index_celsius", "humidex_celsius", "wet_bulb_temperature_celsius", "apparent_temperature_celsius",
        ] {
            #expect(!text.contains("openweather_\(family){location=\"Cold\"}"), "\(family)")
        }
        #expect(text.contains("# HELP openweather_heat_index_celsius Heat index, the US National Weather Service's"))
        #expect(text.contains("# HELP openweather_wet_bulb_temperature_celsius Wet-bulb temperature, Stull's (2011)"))
    }

    @Test func outsideItsDomainOrWithoutTheWindAnIndexIsLeftOut() throws {
        let text = Self.render([
            // 3 % humidity: outside Stull's domain; the heat index is still the NWS's.
            "Desert": try Self.weather(#""temp":45,"humidity":3"#, wind: "4"),
            // No wind sent: no wind chill and no apparent temperature.
            "Calm": try Self.weather(#""temp":-5,"humidity":80"#, wind: nil),
        ])
        #expect(Self.value(text, "wet_bulb_temperature_celsius", "Desert") == nil)
        #expect(Self.value(text, "heat_index_celsius", "Desert") != nil)
        #expect(Self.value(text, "wind_chill_celsius", "Calm") == nil)
        #expect(Self.value(text, "apparent_temperature_celsius", "Calm") == nil)
        #expect(Self.value(text, "humidex_celsius", "Calm") != nil)
    }

    /// A small forecast whose first step is an hour before now: hot within the day, cold and windy on
    /// the second, so the 24-hour and the 72-hour windows differ.
    static func forecast(humidity: Double? = 0.5) -> Forecast {
        let first = now - 3600
        return Forecast(
            steps: (0..<30).map { index in
                let hours = Double(index) * 3
                let celsius = hours == 12 ? 38.0 : hours == 42 ? -15 : 15
                return Forecast.Step(
                    time: first + hours * 3600, seconds: 10_800, temperatureCelsius: celsius,
                    humidityRatio: hours == 12 ? 0.6 : humidity, windSpeedMetersPerSecond: hours == 42 ? 10 : 3)
            }, issued: first - 10_800)
    }

    static func renderForecast(_ forecast: Forecast) -> String {
        let source = ForecastSource(horizons: [.seconds(3 * 3600)], windows: [24, 72].map { .seconds($0 * 3600) })
        let store = ReadingStore.allSources(
            [Location(name: "Here", latitude: 1, longitude: 2)], sources: [source], now: now - 60)
        store.success("Here", "forecast", forecast, now: now - 30)
        return String(decoding: renderPlain(store.snapshot(), now: now), as: UTF8.self)
    }

    static func window(_ text: String, _ family: String, _ hours: String) -> Double? {
        ForecastRenderingTests.value(
            text, "openweather_forecast_\(family){location=\"Here\",window_hours=\"\(hours)\"}")
    }

    @Test func forecastWindowsTakeTheIndicesExtremes() throws {
        let forecast = Self.forecast()
        let text = Self.renderForecast(forecast)
        let hot = forecast.thermal[4]
        let cold = forecast.thermal[14]
        #expect(Self.window(text, "heat_index_max_celsius", "24") == hot.heatIndex)
        #expect(Self.window(text, "wet_bulb_temperature_max_celsius", "24") == hot.wetBulb)
        #expect(Self.window(text, "wind_chill_min_celsius", "24") == forecast.thermal[0].windChill, "15 °C: itself")
        #expect(Self.window(text, "wind_chill_min_celsius", "72") == cold.windChill)
        #expect(try #require(cold.windChill) < -25, "-15 °C in 36 km/h")
        #expect(Self.window(text, "heat_index_max_celsius", "72") == hot.heatIndex)
        // A step without humidity in the window: no heat index or wet bulb there, the wind chill stays.
        let dry = Self.renderForecast(Self.forecast(humidity: nil))
        #expect(Self.window(dry, "heat_index_max_celsius", "24") == nil)
        #expect(Self.window(dry, "wet_bulb_temperature_max_celsius", "72") == nil)
        #expect(!dry.contains("openweather_forecast_heat_index_max_celsius{"))
        #expect(Self.window(dry, "wind_chill_min_celsius", "72") == cold.windChill)
    }
}
