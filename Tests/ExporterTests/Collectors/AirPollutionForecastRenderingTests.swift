import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The air quality forecast read at the render's "now": golden lines from the Barcelona fixture
/// (96 hours from 2025-12-01 12:00 UTC), hand-computed values, and the lines moving with time.
@Suite struct AirPollutionForecastRenderingTests {
    static let first = 1_764_590_400.0
    /// Half an hour into the fixture's first hour.
    static let now = first + 1800

    /// 96 h reaches past the fixture's last hour (it ends 96 h after the first began), as horizon and window.
    static let source: AirPollutionForecastSource = {
        var source = AirPollutionForecastSource()
        source.options = .init(
            horizons: [3, 24, 96].map { .seconds($0 * 3600) }, windows: [24, 72, 96].map { .seconds($0 * 3600) })
        return source
    }()

    static func store(polledAt polled: Double) throws -> ReadingStore {
        let store = ReadingStore(
            locations: [
                Location(name: "Barcelona", latitude: 41.3851, longitude: 2.1734),
                Location(name: "Nowhere", latitude: 0, longitude: 0),
            ],
            sources: [source], intervals: [.seconds(3600)], maxStaleness: [96 * 3600], thresholds: { _ in .init() },
            now: polled - 3600)
        store.success(
            "Barcelona", "air_pollution_forecast",
            try AirPollutionForecastDecoder.decode(Fixture.bytes("air-pollution-forecast-barcelona.json")),
            now: polled)
        store.failure("Nowhere", "air_pollution_forecast", code: "500", reason: "OpenWeather answered 500")
        return store
    }

