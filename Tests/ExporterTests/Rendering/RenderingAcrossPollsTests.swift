import Gzip
import Testing

@testable import Exporter

/// The renderer keeps one key per location and updates it in place, and the store shares its
/// chunks with the snapshots a renderer holds: poll after poll, every render must still be what
/// rendering everything from scratch gives.
@Suite struct RenderingAcrossPollsTests {
    @Test func everyRenderAfterAPollEqualsAFreshOne() throws {
        let now = MetricsRenderingTests.now
        let store = try MetricsRenderingTests.store()
        var rendering = MetricsRendering(gzipAbove: .max)
        let first = rendering.render(store.snapshot(), now: now).text
        #expect(first.chunks.concatenated == renderPlain(store.snapshot(), now: now))

        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        let names = store.snapshot().locations.map(\.location.name)
        for round in 1...6 {
            let held = store.snapshot()  // as a render in progress would hold it
            let at = now + Double(round)
            for name in names.enumerated().filter({ $0.offset % 7 == round }).map(\.element) {
                if round.isMultiple(of: 2) {
                    store.success(name, "weather", reading, duration: Double(round) / 8, now: at)
                } else {
                    store.failure(
                        name, round == 3 ? "air_pollution" : "weather", code: "500", reason: "server error",
                        duration: Double(round) / 4)
                }
            }
            #expect(held.locations.map(\.generation) != store.snapshot().locations.map(\.generation))
            let body = rendering.render(store.snapshot(), now: at).text.chunks.concatenated
            #expect(body == renderPlain(store.snapshot(), now: at), "round \(round)")
            #expect(body == ExpositionText.reRendered(body), "round \(round)")
        }
    }
}

/// Kept gzipped, a re-rendered shard keeps the segments of the families whose text did not change:
/// the body must still inflate to what rendering everything from scratch gives, poll after poll.
@Suite struct GzippedRenderingAcrossPollsTests {
    @Test func unchangedChunksKeepTheirSegmentsAndTheBodyStaysExact() throws {
        let now = MetricsRenderingTests.now
        let store = try MetricsRenderingTests.store()
        var rendering = MetricsRendering(gzipAbove: 0)
        var previous = rendering.render(store.snapshot(), now: now).text
        #expect(previous.gzipped)
        #expect(Self.inflate(previous) == renderPlain(store.snapshot(), now: now))

        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        let names = store.snapshot().locations.map(\.location.name)
        var kept = 0
        for round in 1...6 {
            let at = now + Double(round)
            for name in names.enumerated().filter({ $0.offset % 7 == round }).map(\.element) {
                if round.isMultiple(of: 2) {
                    store.success(name, "weather", reading, duration: Double(round) / 8, now: at)
                } else {
                    store.failure(name, "weather", code: "500", reason: "server error", duration: Double(round) / 4)
                }
            }
            let body = rendering.render(store.snapshot(), now: at).text
            #expect(Self.inflate(body) == renderPlain(store.snapshot(), now: at), "round \(round)")
            let before = Set(previous.chunks.map(Self.address))
            kept += body.chunks.filter { !$0.isEmpty && before.contains(Self.address($0)) }.count
            previous = body
        }
        // HELP and TYPE segments are cached anyway; shard segments are kept only by the fingerprint check.
        #expect(kept > 6 * 20)
    }

    @Test func fingerprintsTellApartTextsOfTheSameLength() {
        var seen: Set<UInt64> = []
        var count = 0
        for length in 0...24 {
            let base = [UInt8](repeating: 0x61, count: length)
            seen.insert(base.withUnsafeBufferPointer(SegmentCache.fingerprint))
            count += 1
            for position in 0..<length {
                var changed = base
                changed[position] = 0x62
                seen.insert(changed.withUnsafeBufferPointer(SegmentCache.fingerprint))
                count += 1
            }
        }
        #expect(seen.count == count)
    }

    /// A segment is taken again only for the same text (the same length is not enough), also across
    /// formats within a round, and is dropped after a round that did not use it.
    @Test func theCacheKeepsASegmentPerTextForOneRound() {
        var cache = SegmentCache()
        var compressed: [[UInt8]] = []
        func segment(_ text: String) -> SegmentCache.Segment {
            Array(text.utf8).withUnsafeBufferPointer { chunk in
                cache.segment(of: chunk) { chunk in
                    compressed.append(Array(chunk))
                    return GzipCompressor().segment(chunk)
                }
            }
        }
        let first = segment("temperature 21.5\n")
        #expect(segment("temperature 21.5\n").bytes == first.bytes)  // the other format, the same round
        #expect(segment("").bytes.isEmpty)
        cache.endRound()
        #expect(segment("temperature 21.5\n").crc == first.crc)
        #expect(segment("temperature 21.6\n").crc == Gzip.crc32(Array("temperature 21.6\n".utf8)))
        cache.endRound()
        cache.endRound()  // a round without the texts: both dropped
        _ = segment("temperature 21.5\n")
        #expect(
            compressed.map { String(decoding: $0, as: UTF8.self) } == [
                "temperature 21.5\n", "temperature 21.6\n", "temperature 21.5\n",
            ])
        #expect(!cache.isEmpty)
        cache.endRound()
        cache.endRound()
        #expect(cache.isEmpty)
    }

    static func inflate(_ body: MetricsRendering.Body) -> [UInt8]? {
        Gzip.inflate(
            [Gzip.header] + body.chunks + [Gzip.trailer(crc: body.crc, count: body.plainCount)],
            expectedCount: body.plainCount)
    }

    static func address(_ chunk: [UInt8]) -> Int {
        chunk.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) }
    }
}
