import Exposition
import Gzip

/// The deflate segments kept of the plain weather part (`SegmentCache`), so a refresh compresses
/// only the chunks whose text changed.
extension MetricsPublisher {
    /// The deflate segment of each chunk of the last plain weather part that was also kept gzipped,
    /// by its text's length and fingerprint: a poll changes a few of a shard's families, so a refresh
    /// compresses only the chunks whose text changed, as the gzipped-only form does (`ShardWorker`);
    /// compressing the whole part again cost each refresh 2 to 6 times the rest at 40 places. One
    /// table for both formats: their shard chunks are the same text.
    struct SegmentCache {
        struct Key: Hashable {
            var count: Int
            var fingerprint: UInt64
        }
        struct Segment {
            var bytes: [UInt8]
            var crc: UInt32
            /// `Gzip.combineOperator` of the chunk's length.
            var combineOperator: UInt32
        }
        var segments: [Key: Segment] = [:]
        /// Made on first use: small exporters never gzip.
        var compressor: GzipCompressor?

        /// Each format's plain weather part of at least `threshold` bytes as deflate segments and its
        /// CRC; nil below (the segments kept are dropped then).
        mutating func segments(
            of weather: PerFormat<MetricsRendering.Body>, from threshold: Int
        ) -> PerFormat<(segments: [[UInt8]], crc: UInt32)?> {
            var kept: [Key: Segment] = [:]
            let result = PerFormat { format -> (segments: [[UInt8]], crc: UInt32)? in
                let body = weather[format]
                guard !body.gzipped, body.plainCount >= threshold, body.plainCount > 0 else { return nil }
                var result: [[UInt8]] = []
                result.reserveCapacity(body.chunks.count)
                var crc: UInt32 = 0
                for chunk in body.chunks where !chunk.isEmpty {
                    let key = chunk.withUnsafeBufferPointer {
                        Key(count: $0.count, fingerprint: ShardWorker.fingerprint($0))
                    }
                    let segment: Segment
                    if let known = kept[key] ?? segments[key] {
                        segment = known
                    } else {
                        if compressor == nil { compressor = GzipCompressor() }
                        segment = Segment(
                            bytes: compressor!.segment(chunk), crc: Gzip.crc32(chunk),
                            combineOperator: Gzip.combineOperator(secondCount: chunk.count))
                    }
                    kept[key] = segment
                    result.append(segment.bytes)
                    crc = Gzip.combine(crc, segment.crc, using: segment.combineOperator)
                }
                return (result, crc)
            }
            segments = kept
            if kept.isEmpty { compressor = nil }
            return result
        }
    }
}
