import Glibc
import TestSupport
import Testing

@testable import Exporter

/// Issue 30: thresholds in °C or °F, per-place hysteresis, gust and rain thresholds, read from
/// `--location`, the flags and the config file, and exported per place (none with alerts off).
@Suite struct AlertThresholdTests {
    let key = ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"]

    func load(_ arguments: [String]) throws(ConfigError) -> Configuration {
        switch try ConfigurationLoader(arguments: arguments, environment: key).load() {
        case .run(let configuration): return configuration
        default: throw ConfigError("not a run")
        }
    }

    func error(_ arguments: [String]) -> String {
        do {
            _ = try load(arguments)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test(arguments: [
        ("35", 35.0, TemperatureThreshold.Unit.celsius), ("-5.5", -5.5, .celsius), ("+3", 3, .celsius),
        ("1e1", 10, .celsius),
        ("0C", 0, .celsius), ("35c", 35, .celsius), ("35°C", 35, .celsius), (" 35 C ", 35, .celsius),
        ("95F", 35, .fahrenheit), ("95f", 35, .fahrenheit), ("32°F", 0, .fahrenheit), ("-40F", -40, .fahrenheit),
        ("212F", 100, .fahrenheit),
        // The edges: -150 and 150 °C, -238 and 302 °F.
        ("-150", -150, .celsius), ("150C", 150, .celsius), ("-238F", -150, .fahrenheit), ("302F", 150, .fahrenheit),
    ])
    func temperatureForms(text: String, celsius: Double, unit: TemperatureThreshold.Unit) throws {
        let parsed = try #require(TemperatureThreshold.parse(text), "\(text)")
        #expect(abs(parsed.celsius - celsius) < 1e-9, "\(text): \(parsed.celsius)")
        #expect(parsed.unit == unit)
    }

    @Test(arguments: [
        "", "C", "F", "°F", "hot", "35K", "35FF", "35 degrees", "0x1F", "0x23", "inf", "-infC", "nan", "nanF",
        "150.5", "-150.01C", "302.1F", "-238.5F", "1e3", "35,5",
    ])
    func temperaturesRefused(text: String) {
        #expect(TemperatureThreshold.parse(text) == nil, "\(text)")
    }

    @Test func locationOptions() throws {
        let config = try load([
            "--location", "Phoenix=33.45,-112.07,above=110F,below=32F,hysteresis=2,gust=25,rain=15",
            "--location", "Oslo=59.91,10.75,below=-10C", "--location", "Plain=1,2", "--location",
            "Quiet=3,4,alerts=off",
        ])
        let phoenix = config.thresholds(for: config.locations[0])
        #expect(phoenix.above?.unit == .fahrenheit && phoenix.below?.unit == .fahrenheit)
        #expect(abs(phoenix.aboveCelsius! - 43.333_333_333) < 1e-6 && phoenix.belowCelsius == 0)
        #expect(phoenix.hysteresisCelsius == 2 && phoenix.gustMetersPerSecond == 25 && phoenix.rainMeters == 0.015)
        #expect(
            config.thresholds(for: config.locations[1])
                == AlertThresholds(belowCelsius: -10, hysteresisCelsius: 1, rainMeters: 0.02))
        // A place that sets nothing: the built-in margin and rain, no temperature bound, no gust.
        #expect(config.thresholds(for: config.locations[2]) == AlertThresholds(hysteresisCelsius: 1, rainMeters: 0.02))
        #expect(config.thresholds(for: config.locations[3]) == AlertThresholds())
    }

    @Test func defaultsFromFlags() throws {
        let config = try load([
            "--location", "A=1,2", "--location", "B=3,4,gust=30,rain=5,hysteresis=0",
            "--alerts.temperature-above-celsius=95F", "--alerts.temperature-below-celsius=-5",
            "--alerts.hysteresis-celsius=1.5", "--alerts.wind-gust-meters-per-second=18",
            "--alerts.rain-millimeters=25",
        ])
        var expected = AlertThresholds(
            belowCelsius: -5, hysteresisCelsius: 1.5, gustMetersPerSecond: 18, rainMeters: 0.025)
        expected.above = TemperatureThreshold(celsius: 35, unit: .fahrenheit)
        #expect(config.alertDefaults == expected)
        #expect(config.thresholds(for: config.locations[0]) == expected)
        var own = expected
        own.hysteresisCelsius = 0
        own.gustMetersPerSecond = 30
        own.rainMeters = 0.005
        #expect(config.thresholds(for: config.locations[1]) == own)
    }

    @Test func configFileBlocks() throws {
        let file = temporaryFile(
            """
            alerts:
              wind_gust_meters_per_second: 20
              rain_millimeters: 30
              hysteresis_celsius: 0.5
            locations:
              - name: Phoenix
                latitude: 33.45
                longitude: -112.07
                alerts: {temperature_above_celsius: 110F, temperature_below_celsius: 0C, wind_gust_meters_per_second: 28, rain_millimeters: 10}
              - {name: Oslo, latitude: 59.91, longitude: 10.75, alerts: {temperature_below_celsius: -10, hysteresis_celsius: 2}}
              - {name: Off, latitude: 1, longitude: 2, alerts: false}
            """)
        defer { unlink(file) }
        let config = try load(["--config.file", file])
        let phoenix = config.thresholds(for: config.locations[0])
        #expect(phoenix.above?.unit == .fahrenheit && phoenix.below == TemperatureThreshold(celsius: 0))
        #expect(phoenix.gustMetersPerSecond == 28 && phoenix.rainMeters == 0.01 && phoenix.hysteresisCelsius == 0.5)
        #expect(
            config.thresholds(for: config.locations[1])
                == AlertThresholds(belowCelsius: -10, hysteresisCelsius: 2, gustMetersPerSecond: 20, rainMeters: 0.03))
        #expect(config.thresholds(for: config.locations[2]) == AlertThresholds())
        #expect(config.warnings.isEmpty, "\(config.warnings)")
    }

