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
    /// are among the exposition's `families`), as plain chunks or, with `gzip`, as deflate segments. A chunk whose text is that of
    /// one of `previous`'s gzipped chunks at the same position keeps its segment: most of a shard's
    /// families do not change when one of its locations is polled, and compressing is most of the cost.
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
            let reusable = previous.gzipped ? previous.chunks.count : 0
            result.chunks.reserveCapacity(families)
            result.crcs.reserveCapacity(families)
            result.combineOperators.reserveCapacity(families)
            result.fingerprints.reserveCapacity(families)
            for (family, buffer) in lines.buffers.enumerated() {
                let fingerprint = Self.fingerprint(buffer.bytes)
                result.fingerprints.append(fingerprint)
                if family < reusable, previous.plainCounts[family] == buffer.count,
                    previous.fingerprints[family] == fingerprint
                {
                    result.chunks.append(previous.chunks[family])
                    result.crcs.append(previous.crcs[family])
                    result.combineOperators.append(previous.combineOperators[family])
                } else {
                    result.chunks.append(segment(buffer.bytes))
                    result.crcs.append(Gzip.crc32(buffer.bytes))
                    result.combineOperators.append(Gzip.combineOperator(secondCount: buffer.count))
                }
            }
        } else {
            result.chunks = lines.buffers.map { Array($0.bytes) }
        }
        return result
    }

    /// `shard` in the other form.
    func convert(_ shard: MetricsRendering.ShardChunks, gzip: Bool) -> MetricsRendering.ShardChunks {
        guard shard.gzipped != gzip else { return shard }
        var result = shard
        result.gzipped = gzip
        if gzip {
            result.crcs = shard.chunks.map(Gzip.crc32)
            result.fingerprints = shard.chunks.map { chunk in chunk.withUnsafeBufferPointer(Self.fingerprint) }
            result.combineOperators = shard.plainCounts.map { Gzip.combineOperator(secondCount: $0) }
            result.chunks = shard.chunks.map { chunk in chunk.withUnsafeBufferPointer { segment($0) } }
        } else {
            for family in shard.chunks.indices where !shard.chunks[family].isEmpty {
                let framed = [
                    Gzip.header, shard.chunks[family],
                    Gzip.trailer(crc: shard.crcs[family], count: shard.plainCounts[family]),
                ]
                result.chunks[family] = Gzip.inflate(framed, expectedCount: shard.plainCounts[family])!
            }
            result.crcs = []
            result.fingerprints = []
            result.combineOperators = []
        }
        return result
    }

    /// A 64-bit hash of `bytes`: a chunk is taken as unchanged when its length and fingerprint match,
    /// which two different texts do with a chance of about 2^-64 (once in millions of years of polls).
    static func fingerprint(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let raw = UnsafeRawBufferPointer(bytes)
        var hash = 0x9E37_79B9_7F4A_7C15 ^ UInt64(raw.count)
        var offset = 0
        while offset + 8 <= raw.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            offset += 8
        }
        var tail: UInt64 = 0
        for byte in raw[offset...].reversed() { tail = tail << 8 | UInt64(byte) }
        hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        return hash ^ hash >> 29
    }

    /// `chunk` as a deflate segment; the compressor is made on first use, so small exporters never
    /// allocate deflate's state.
    func segment(_ chunk: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        if compressor == nil { compressor = GzipCompressor() }
        return compressor!.segment(chunk)
    }
}

extension MetricsRendering {
    /// One shard's part of every per-location family (in `families` order).
    struct ShardChunks {
        /// Plain text, or deflate segments when `gzipped` (empty chunks stay empty).
        var chunks: [[UInt8]] = []
        var plainCounts: [Int] = []
        /// The CRC-32 of each chunk's plain text and `Gzip.combineOperator` of its length; kept while gzipped.
        var crcs: [UInt32] = []
        var combineOperators: [UInt32] = []
        /// `ShardWorker.fingerprint` of each chunk's plain text; kept while gzipped. With the length it
        /// tells a re-rendered chunk that did not change, which keeps its segment and CRC.
        var fingerprints: [UInt64] = []
        var gzipped = false
    }
}
