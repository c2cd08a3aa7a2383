import Exposition
import Gzip

/// The plain weather part also kept gzipped (`AlsoGzipped`), so a refresh compresses only the chunks
/// whose text changed.
extension MetricsPublisher {
    /// The plain weather part from `alsoGzipAbove` bytes on as deflate segments, one per chunk, kept by
    /// their text (`SegmentCache`): a poll changes a few of a shard's families, so a refresh compresses
    /// only the chunks whose text changed, as the gzipped-only form does (`ShardWorker`); compressing
    /// the whole part again cost each refresh 2 to 6 times the rest at 40 places. One cache for both
    /// formats: their shard chunks are the same text.
    struct AlsoGzipped {
        private var cache = SegmentCache()
        /// Made on first use: small exporters never gzip.
        private var compressor: GzipCompressor?

        /// Each format's plain weather part of at least `threshold` bytes as a gzipped body; nil below
        /// (the segments kept are dropped then).
        mutating func segments(
            of weather: PerFormat<MetricsRendering.Body>, from threshold: Int
        ) -> PerFormat<MetricsRendering.Body?> {
            var (cache, compressor) = (cache, compressor)
            func compress(_ chunk: UnsafeBufferPointer<UInt8>) -> [UInt8] {
                if compressor == nil { compressor = GzipCompressor() }
                return compressor!.segment(chunk)
            }
            let result = PerFormat { format -> MetricsRendering.Body? in
                let body = weather[format]
                guard !body.gzipped, body.plainCount >= threshold, body.plainCount > 0 else { return nil }
                var gzipped = MetricsRendering.Body(gzipped: true)
                gzipped.chunks.reserveCapacity(body.chunks.count)
                for chunk in body.chunks where !chunk.isEmpty {
                    let segment = chunk.withUnsafeBufferPointer { cache.segment(of: $0, compress: compress) }
                    gzipped.append(segment, count: chunk.count)
                }
                return gzipped
            }
            cache.endRound()
            self.cache = cache
            self.compressor = cache.isEmpty ? nil : compressor
            return result
        }
    }
}
