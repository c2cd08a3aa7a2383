import Exposition
import Gzip
import OpenWeather
import Testing

@testable import Exporter

/// The chunked rendering must give exactly what rendering every family at once gives.
@Suite struct MetricsRenderingTests {
    static let now = 1_700_000_000.0

    /// What the chunks must give: the same families rendered in one piece by `Exposition.render`,
    /// which sorts and escapes on its own.
    static func direct(_ bytes: [UInt8]) -> [UInt8] { ExpositionText.reRendered(bytes) }

    static func rendering(gzipAbove: Int = .max) -> MetricsRendering { MetricsRendering(gzipAbove: gzipAbove) }

    /// More locations than a few shards, listed out of label order, with names that need escaping
    /// or sort by their bytes ("Z" before "a", "é" after "z").
    static func store() throws -> ReadingStore {
        let names = (0..<150).map { index in
            [
                "Zürich \(index)", "a\"quoted\" \(index)", "back\\slash \(index)", "new\nline \(index)", "été \(index)",
                "B\(149 - index)",
            ][index % 6]
        }
        let locations = names.enumerated().map { index, name in
            Location(
                name: name, latitude: Double(index) / 2 - 30, longitude: Double(index) - 70.125,
                alerts: index % 3 == 0
                    ? .off : .custom(.init(aboveCelsius: 30, belowCelsius: index % 2 == 0 ? -5 : nil)))
        }
        let store = ReadingStore(
            locations: locations, sources: [AirPollutionSource(), WeatherSource()],
            intervals: [.seconds(3600), .seconds(600)], maxStaleness: [3 * 3600, 1800],
            thresholds: { $0.alerts.resolved(defaults: .init()) }, now: now - 7200)
        let readings = try RenderBenchmark.fixtures.map(ExpositionGoldenTests.fixture)
        let air = try AirPollutionDecoder.decode(Fixture.bytes("air-pollution-barcelona.json"))
        for (index, location) in locations.enumerated() where index % 7 != 0 {
            if index % 11 == 0 {
                store.failure(location.name, "weather", code: "500", reason: "server error", duration: 1.5)
            } else {
                store.success(
                    location.name, "weather", readings[index % readings.count], duration: 0.125,
                    now: now - (index % 5 == 0 ? 4000 : 60))
            }
            if index % 3 == 1 { store.success(location.name, "air_pollution", air, now: now - 5000) }
        }
        return store
    }

    @Test func chunksGiveTheSameBytesAsOneRender() throws {
        let snapshot = try Self.store().snapshot()
        for at in [Self.now, Self.now + 3000] {
            let chunked = renderPlain(snapshot, now: at)
            #expect(chunked == Self.direct(chunked))
            #expect(chunked.count > 10_000)
        }
    }

    @Test func aPollReRendersOnlyWhatChangedAndStaysIdentical() throws {
        let store = try Self.store()
        var rendering = Self.rendering()
        _ = rendering.render(store.snapshot(), now: Self.now)
        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        store.success("B6", "weather", reading, duration: 0.5, now: Self.now + 1)
        store.failure("été 4", "weather", code: "timeout", reason: "timed out", duration: 10)
        store.success("Zürich 0", "weather", reading, duration: 0.25, now: Self.now + 2)
        for at in [Self.now + 5, Self.now + 3000] {
            let incremental = rendering.render(store.snapshot(), now: at).text.chunks.concatenated
            #expect(incremental == renderPlain(store.snapshot(), now: at))
        }
        Self.reload(store, dropping: 40)
        let reloaded = rendering.render(store.snapshot(), now: Self.now + 10).text.chunks.concatenated
        #expect(reloaded == renderPlain(store.snapshot(), now: Self.now + 10))
        #expect(reloaded == Self.direct(reloaded))
    }

    /// A reload: the first `count` locations go, one comes, thresholds change; air pollution is switched off.
    static func reload(_ store: ReadingStore, dropping count: Int) {
        store.replaceLocations(
            Layout(
                locations: Array(store.snapshot().locations.map(\.location).dropFirst(count)) + [
                    Location(name: "Zz new", latitude: 1, longitude: 2)
                ],
                sources: [WeatherSource()], intervals: [.seconds(600)], maxStaleness: [1800],
                thresholds: { _ in .init(belowCelsius: 0) }))
    }

    @Test func largeExpositionsAreServedAsChunks() throws {
        let snapshot = try RenderBenchmark.store(count: 500, now: Self.now).snapshot()
        var rendering = MetricsRendering(gzipAbove: .max)
        let body = rendering.render(snapshot, now: Self.now).text
        #expect(!body.gzipped)
        #expect(body.chunks.count > 1)
        let joined = body.chunks.concatenated
        #expect(joined == Self.direct(joined))
    }

    /// The deflate segments, framed as one gzip member, inflate to exactly the plain text, also
    /// after polls, staleness (the text shrinks below the threshold and grows again) and a reload.
    @Test func gzippedChunksInflateToThePlainText() throws {
        let store = try Self.store()
        let fresh = renderPlain(store.snapshot(), now: Self.now)
        let stale = renderPlain(store.snapshot(), now: Self.now + 3000)
        // Below the fresh text, above the reloaded one (which drops the air quality) and well above the stale one.
        let threshold = fresh.count * 8 / 10
        #expect(stale.count < threshold * 3 / 4)
        var rendering = Self.rendering(gzipAbove: threshold)
        func check(_ at: Double, gzipped: Bool) {
            let bodies = rendering.render(store.snapshot(), now: at)
            var direct = MetricsRendering(gzipAbove: .max, countersCreated: rendering.countersCreated)
            let plain = direct.render(store.snapshot(), now: at)
            // Both formats, sharing the shards' segments.
            for format in ExpositionFormat.allCases {
                check(bodies[format], expected: plain[format].chunks, gzipped: gzipped)
            }
        }
        func check(_ body: MetricsRendering.Body, expected plainChunks: [[UInt8]], gzipped: Bool) {
            let expected = plainChunks.concatenated
            #expect(body.gzipped == gzipped)
            #expect(body.plainCount == expected.count)
            if gzipped {
                #expect(body.chunks.count > 10)
                #expect(body.crc == Gzip.crc32(expected))
                let framed = [Gzip.header] + body.chunks + [Gzip.trailer(crc: body.crc, count: body.plainCount)]
                #expect(Gzip.inflate(framed, expectedCount: body.plainCount) == expected)
                #expect(Gzip.memberCount(framed) == 1)
                // Segment by segment what compressing each plain chunk on its own gives, kept or made anew.
                let compressor = GzipCompressor()
                #expect(body.chunks == plainChunks.map { compressor.segment($0) })
                #expect(body.chunks.reduce(0) { $0 + $1.count } < expected.count / 3)
            } else {
                #expect(body.chunks.concatenated == expected)
            }
        }
        check(Self.now, gzipped: true)
        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        store.success("B6", "weather", reading, duration: 0.5, now: Self.now + 1)
        store.failure("été 4", "weather", code: "timeout", reason: "timed out", duration: 10)
        check(Self.now + 5, gzipped: true)
        check(Self.now + 3000, gzipped: false)
        check(Self.now + 5, gzipped: true)
        Self.reload(store, dropping: 10)
        check(Self.now + 10, gzipped: true)
    }
}
