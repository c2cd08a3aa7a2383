import Glibc
import Gzip
import OpenWeather
import Platform
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

    /// `count` locations, every one with a fresh reading of each source, as after a poll round.
    static func store(count: Int, now: Double, sources: [String] = ["weather"]) throws -> ReadingStore {
        let readings = try fixtures.map(ExpositionGoldenTests.fixture)
        let air = try AirPollutionDecoder.decode(Fixture.bytes("air-pollution-barcelona.json"))
        // The fixture moved so that its first step is an hour before now: every horizon and window shows.
        let fixture = try ForecastDecoder.decode(Fixture.bytes("forecast-zocca.json"))
        let shift = now - 3600 - fixture.steps[0].time
        let forecast = Forecast(
            steps: fixture.steps.map { step in
                var moved = step
                moved.time += shift
                return moved
            },
            issued: fixture.issued + shift)
        // Likewise the air quality forecast: its first hour began an hour before now.
        let airFixture = try AirPollutionForecastDecoder.decode(Fixture.bytes("air-pollution-forecast-barcelona.json"))
        let airShift = now - 3600 - airFixture.steps[0].observationTime
        let airForecast = AirPollutionForecast(
            steps: airFixture.steps.map { step in
                var moved = step
                moved.observationTime += airShift
                return moved
            })
        let locations = (0..<count).map { index in
            Location(
                name: "Place \(index)", latitude: Double(index % 180) - 89.5, longitude: Double(index % 360) - 179.75)
        }
        let store = ReadingStore(
            locations: locations, sources: sources.compactMap(Sources.named),
            intervals: sources.map { _ in .seconds(600) },
            maxStaleness: sources.map { _ in 3600 }, thresholds: { _ in AlertThresholds(aboveCelsius: 35) }, now: now)
        for position in locations.indices {
            for (slot, source) in sources.enumerated() {
                let reading: any Sendable =
                    switch source {
                    case "weather": readings[position % readings.count]
                    case "forecast": forecast
                    case "air_pollution_forecast": airForecast
                    default: air
                    }
                store.recordSuccess(location: position, slot: slot, reading: reading, duration: 0.2, now: now)
            }
        }
        return store
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
    }

    /// CPU time of the whole process (every thread), in milliseconds.
    static func cpuMilliseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
    }

    /// Wall and CPU milliseconds of `body`, `runs` times: medians and minimums as `name_…=` fields.
    static func measure(_ name: String, runs: Int = 7, _ body: () -> Void) -> String {
        let clock = ContinuousClock()
        var wall: [Double] = []
        var cpu: [Double] = []
        for _ in 0..<runs {
            let cpuStart = cpuMilliseconds()
            wall.append(milliseconds(clock.measure(body)))
            cpu.append(cpuMilliseconds() - cpuStart)
        }
        wall.sort()
        cpu.sort()
        func format(_ value: Double) -> String {
            let hundredths = Int((value * 100).rounded())
            return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
        }
        return
            " \(name)_ms_median=\(format(wall[runs / 2])) \(name)_ms_min=\(format(wall[0])) \(name)_cpu_ms_median=\(format(cpu[runs / 2])) \(name)_cpu_ms_min=\(format(cpu[0]))"
    }

    /// Weather alone, with air pollution, and with the forecast (re-rendered every minute as time passes).
    @Test(arguments: [
        ["weather"], ["air_pollution", "weather"], ["forecast", "weather"], ["air_pollution_forecast", "weather"],
    ])
    func renderTimes(sources: [String]) throws {
        let count = Self.locationCount
        let now = SystemClock.wallSeconds()
        let store = try Self.store(count: count, now: now, sources: sources)
        let publisher = MetricsPublisher(store: store)
        let snapshot = store.snapshot()
        func fresh(gzipAbove: Int = MetricsRendering.gzipAbove) -> MetricsRendering {
            MetricsRendering(gzipAbove: gzipAbove)
        }
        var text: [UInt8] = []
        var servedBytes = 0
        // From scratch, as at start and after a reload: every shard rendered, as plain text, and as
        // served (kept gzipped above `MetricsRendering.gzipAbove`).
        // The plain chunks are what the publisher copies into the kept body: the copy is not timed.
        var chunks: [[UInt8]] = []
        var report = Self.measure("full_plain", runs: getenv("BENCH_PLAIN_RUNS").map { Int(atoi($0)) } ?? 7) {
            var rendering = fresh(gzipAbove: .max)
            chunks = rendering.render(snapshot, now: now).text.chunks
        }
        text = chunks.concatenated
        report += Self.measure("full_served") {
            var rendering = fresh()
            servedBytes = rendering.render(snapshot, now: now).text.chunks.reduce(0) { $0 + $1.count }
        }
        // What every refresh costs whatever changed: the keys compared and the body assembled (each format).
        var kept = fresh()
        _ = kept.render(snapshot, now: now)
        report += Self.measure("reassemble", runs: 15) { _ = kept.render(snapshot, now: now) }
        // What a poll costs: one location's reading changes, then the publisher refreshes.
        let reading = try ExpositionGoldenTests.fixture(Self.fixtures[1])
        var round = 0
        report += Self.measure("poll_refresh") {
            round += 1
            store.recordSuccess(
                location: round * 997 % count, slot: sources.count - 1, reading: reading, duration: 0.3,
                now: now + Double(round))
            publisher.refreshWeather()
        }
        // References on the same text in the same run: copying it, and gzipping it in one call
        // (zlib level 1, one thread): the least any render of it, or gzip of it, can cost.
        var copy: [UInt8] = []
        report += Self.measure("reference_copy") { copy = text.withUnsafeBufferPointer { Array($0) } }
        var member: [UInt8] = []
        report += Self.measure("reference_gzip", runs: 3) { member = Gzip.member(text) }
        print(
            "RENDER_BENCHMARK sources=\(sources.joined(separator: "+")) locations=\(count) bytes=\(text.count) served_bytes=\(servedBytes) gzip_bytes=\(member.count)\(report)"
        )
        #expect(copy.count == text.count)
    }
}
