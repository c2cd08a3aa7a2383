import Glibc
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The whole `openweather_*` exposition for the real fixtures, compared with
/// files under Golden/ (see `Golden` for how they are updated).
@Suite struct ExpositionGoldenTests {
    static let testsDirectory = TestSupport.testsDirectory()

    static func fixture(_ name: String) throws -> CurrentWeather {
        try WeatherDecoder.decode(readFile("\(testsDirectory)/Fixtures/openweather/\(name)"))
    }

    static let now = 1_700_000_000.0

    /// Four places from the fixtures, one that never answered, one found by name and one not found,
    /// air quality at one of them, and the exporter's counters.
    static func snapshot() throws -> ReadingStore.Snapshot {
        // Barcelona's bound in °F (95F, 35 °C) and a gust threshold; Zocca's own margin and rain.
        var barcelona = AlertThresholds(gustMetersPerSecond: 20)
        barcelona.above = TemperatureThreshold.parse("95F")
        let locations = [
            Location(name: "Barcelona", latitude: 41.3888, longitude: 2.159, alerts: .custom(barcelona)),
            Location(
                name: "Longyearbyen", latitude: 78.2232, longitude: 15.6356, alerts: .custom(.init(belowCelsius: -30))),
            Location(name: "South \"Pacific\"\nOcean", latitude: -45, longitude: -140, alerts: .off),
            Location(
                name: "Zocca", latitude: 44.34, longitude: 10.99,
                alerts: .custom(.init(hysteresisCelsius: 0.5, rainMeters: 0.03))),
            Location(name: "Nowhere", latitude: 0, longitude: 0),
            Location(name: "Home", place: .query(.name("London"))),
            Location(name: "Atlantis", place: .query(.name("Atlantis"))),
        ]
        let defaults = AlertThresholds(aboveCelsius: 30, belowCelsius: -5).merged(over: .builtIn)
        let store = ReadingStore.allSources(
            locations, sources: ReadingStore.fixtureSources, thresholds: { $0.alerts.resolved(defaults: defaults) },
            now: now - 3600)
        let fixtures = [
            "Barcelona": "current-barcelona-clouds.json", "Longyearbyen": "current-longyearbyen-polar-night-snow.json",
            "South \"Pacific\"\nOcean": "current-ocean-no-name.json", "Zocca": "current-zocca-rain.json",
        ]
        for (name, file) in fixtures.sorted(by: { $0.key < $1.key }) {
            store.success(name, "weather", try fixture(file), now: now - 60)
        }
        store.success(
            "Barcelona", "air_pollution", try AirPollutionDecoder.decode(Fixture.bytes("air-pollution-barcelona.json")),
            now: now - 120)
        let london = try GeocodingSource().decode(Fixture.bytes("geo-direct-london.json"), for: locations[5])
        store.success("Home", "geocoding", london, duration: 0.5, now: now - 3500)
        store.success("Home", "weather", try fixture("current-zocca-rain.json"), now: now - 30)
        store.failure("Atlantis", "geocoding", code: "200", reason: "no place matches \"Atlantis\"")
        store.failure(
            "Nowhere", "weather", code: "404", reason: "OpenWeather answered 404: city not found", duration: 0.125)
        store.failure("Nowhere", "air_pollution", code: "500", reason: "OpenWeather answered 500", duration: 0.125)
        store.failure("Zocca", "weather", code: "timeout", reason: "timed out", duration: 10)
        return store.snapshot()
    }

    func compare(_ rendered: [UInt8], golden name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        Golden.check(rendered, file: "ExporterTests/Golden/\(name)", sourceLocation: sourceLocation)
    }

    @Test func fixturesRenderAsTheGoldenFile() throws {
        let rendered = renderPlain(try Self.snapshot(), now: Self.now)
        compare(rendered, golden: "fixtures.prom")
        #expect(rendered == ExpositionText.reRendered(rendered))
    }

    /// The same exposition in OpenMetrics (`Tests/deploy/run.sh` also has prometheus_client's parser
    /// read this golden file): the same series, plus UNIT lines, counters' `_created` and `# EOF`.
    @Test func fixturesRenderAsTheGoldenOpenMetricsFile() throws {
        let rendered = renderOpenMetrics(try Self.snapshot(), now: Self.now)
        compare(rendered, golden: "fixtures.om")
        let (openMetrics, text) = seriesAsText(
            openMetrics: rendered, text: renderPlain(try Self.snapshot(), now: Self.now))
        #expect(openMetrics == text)
        let lines = String(decoding: rendered, as: UTF8.self)
        #expect(lines.hasSuffix("\n# EOF\n"))
        #expect(lines.contains("\n# TYPE openweather_api_requests counter\n"))
        #expect(lines.contains("\nopenweather_api_requests_created{code=\"200\",source=\"geocoding\"} 1699913600\n"))
        #expect(lines.contains("\n# UNIT openweather_temperature_celsius celsius\n"))
        #expect(!lines.contains("# UNIT openweather_air_quality_index"))
    }

