import Exposition
import Gzip
import OpenWeather
import Testing

@testable import Exporter

/// The chunked rendering must give exactly what rendering every family at once gives.
@Suite struct WeatherRenderingTests {
    static let now = 1_700_000_000.0

    /// Renders the collectors' families in one piece: the reference.
    static func direct(_ snapshot: WeatherStore.Snapshot, now: Double, maxStaleness: Double) -> [UInt8] {
        var families: [MetricFamily] = []
        for collector in MetricsPublisher.collectors(maxStaleness: maxStaleness) {
            collector.collect(snapshot, now: now, into: &families)
        }
        return Exposition.render(families)
    }

    /// More locations than a few shards, listed out of label order, with names that need escaping
    /// or sort by their bytes ("Z" before "a", "é" after "z").
    static func store() throws -> WeatherStore {
        let names = (0..<150).map { index in
            ["Zürich \(index)", "a\"quoted\" \(index)", "back\\slash \(index)", "new\nline \(index)", "été \(index)", "B\(149 - index)"][index % 6]
        }
        let locations = names.enumerated().map { index, name in
            Location(name: name, latitude: Double(index) / 2 - 30, longitude: Double(index) - 70.125,
                     alerts: index % 3 == 0 ? .off : .custom(.init(aboveCelsius: 30, belowCelsius: index % 2 == 0 ? -5 : nil)))
        }
        let store = WeatherStore(locations: locations, thresholds: { $0.alerts.resolved(defaults: .init()) }, now: now - 7200)
        let readings = try RenderBenchmark.fixtures.map(ExpositionGoldenTests.fixture)
        for (index, location) in locations.enumerated() where index % 7 != 0 {
            if index % 11 == 0 {
                store.recordFailure(location.name, code: "500", reason: "server error", duration: 1.5)
            } else {
                store.recordSuccess(location.name, reading: readings[index % readings.count], duration: 0.125,
                                    now: now - (index % 5 == 0 ? 4000 : 60))
            }
        }
        return store
    }

    @Test func chunksGiveTheSameBytesAsOneRender() throws {
        let snapshot = try Self.store().snapshot()
        for at in [Self.now, Self.now + 3000] {
            let chunked = MetricsPublisher.renderWeather(snapshot, now: at, maxStaleness: 1800)
            #expect(chunked == Self.direct(snapshot, now: at, maxStaleness: 1800))
        }
    }

    @Test func aPollReRendersOnlyWhatChangedAndStaysIdentical() throws {
        let store = try Self.store()
        var rendering = WeatherRendering(collectors: MetricsPublisher.collectors(maxStaleness: 1800), maxStaleness: 1800, gzipAbove: .max)
        _ = rendering.render(store.snapshot(), now: Self.now)
        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        store.recordSuccess("B3", reading: reading, duration: 0.5, now: Self.now + 1)
        store.recordFailure("été 4", code: "timeout", reason: "timed out", duration: 10)
        store.recordSuccess("Zürich 0", reading: reading, duration: 0.25, now: Self.now + 2)
        for at in [Self.now + 5, Self.now + 3000] {
            let incremental = Array(rendering.render(store.snapshot(), now: at).chunks.joined())
            #expect(incremental == Self.direct(store.snapshot(), now: at, maxStaleness: 1800))
        }
        store.replaceLocations(
            Array(store.snapshot().locations.map(\.location).dropFirst(40)) + [Location(name: "Zz new", latitude: 1, longitude: 2)],
            thresholds: { _ in .init(belowCelsius: 0) })
        let reloaded = Array(rendering.render(store.snapshot(), now: Self.now + 10).chunks.joined())
        #expect(reloaded == Self.direct(store.snapshot(), now: Self.now + 10, maxStaleness: 1800))
    }

    /// Forwards `collect` only, so a shard's lines come from the generic path through families.
    struct ThroughFamilies: Collector {
        let inner: any Collector
        func collect(_ snapshot: WeatherStore.Snapshot, now: Double, into families: inout [MetricFamily]) {
            inner.collect(snapshot, now: now, into: &families)
        }
    }

    @Test func directWritersGiveTheSameLinesAsTheFamilies() throws {
        let snapshot = try Self.store().snapshot()
        for at in [Self.now, Self.now + 3000] {
            var direct = WeatherRendering(collectors: MetricsPublisher.collectors(maxStaleness: 1800), maxStaleness: 1800, gzipAbove: .max)
            var generic = WeatherRendering(
                collectors: MetricsPublisher.collectors(maxStaleness: 1800).map(ThroughFamilies.init), maxStaleness: 1800, gzipAbove: .max)
            let bytes = Array(direct.render(snapshot, now: at).chunks.joined())
            #expect(bytes == Array(generic.render(snapshot, now: at).chunks.joined()))
            #expect(bytes.count > 10_000)
        }
    }

    @Test func largeExpositionsAreServedAsChunks() throws {
        let snapshot = try RenderBenchmark.store(count: 500, now: Self.now).snapshot()
        var rendering = WeatherRendering(collectors: MetricsPublisher.collectors(maxStaleness: 1800), maxStaleness: 1800, gzipAbove: .max)
        let body = rendering.render(snapshot, now: Self.now)
        #expect(!body.gzipped)
        #expect(body.chunks.count > 1)
        #expect(Array(body.chunks.joined()) == Self.direct(snapshot, now: Self.now, maxStaleness: 1800))
    }

    /// The deflate segments, framed as one gzip member, inflate to exactly the plain text, also
    /// after polls, staleness (the text shrinks below the threshold and grows again) and a reload.
    @Test func gzippedChunksInflateToThePlainText() throws {
        let store = try Self.store()
        let fresh = Self.direct(store.snapshot(), now: Self.now, maxStaleness: 1800)
        let stale = Self.direct(store.snapshot(), now: Self.now + 3000, maxStaleness: 1800)
        let threshold = fresh.count * 9 / 10
        #expect(stale.count < threshold * 3 / 4)
        var rendering = WeatherRendering(
            collectors: MetricsPublisher.collectors(maxStaleness: 1800), maxStaleness: 1800, gzipAbove: threshold)
        func check(_ at: Double, gzipped: Bool) {
            let body = rendering.render(store.snapshot(), now: at)
            let expected = Self.direct(store.snapshot(), now: at, maxStaleness: 1800)
            #expect(body.gzipped == gzipped)
            #expect(body.plainCount == expected.count)
            if gzipped {
                #expect(body.chunks.count > 10)
                #expect(body.crc == Gzip.crc32(expected))
                let framed = [Gzip.header] + body.chunks + [Gzip.trailer(crc: body.crc, count: body.plainCount)]
                #expect(Gzip.inflate(framed, expectedCount: body.plainCount) == expected)
                #expect(Gzip.memberCount(framed) == 1)
                #expect(body.chunks.reduce(0) { $0 + $1.count } < expected.count / 3)
            } else {
                #expect(Array(body.chunks.joined()) == expected)
            }
        }
        check(Self.now, gzipped: true)
        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        store.recordSuccess("B3", reading: reading, duration: 0.5, now: Self.now + 1)
        store.recordFailure("été 4", code: "timeout", reason: "timed out", duration: 10)
        check(Self.now + 5, gzipped: true)
        check(Self.now + 3000, gzipped: false)
        check(Self.now + 5, gzipped: true)
        store.replaceLocations(
            Array(store.snapshot().locations.map(\.location).dropFirst(10)) + [Location(name: "Zz new", latitude: 1, longitude: 2)],
            thresholds: { _ in .init(belowCelsius: 0) })
        check(Self.now + 10, gzipped: true)
    }
}