    /// Each wrong value says which forms are accepted.
    @Test(arguments: [
        (
            "X=1,2,above=hot",
            """
            above=hot is not a temperature: a number in °C (35, -5.5), or one with a unit: 35C or 95F, from -150 to \
            150 °C (-238 to 302 °F)
            """
        ),
        ("X=1,2,below=400F", "below=400F is not a temperature"),
        ("X=1,2,gust=0", "gust=0 is not a gust speed in m/s above 0 and at most 200, like 20 or 20m/s (72 km/h)"),
        ("X=1,2,gust=fast", "gust=fast is not a gust speed in m/s"),
        ("X=1,2,rain=-1", "rain=-1 is not a rain total in mm above 0 and at most 10000, like 20"),
        ("X=1,2,hysteresis=60", "hysteresis=60 is not a margin in °C from 0 to 50"),
        ("X=1,2,hysteresis=-1", "hysteresis=-1 is not a margin in °C"),
        (
            "X=1,2,wind=20",
            """
            "wind=20" is not an option; use above=, below=, hysteresis=, gust=, rain=, heat_index=, wet_bulb=, \
            wind_chill= or alerts=off after the place
            """
        ),
        ("X=1,2,alerts=off,gust=20", "sets thresholds and alerts=off: keep one"),
        ("X=1,2,wind_chill=-30,alerts=off", "sets thresholds and alerts=off: keep one"),
        (
            "X=1,2,heat_index=hot",
            """
            heat_index=hot is not a temperature: a number in °C (35, -5.5), or one with a unit: 35C or 95F, from -150 \
            to 150 °C (-238 to 302 °F)
            """
        ),
        ("X=1,2,wet_bulb=151", "wet_bulb=151 is not a temperature"),
        ("X=1,2,wind_chill=-239F", "wind_chill=-239F is not a temperature"),
        ("X=1,2,wind_chill=-30K", "wind_chill=-30K is not a temperature"),
        ("X=1,2,gust=20,alerts=off", "sets thresholds and alerts=off: keep one"),
    ])
    func locationErrors(location: String, message: String) {
        let text = error(["--location", location])
        #expect(text.contains(message), "\(text)")
    }

