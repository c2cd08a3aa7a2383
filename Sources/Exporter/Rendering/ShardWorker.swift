import Gzip

/// Renders a shard's chunks, plain or as deflate segments, keeping the segment of a chunk whose text
/// did not change (compressing is most of the cost of a render), and turns a shard from one form into
/// the other.
///
/// What one thread needs to render shards: the family buffers, which keep their capacity from
/// shard to shard, and a compressor. Unchecked: used by one thread at a time (`ShardThreads` gives
/// each thread its own).
final class ShardWorker: @unchecked Sendable {
    private var lines = FamilyLines(count: 0, positions: [])
    private var positions: [[Int?]] = []
    private var compressor: GzipCompressor?

    /// The shard's lines of every per-location family (`positions[c]` says where collector c's families
    /// are among the exposition's `families`), as plain chunks or, with `gzip`, as deflate segments. A chunk
    /// whose text `previous` (gzipped) had keeps its segment (`SegmentCache`): most of a shard's families
    /// do not change when one of its locations is polled, and compressing is most of the cost.
    func render(
        _ part: ShardSeries, collectors: [any Collector], positions: [[Int?]], families: Int, gzip: Bool,
        previous: MetricsRendering.ShardChunks = .init()
    ) -> MetricsRendering.ShardChunks {
        if self.positions != positions || lines.buffers.count != families {
            lines = FamilyLines(count: families, positions: positions)
            self.positions = positions
        }
        lines.clear()
        for (collector, own) in zip(collectors, lines.collectors) { collector.appendSeries(of: part, to: own) }
        var result = MetricsRendering.ShardChunks()
        result.plainCounts = lines.buffers.map(\.count)
        result.gzipped = gzip
        if gzip {
            var cache = previous.gzipped ? previous.cache : SegmentCache()
            result.segments = lines.buffers.map { cache.segment(of: $0.bytes, compress: segment) }
            cache.endRound()
            result.cache = cache
        } else {
            result.plain = lines.buffers.map { Array($0.bytes) }
        }
        return result
    }

    /// `shard` in the other form.
    func convert(_ shard: MetricsRendering.ShardChunks, gzip: Bool) -> MetricsRendering.ShardChunks {
        guard shard.gzipped != gzip else { return shard }
        var result = MetricsRendering.ShardChunks()
        result.plainCounts = shard.plainCounts
        result.gzipped = gzip
        if gzip {
            var cache = SegmentCache()
            result.segments = shard.plain.map { chunk in
                chunk.withUnsafeBufferPointer { cache.segment(of: $0, compress: segment) }
            }
            cache.endRound()
            result.cache = cache
        } else {
            result.plain = zip(shard.segments, shard.plainCounts).map { segment, count in
                guard count > 0 else { return [] }
                let framed = [Gzip.header, segment.bytes, Gzip.trailer(crc: segment.crc, count: count)]
                return Gzip.inflate(framed, expectedCount: count)!
            }
        }
        return result
    }

    /// `chunk` as a deflate segment; the compressor is made on first use, so small exporters never
    /// allocate deflate's state.
    func segment(_ chunk: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        if compressor == nil { compressor = GzipCompressor() }
        return compressor!.segment(chunk)
    }
}

extension MetricsRendering {
    /// One shard's part of every per-location family (in `families` order), in one form.
    struct ShardChunks {
        /// Each family's lines as plain text; empty while `gzipped`.
        var plain: [[UInt8]] = []
        /// Each family's lines as a deflate segment while `gzipped` (empty lines, an empty one); else empty.
        var segments: [SegmentCache.Segment] = []
        /// The length of each family's lines, in either form.
        var plainCounts: [Int] = []
        /// While gzipped: the segments by their text, which the shard's next render takes those of the
        /// chunks that did not change from.
        var cache = SegmentCache()
        var gzipped = false

        var plainCount: Int { plainCounts.reduce(0, +) }

        /// Family `index`'s lines appended to `body` in the shard's form (`body` has the same).
        func append(family index: Int, to body: inout Body) {
            if gzipped {
                body.append(segments[index], count: plainCounts[index])
            } else {
                body.append(plain: plain[index])
            }
        }
    }
}
