import Gzip

extension MetricsRendering {
    /// What to serve, assembled chunk by chunk: plain text, or the deflate segments of one gzip member
    /// (without its header and trailer); beside the chunks, what the trailer needs of their plain text,
    /// its length and CRC-32, combined as each chunk is appended.
    struct Body {
        var chunks: [[UInt8]] = []
        var gzipped: Bool
        /// The length of the plain text, also when `chunks` are gzipped.
        var plainCount = 0
        /// The plain text's CRC-32; kept while gzipped.
        var crc: UInt32 = 0

        /// Appends a chunk of plain text (to a plain body).
        mutating func append(plain chunk: [UInt8]) {
            chunks.append(chunk)
            plainCount += chunk.count
        }

        /// Appends the segment of a chunk of `count` plain bytes (to a gzipped body).
        mutating func append(_ segment: SegmentCache.Segment, count: Int) {
            chunks.append(segment.bytes)
            crc = Gzip.combine(crc, segment.crc, using: segment.combineOperator)
            plainCount += count
        }

        /// Appends `other`'s chunks, in the same form.
        mutating func append(contentsOf other: Body) {
            chunks += other.chunks
            if gzipped { crc = Gzip.combine(crc, other.crc, secondCount: other.plainCount) }
            plainCount += other.plainCount
        }

        /// The chunks then `last`, a segment of `count` plain bytes, between a gzip header and trailer: one
        /// member of the whole text, and that text's length (gzipped only).
        func member(then last: SegmentCache.Segment, count: Int) -> (chunks: [[UInt8]], plainCount: Int) {
            var member = [Gzip.header]
            member.reserveCapacity(chunks.count + 3)
            member += chunks
            member.append(last.bytes)
            let crc = Gzip.combine(crc, last.crc, using: last.combineOperator)
            member.append(Gzip.trailer(crc: crc, count: plainCount + count))
            return (member, plainCount + count)
        }
    }
}