    @Test func flagAndFileErrors() {
        let flag = error(["--location", "A=1,2", "--alerts.temperature-above-celsius=95K"])
        #expect(flag.contains("--alerts.temperature-above-celsius") && flag.contains("35C or 95F"), "\(flag)")
        let gust = error(["--location", "A=1,2", "--alerts.wind-gust-meters-per-second=-3"])
        #expect(gust.contains("is not a gust speed in m/s"), "\(gust)")
        let file = temporaryFile(
            """
            locations:
              - {name: A, latitude: 1, longitude: 2, alerts: {gusts: 20}}
            """)
        defer { unlink(file) }
        let key = error(["--config.file", file])
        #expect(key.contains("unknown key `locations[0].alerts.gusts`"), "\(key)")
        #expect(
            key.contains(
                """
                temperature_above_celsius, temperature_below_celsius, hysteresis_celsius, wind_gust_meters_per_second, \
                rain_millimeters, heat_index_above_celsius, wet_bulb_above_celsius or wind_chill_below_celsius
                """
            ), "\(key)")
        let value = temporaryFile(
            """
            locations:
              - {name: A, latitude: 1, longitude: 2, alerts: {temperature_above_celsius: 95 Fahrenheit}}
            """)
        defer { unlink(value) }
        let bad = error(["--config.file", value])
        #expect(
            bad.contains("`locations[0].alerts.temperature_above_celsius` is \"95 Fahrenheit\": give a temperature"),
            "\(bad)")
    }

    /// A threshold is exported as given, however small: `rain=0.0001` was rounded to the micrometre and
    /// exported as 0, which a dry forecast reaches. Only a value below what a double holds is refused.
    @Test func smallThresholdsAreExportedAsGivenNeverAsZero() throws {
        let config = try load(["--location", "A=1,2,above=32.0001F,hysteresis=0.00001,gust=0.0001,rain=0.0001"])
        let store = ReadingStore.allSources(
            config.locations, sources: [WeatherSource()], thresholds: { config.thresholds(for: $0) },
            now: 1_700_000_000)
        let text = String(decoding: renderPlain(store.snapshot(), now: 1_700_000_000), as: UTF8.self)
        let lines = text.split(separator: "\n").filter { $0.contains("alert_") && !$0.hasPrefix("#") }.map(String.init)
        #expect(
            lines == [
                "openweather_rain_alert_threshold_meters{location=\"A\"} 1e-07",
                "openweather_temperature_alert_hysteresis_celsius{location=\"A\"} 1e-05",
                """
                openweather_temperature_alert_threshold_celsius{location="A",\
                bound="above"} \((32.0001 - 32) * 5 / 9)
                """,
                "openweather_temperature_alert_threshold_info{location=\"A\",bound=\"above\",unit=\"fahrenheit\"} 1",
                "openweather_wind_gust_alert_threshold_meters_per_second{location=\"A\"} 0.0001",
            ], "\(lines)")
        // Metres as written, in every form a number may take.
        let forms = [("20", 0.02), ("1.1", 0.0011), ("2e1", 0.02), ("+5E-1", 0.0005), (".5", 0.0005), ("10000", 10.0)]
        for (given, meters) in forms {
            var read = AlertThresholds()
            let accepted = AlertThresholds.Field.rain.read(given, into: &read)
            #expect(accepted && read.rainMeters == meters, "\(given): \(read)")
        }
        var read = AlertThresholds()
        #expect(!AlertThresholds.Field.rain.read("1e-330", into: &read), "no double holds 1e-333 m: it would be 0")
        #expect(error(["--location", "A=1,2,rain=1e-330"]).contains("rain=1e-330 is not a rain total in mm above 0"))
    }

    /// The alert series (no HELP or TYPE) of a weather exposition of these places, each with its thresholds.
    static func alertLines(of places: [String], _ thresholds: [String: AlertThresholds]) -> [String] {
        let locations = places.enumerated().map { Location(name: $1, latitude: Double($0), longitude: 0) }
        let store = ReadingStore.allSources(
            locations, sources: [WeatherSource()], thresholds: { thresholds[$0.name]! }, now: 1_700_000_000)
        let text = String(decoding: renderPlain(store.snapshot(), now: 1_700_000_000), as: UTF8.self)
        return text.split(separator: "\n").filter { $0.contains("alert_") && !$0.hasPrefix("#") }.map(String.init)
    }

    /// The exposition carries each value per place, °C for a bound given in °F, the unit as an info
    /// series; a place with alerts off has none of them, one without a temperature bound no margin.
    @Test func thresholdsAreExportedPerPlace() throws {
        var phoenix = AlertThresholds(hysteresisCelsius: 2, gustMetersPerSecond: 25, rainMeters: 0.015)
        phoenix.above = TemperatureThreshold.parse("95F")
        phoenix.below = TemperatureThreshold.parse("0")
        let thresholds = ["Phoenix": phoenix, "Plain": AlertThresholds.builtIn, "Quiet": AlertThresholds()]
        let lines = Self.alertLines(of: ["Phoenix", "Plain", "Quiet"], thresholds)
        #expect(
            lines == [
                "openweather_rain_alert_threshold_meters{location=\"Phoenix\"} 0.015",
                "openweather_rain_alert_threshold_meters{location=\"Plain\"} 0.02",
                "openweather_temperature_alert_hysteresis_celsius{location=\"Phoenix\"} 2",
                "openweather_temperature_alert_threshold_celsius{location=\"Phoenix\",bound=\"above\"} 35",
                "openweather_temperature_alert_threshold_celsius{location=\"Phoenix\",bound=\"below\"} 0",
                """
                openweather_temperature_alert_threshold_info{location="Phoenix",bound="above",unit="fahrenheit"} 1
                """,
                "openweather_temperature_alert_threshold_info{location=\"Phoenix\",bound=\"below\",unit=\"celsius\"} 1",
                "openweather_wind_gust_alert_threshold_meters_per_second{location=\"Phoenix\"} 25",
            ], "\(lines)")
    }

    /// Issue 41: the heat index, wet-bulb and wind chill thresholds are read as the temperature's, in each
    /// place they can be given, and fall back to the defaults one by one.
    @Test func indexThresholdsFromLocationsFlagsAndTheFile() throws {
        let file = temporaryFile(
            """
            alerts:
              wet_bulb_above_celsius: 30
            locations:
              - {name: Houston, latitude: 29.76, longitude: -95.37, alerts: {heat_index_above_celsius: 105F, hysteresis_celsius: 2}}
              - {name: Off, latitude: 1, longitude: 2, alerts: false}
            """)
        defer { unlink(file) }
        let config = try load([
            "--config.file", file, "--location", "Winnipeg=49.9,-97.14,wind_chill=-40F,heat_index=32",
            "--location", "Plain=3,4", "--alerts.heat-index-above-celsius=40", "--alerts.wind-chill-below-celsius=-30C",
        ])
        // Flags' locations replace the file's: load the file's alone as well.
        let winnipeg = config.thresholds(for: config.locations[0])
        #expect(winnipeg.windChill == TemperatureThreshold(celsius: -40, unit: .fahrenheit))
        #expect(winnipeg.heatIndex == TemperatureThreshold(celsius: 32))
        #expect(winnipeg.wetBulb == TemperatureThreshold(celsius: 30), "the file's default")
        let plain = config.thresholds(for: config.locations[1])
        #expect(plain.heatIndex == TemperatureThreshold(celsius: 40) && plain.windChill?.celsius == -30)
        #expect(plain.windChill?.unit == .celsius)

        let fromFile = try load(["--config.file", file])
        let houston = fromFile.thresholds(for: fromFile.locations[0])
        #expect(houston.heatIndex?.unit == .fahrenheit && abs(houston.heatIndex!.celsius - 40.555_555_555) < 1e-6)
        #expect(houston.wetBulb?.celsius == 30 && houston.windChill == nil && houston.hysteresisCelsius == 2)
        #expect(fromFile.thresholds(for: fromFile.locations[1]) == AlertThresholds(), "alerts: false clears them")
        // None by default.
        let bare = try load(["--location", "A=1,2"])
        let none = bare.thresholds(for: bare.locations[0])
        #expect(none.heatIndex == nil && none.wetBulb == nil && none.windChill == nil)
        // alerts=off clears the defaults too.
        let off = try load(["--location", "Q=1,2,alerts=off", "--alerts.heat-index-above-celsius=40"])
        #expect(off.thresholds(for: off.locations[0]) == AlertThresholds())
    }

    @Test func indexThresholdErrorsNameTheSettingAndTheForms() {
        let flag = error(["--location", "A=1,2", "--alerts.wet-bulb-above-celsius=warm"])
        #expect(flag.contains("--alerts.wet-bulb-above-celsius") && flag.contains("35C or 95F"), "\(flag)")
        let range = error(["--location", "A=1,2", "--alerts.wind-chill-below-celsius=-400F"])
        #expect(range.contains("-400F\" is not a temperature") && range.contains("-238 to 302 °F"), "\(range)")
        let file = temporaryFile(
            """
            locations:
              - {name: A, latitude: 1, longitude: 2, alerts: {wind_chill_below_celsius: cold}}
            """)
        defer { unlink(file) }
        let bad = error(["--config.file", file])
        #expect(
            bad.contains("`locations[0].alerts.wind_chill_below_celsius` is \"cold\": give a temperature"), "\(bad)")
    }

    /// Each index's threshold in °C and its unit by index, where set; the hysteresis beside any bound in
    /// degrees, an index's alone included; none with alerts off.
    @Test func indexThresholdsAreExportedWithTheirUnitAndTheHysteresis() throws {
        var hot = AlertThresholds(hysteresisCelsius: 1.5)
        hot.heatIndex = TemperatureThreshold.parse("104F")
        hot.wetBulb = TemperatureThreshold.parse("31")
        var cold = AlertThresholds(hysteresisCelsius: 1)
        cold.windChill = TemperatureThreshold.parse("-35C")
        let thresholds = [
            "Hot": hot, "Cold": cold, "Quiet": AlertThresholds(), "Margin": AlertThresholds(hysteresisCelsius: 3),
        ]
        let lines = Self.alertLines(of: ["Cold", "Hot", "Margin", "Quiet"], thresholds)
        #expect(
            lines == [
                "openweather_heat_index_alert_threshold_celsius{location=\"Hot\"} 40",
                "openweather_temperature_alert_hysteresis_celsius{location=\"Cold\"} 1",
                "openweather_temperature_alert_hysteresis_celsius{location=\"Hot\"} 1.5",
                "openweather_thermal_alert_threshold_info{location=\"Cold\",index=\"wind_chill\",unit=\"celsius\"} 1",
                "openweather_thermal_alert_threshold_info{location=\"Hot\",index=\"heat_index\",unit=\"fahrenheit\"} 1",
                "openweather_thermal_alert_threshold_info{location=\"Hot\",index=\"wet_bulb\",unit=\"celsius\"} 1",
                "openweather_wet_bulb_alert_threshold_celsius{location=\"Hot\"} 31",
                "openweather_wind_chill_alert_threshold_celsius{location=\"Cold\"} -35",
            ], "\(lines)")
    }
}