    static func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap {
            Double($0.split(separator: " ").last!)
        }
    }

    @Test func barcelonaRendersAsTheGoldenFile() throws {
        let rendered = renderPlain(try Self.store(polledAt: Self.now - 600).snapshot(), now: Self.now)
        ExpositionGoldenTests().compare(rendered, golden: "air-pollution-forecast.prom")
        #expect(rendered == ExpositionText.reRendered(rendered))
        let text = String(decoding: rendered, as: UTF8.self)
        // 3.5 h after the first hour began: halfway between hour 3 (NO₂ 31.85) and hour 4 (36.87 µg/m³).
        #expect(
            Self.value(
                text,
                #"openweather_forecast_air_pollutant_grams_per_cubic_meter{location="Barcelona",pollutant="no2",hours_ahead="3"}"#
            ) == 3.436e-05)
        #expect(Self.value(text, #"openweather_forecast_air_quality_index{location="Barcelona",hours_ahead="3"}"#) == 2)
        // Hour 3: PM2.5 10.32 → 10.3 → 51 + 49 × 12 / 263 = 53.2; CAQI O₃ 43.86 / 60 × 25 = 18.3; DAQI PM10 18 and O₃ 44 → 2.
        #expect(
            Self.value(
                text,
                #"openweather_forecast_air_quality_scale_index{location="Barcelona",scale="us_epa",hours_ahead="3"}"#)
                == 53)
        #expect(
            Self.value(
                text,
                #"openweather_forecast_air_quality_scale_index{location="Barcelona",scale="eu_caqi",hours_ahead="3"}"#)
                == 18)
        #expect(
            Self.value(
                text,
                #"openweather_forecast_air_quality_scale_index{location="Barcelona",scale="uk_daqi",hours_ahead="3"}"#)
                == 2)
        // Hour 20 (the evening rush of the first day) is the first at 3; none reaches 4.
        #expect(
            Self.value(text, #"openweather_forecast_air_quality_max_index{location="Barcelona",window_hours="24"}"#)
                == 3)
        #expect(
            Self.value(
                text,
                #"openweather_forecast_air_quality_scale_max_index{location="Barcelona",scale="openweather",window_hours="72"}"#
            ) == 3)
        #expect(!text.contains("hours_ahead=\"96\""), "beyond the last hour")
        #expect(!text.contains("window_hours=\"96\""), "the forecast does not reach the end")
        #expect(!text.contains("openweather_forecast_air_quality_index{location=\"Nowhere\""))
    }

    /// The window holds every hour that overlaps it, and moves with the render's "now": 20.5 h in it
    /// starts in hour 20 (index 3), 33.5 h in it holds only hours of 2 or less.
    /// Hour 26 of a real forecast sent `main.aqi` 0, its concentrations all there: each computed
    /// scale's maximum over a window holding it is shown, as with the hour whole; only OpenWeather's
    /// own maximum is left out (the highest of fewer hours could mislead).
    @Test func anHourWithoutItsOwnIndexKeepsEveryScalesMaximum() throws {
        func rendered(_ fixture: String) throws -> String {
            let store = try Self.store(polledAt: Self.now - 600)
            store.success(
                "Barcelona", "air_pollution_forecast", try AirPollutionForecastDecoder.decode(Fixture.bytes(fixture)),
                now: Self.now - 600)
            return String(decoding: renderPlain(store.snapshot(), now: Self.now), as: UTF8.self)
        }
        let odd = try rendered("air-pollution-forecast-aqi-zero.json")
        let whole = try rendered("air-pollution-forecast-barcelona.json")
        func maximum(_ text: String, _ scale: String, _ window: Int) -> Double? {
            Self.value(
                text,
                #"openweather_forecast_air_quality_scale_max_index{location="Barcelona",scale="\#(scale)",window_hours="\#(window)"}"#
            )
        }
        for scale in ["eu_caqi", "uk_daqi", "us_epa"] {
            #expect(maximum(odd, scale, 72) != nil && maximum(odd, scale, 72) == maximum(whole, scale, 72), "\(scale)")
        }
        #expect(maximum(odd, "openweather", 24) == 3 && maximum(odd, "openweather", 72) == nil)
        let ownMax = #"openweather_forecast_air_quality_max_index{location="Barcelona",window_hours="#
        #expect(Self.value(odd, ownMax + #""24"}"#) == 3 && Self.value(odd, ownMax + #""72"}"#) == nil)
        #expect(Self.value(whole, ownMax + #""72"}"#) == 3)
    }

    @Test func windowsMoveWithTimeWithoutAPoll() throws {
        let snapshot = try Self.store(polledAt: Self.now - 600).snapshot()
        var rendering = MetricsRendering(gzipAbove: .max)
        let series = #"openweather_forecast_air_quality_max_index{location="Barcelona",window_hours="24"}"#
        _ = rendering.render(snapshot, now: Self.now)
        #expect(rendering.nextTimeChange == Self.now + 60)
        let inHour20 = rendering.render(snapshot, now: Self.first + 20.5 * 3600).text.chunks.concatenated
        #expect(Self.value(String(decoding: inHour20, as: UTF8.self), series) == 3)
        // Hours 21 to 45 hold 3 at hours 30 to 32.
        let inHour21 = rendering.render(snapshot, now: Self.first + 21.5 * 3600).text.chunks.concatenated
        #expect(Self.value(String(decoding: inHour21, as: UTF8.self), series) == 3)
        // Hours 33 to 57: 2 at most.
        let later = rendering.render(snapshot, now: Self.first + 33.5 * 3600).text.chunks.concatenated
        #expect(Self.value(String(decoding: later, as: UTF8.self), series) == 2)
        #expect(later == renderPlain(snapshot, now: Self.first + 33.5 * 3600), "redone as a fresh render would")
    }

    @Test func horizonsAndWindowsAreTheSourcesOwnSettings() throws {
        let config = try ConfigurationLoader(
            arguments: [
                "--demo", "--collector.air_pollution_forecast.horizons=1h,90m",
                "--collector.air_pollution_forecast.windows=12h",
            ], environment: [:]
        ).load()
        guard case .run(let loaded) = config else {
            Issue.record("not a run: \(config)")
            return
        }
        let source = try #require(
            loaded.activeSources.first { $0.name == "air_pollution_forecast" } as? AirPollutionForecastSource)
        #expect(source.options.horizons == [.seconds(3600), .seconds(5400)])
        #expect(source.options.windows == [.seconds(43200)])
        #expect(throws: ConfigError.self) {
            try ConfigurationLoader(
                arguments: ["--demo", "--collector.air_pollution_forecast.horizons=97h"], environment: [:]
            ).load()
        }
    }
}