    /// Two hours on, the weather (30 minutes of staleness) is gone, the air quality (3 hours) stays.
    @Test func staleSourcesKeepOnlyTheirHealth() throws {
        let rendered = renderPlain(try Self.snapshot(), now: Self.now + 7200)
        compare(rendered, golden: "stale.prom")
        let text = String(decoding: rendered, as: UTF8.self)
        #expect(!text.contains("openweather_temperature_celsius{"))
        #expect(text.contains("\nopenweather_air_quality_index{location=\"Barcelona\"} 3\n"))
        #expect(text.hasLine("openweather_up{location=\"Barcelona\",source=\"weather\"} 1"))
        #expect(
            text.contains(
                "\nopenweather_last_success_timestamp_seconds{location=\"Barcelona\",source=\"weather\"} 1699999940\n"))
    }

    @Test func everyDocumentedMetricIsPresent() throws {
        let text = String(decoding: renderPlain(try Self.snapshot(), now: Self.now), as: UTF8.self)
        for name in [
            "temperature_celsius", "feels_like_celsius", "temperature_min_celsius", "temperature_max_celsius",
            "humidity_ratio",
            "pressure_pascals", "ground_level_pressure_pascals", "wind_speed_meters_per_second",
            "wind_gust_meters_per_second",
            "wind_direction_degrees", "cloudiness_ratio", "visibility_meters", "rain_1h_meters", "snow_1h_meters",
            "sunrise_timestamp_seconds", "sunset_timestamp_seconds", "observation_timestamp_seconds",
            "timezone_offset_seconds",
            "condition_id", "condition_info", "location_info", "up", "last_success_timestamp_seconds",
            "poll_duration_seconds",
            "api_requests_total", "exporter_build_info", "temperature_alert_threshold_celsius",
            "temperature_alert_threshold_info", "temperature_alert_hysteresis_celsius",
            "wind_gust_alert_threshold_meters_per_second",
            "rain_alert_threshold_meters", "location_alerts_enabled",
            "exporter_config_last_reload_successful", "exporter_config_last_reload_success_timestamp_seconds",
            "air_quality_index", "air_pollutant_grams_per_cubic_meter", "air_pollution_observation_timestamp_seconds",
            "air_quality_scale_index",
        ] {
            #expect(text.contains("\n# TYPE openweather_\(name) "), "openweather_\(name)")
        }
        // A location that never succeeded shows only its health and its alert thresholds; one with its
        // alerts off, that they are.
        #expect(text.contains("\nopenweather_location_alerts_enabled{location=\"South \\\"Pacific\\\"\\nOcean\"} 0\n"))
        let nowhere = text.split(separator: "\n").filter { $0.contains("location=\"Nowhere\"") }
        #expect(
            Set(nowhere.map { $0.prefix { $0 != "{" } }) == [
                "openweather_up", "openweather_poll_duration_seconds",
                "openweather_temperature_alert_threshold_celsius",
                "openweather_temperature_alert_threshold_info", "openweather_temperature_alert_hysteresis_celsius",
                "openweather_rain_alert_threshold_meters", "openweather_location_alerts_enabled",
            ])
        // A place found by name: the geocoder's names and coordinates; one not found: only its health.
        #expect(
            text.contains(
                "\nopenweather_location_info{location=\"Home\",city=\"London\",country=\"GB\",latitude=\"51.5073219\",longitude=\"-0.1276474\",state=\"England\"} 1\n"
            ))
        let atlantis = text.split(separator: "\n").filter { $0.contains("location=\"Atlantis\"") }
        #expect(
            atlantis.sorted() == [
                "openweather_location_alerts_enabled{location=\"Atlantis\"} 1",
                "openweather_poll_duration_seconds{location=\"Atlantis\",source=\"geocoding\"} 0.25",
                "openweather_rain_alert_threshold_meters{location=\"Atlantis\"} 0.02",
                "openweather_temperature_alert_hysteresis_celsius{location=\"Atlantis\"} 1",
                "openweather_temperature_alert_threshold_celsius{location=\"Atlantis\",bound=\"above\"} 30",
                "openweather_temperature_alert_threshold_celsius{location=\"Atlantis\",bound=\"below\"} -5",
                "openweather_temperature_alert_threshold_info{location=\"Atlantis\",bound=\"above\",unit=\"celsius\"} 1",
                "openweather_temperature_alert_threshold_info{location=\"Atlantis\",bound=\"below\",unit=\"celsius\"} 1",
                "openweather_up{location=\"Atlantis\",source=\"air_pollution\"} 0",
                "openweather_up{location=\"Atlantis\",source=\"air_pollution_forecast\"} 0",
                "openweather_up{location=\"Atlantis\",source=\"forecast\"} 0",
                "openweather_up{location=\"Atlantis\",source=\"geocoding\"} 0",
                "openweather_up{location=\"Atlantis\",source=\"onecall\"} 0",
                "openweather_up{location=\"Atlantis\",source=\"weather\"} 0",
            ])
        #expect(text.contains("\nopenweather_api_requests_total{code=\"200\",source=\"geocoding\"} 2\n"))
        // alerts off: no threshold of any kind, so no weather rule can fire there (issue 29 §4).
        #expect(!text.split(separator: "\n").contains { $0.contains("Pacific") && $0.contains("alert_") })
    }
}
