import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The forecast read at the render's "now": golden lines from the Zocca fixture, and the lines
/// moving with time without a new poll.
@Suite struct ForecastRenderingTests {
    /// An hour after the fixture's first step, which is then in the past.
    static let now = 1_661_871_600.0 + 3600

    /// 120 h is beyond the fixture's last step (117 h after its first), as horizon and as window.
    static let source = ForecastSource(
        horizons: [3, 6, 12, 24, 48, 120].map { .seconds($0 * 3600) },
        windows: [24, 72, 120].map { .seconds($0 * 3600) })

    static func store(polledAt polled: Double) throws -> ReadingStore {
        let store = ReadingStore(
            locations: [
                Location(name: "Zocca", latitude: 44.34, longitude: 10.99),
                Location(name: "Nowhere", latitude: 0, longitude: 0),
            ],
            sources: [source], intervals: [.seconds(3600)], maxStaleness: [3 * 3600],
            thresholds: { _ in .init(belowCelsius: 13) },
            now: polled - 3600)
        store.success(
            "Zocca", "forecast", try ForecastDecoder.decode(Fixture.bytes("forecast-zocca.json")), now: polled)
        store.failure("Nowhere", "forecast", code: "500", reason: "OpenWeather answered 500")
        return store
    }

    @Test func zoccaRendersAsTheGoldenFile() throws {
        let rendered = renderPlain(try Self.store(polledAt: Self.now - 600).snapshot(), now: Self.now)
        ExpositionGoldenTests().compare(rendered, golden: "forecast.prom")
        #expect(rendered == ExpositionText.reRendered(rendered))
        let text = String(decoding: rendered, as: UTF8.self)
        // Hand-computed: 4 h after the first step, a third of the way from 23.09 to 18.7 °C.
        let threeHours = try #require(
            Self.value(text, "openweather_forecast_temperature_celsius{location=\"Zocca\",hours_ahead=\"3\"}"))
        #expect(abs(threeHours - (23.09 + (18.7 - 23.09) / 3)) < 1e-9)
        // The next 24 h (1 h to 25 h after the first step): the night's 12.4 °C step is the lowest.
        #expect(
            Self.value(text, "openweather_forecast_temperature_min_celsius{location=\"Zocca\",window_hours=\"24\"}")
                == 12.4)
        let start = 25 + (23.09 - 25) / 3
        let highest = try #require(
            Self.value(text, "openweather_forecast_temperature_max_celsius{location=\"Zocca\",window_hours=\"24\"}"))
        #expect(abs(highest - start) < 1e-9, "the interpolated value now is the day's highest")
        #expect(!text.contains("hours_ahead=\"120\""), "beyond the last step")
        #expect(!text.contains("window_hours=\"120\""), "the forecast does not reach the end")
        #expect(!text.contains("openweather_forecast_temperature_celsius{location=\"Nowhere\""))
    }

    /// Every label that says how far ahead is a plain number with its unit in the label's name
    /// (`hours_ahead="24"`, `window_hours="24"`, as One Call's `days_ahead="0"`): one convention, so a
    /// rule's `"24h"` cannot silently match nothing on one label and everything on another.
    @Test func timeAheadLabelsAreNumbersWithTheUnitInTheirName() throws {
        let text = String(
            decoding: renderPlain(try Self.store(polledAt: Self.now - 600).snapshot(), now: Self.now), as: UTF8.self)
        var seen: Set<String> = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            for label in ["hours_ahead", "window_hours", "window", "days_ahead"] {
                guard let start = line.firstRange(of: ",\(label)=\"") else { continue }
                let value = line[start.upperBound...].prefix { $0 != "\"" }
                seen.insert(label)
                #expect(
                    label.hasSuffix("_ahead") || label.hasSuffix("_hours"), "\(label) has no unit in its name: \(line)")
                #expect(Double(value) != nil, "\(label)=\"\(value)\" is not a number: \(line)")
            }
        }
        #expect(seen == ["hours_ahead", "window_hours"])
    }

    /// The forecast families move once a minute without a poll; the renderer says when the next move is.
    @Test func linesMoveWithTimeWithoutAPoll() throws {
        let snapshot = try Self.store(polledAt: Self.now - 600).snapshot()
        var rendering = MetricsRendering(gzipAbove: .max)
        let first = rendering.render(snapshot, now: Self.now).text.chunks.concatenated
        #expect(rendering.nextTimeChange == Self.now + 60)
        let sameMinute = rendering.render(snapshot, now: Self.now + 59).text.chunks.concatenated
        #expect(sameMinute == first, "within the minute the shard is not redone")
        let later = rendering.render(snapshot, now: Self.now + 1800).text.chunks.concatenated
        #expect(later == renderPlain(snapshot, now: Self.now + 1800), "redone as a fresh render would")
        let before = try #require(
            Self.value(
                String(decoding: first, as: UTF8.self),
                "openweather_forecast_temperature_celsius{location=\"Zocca\",hours_ahead=\"3\"}"))
        let after = try #require(
            Self.value(
                String(decoding: later, as: UTF8.self),
                "openweather_forecast_temperature_celsius{location=\"Zocca\",hours_ahead=\"3\"}"))
        #expect(abs(after - (before + (18.7 - 23.09) / 6)) < 1e-9, "half an hour on, a sixth of the step's change")
        // Without a fresh forecast nothing depends on time.
        let stale = try Self.store(polledAt: Self.now - 4 * 3600).snapshot()
        _ = rendering.render(stale, now: Self.now)
        #expect(rendering.nextTimeChange == .infinity)
    }

    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
