import Glibc
import OpenWeather
import Testing

@testable import Exporter

/// Timings for `Tests/bench/run.sh`, not a test: skipped unless `BENCH=1`, and it
/// prints instead of asserting, since timings depend on the machine and its load.
/// Run with `BENCH=1 swift test -c release --filter RenderBenchmark`.
@Suite(.enabled(if: getenv("BENCH") != nil, "set BENCH=1 to run the render benchmark"))
struct RenderBenchmark {
    static let fixtures = [
        "current-barcelona-clouds.json", "current-longyearbyen-polar-night-snow.json",
        "current-ocean-no-name.json", "current-zocca-rain.json",
    ]

    static var locationCount: Int {
        getenv("BENCH_LOCATIONS").flatMap { Int(String(cString: $0)) } ?? 10_000
    }

    /// `count` locations, every one with a fresh reading, as after a poll round.
    static func store(count: Int, now: Double) throws -> WeatherStore {
        let readings = try fixtures.map(ExpositionGoldenTests.fixture)
        let locations = (0..<count).map { index in
            Location(name: "Place \(index)", latitude: Double(index % 180) - 89.5, longitude: Double(index % 360) - 179.75)
        }
        let store = WeatherStore(locations: locations, thresholds: { _ in TemperatureThresholds(aboveCelsius: 35) }, now: now)
        for (index, location) in locations.enumerated() {
            store.recordSuccess(location.name, reading: readings[index % readings.count], duration: 0.2, now: now)
        }
        return store
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
    }

    @Test func renderTimes() throws {
        let count = Self.locationCount
        let now = Clock.wallSeconds()
        let store = try Self.store(count: count, now: now)
        let publisher = MetricsPublisher(store: store, maxStaleness: .seconds(3600))
        let clock = ContinuousClock()
        var full: [Double] = []
        var bytes = 0
        for _ in 0..<7 {
            full.append(Self.milliseconds(clock.measure { bytes = MetricsPublisher.renderWeather(store.snapshot(), now: now, maxStaleness: 3600).count }))
        }
        // What a poll costs: one location's reading changes, then the publisher refreshes.
        let reading = try ExpositionGoldenTests.fixture(Self.fixtures[1])
        var refresh: [Double] = []
        for round in 0..<7 {
            store.recordSuccess("Place \(round * 997 % count)", reading: reading, duration: 0.3, now: now + Double(round))
            refresh.append(Self.milliseconds(clock.measure { publisher.refreshWeather() }))
        }
        full.sort()
        refresh.sort()
        print(
            "RENDER_BENCHMARK locations=\(count) bytes=\(bytes) full_render_ms_median=\(full[full.count / 2]) full_render_ms_min=\(full[0])"
                + " poll_refresh_ms_median=\(refresh[refresh.count / 2]) poll_refresh_ms_min=\(refresh[0])")
    }
}
