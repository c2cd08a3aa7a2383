import Gzip

/// Deflate segments of chunks of text, kept by the text's length and fingerprint, so that a chunk whose
/// text was seen in the last round is not compressed again: a poll changes a few of a shard's families,
/// and compressing is most of the cost of a refresh. Every chunk of the weather part kept compressed
/// goes through one: a shard's own (`ShardWorker`), the HELP and TYPE lines and whole families beside
/// them (`MetricsRendering`), and the plain body's gzip copy (`MetricsPublisher.AlsoGzipped`), one for
/// both formats, as their shard chunks are the same text.
///
/// A round is one render's use: the segments it used are kept for the next and the others dropped
/// (`endRound`), so a cache holds about one body's segments, never a history of them.
struct SegmentCache {
    /// A chunk as a deflate segment (`GzipCompressor`), with what a gzip member of it needs besides.
    struct Segment {
        var bytes: [UInt8]
        /// The CRC-32 of the chunk's text.
        var crc: UInt32
        /// `Gzip.combineOperator` of the chunk's length.
        var combineOperator: UInt32

        /// An empty chunk's: nothing to send (a body leaves empty chunks out).
        static let empty = Segment(bytes: [], crc: 0, combineOperator: Gzip.combineOperator(secondCount: 0))
    }

    private struct Key: Hashable {
        var count: Int
        var fingerprint: UInt64
    }

    /// The segments the last round used.
    private var last: [Key: Segment] = [:]
    /// The segments this round used so far.
    private var current: [Key: Segment] = [:]

    var isEmpty: Bool { last.isEmpty && current.isEmpty }

    /// `chunk`'s segment: the one kept for the same text, else made with `compress` (and kept).
    mutating func segment(
        of chunk: UnsafeBufferPointer<UInt8>, compress: (UnsafeBufferPointer<UInt8>) -> [UInt8]
    ) -> Segment {
        guard !chunk.isEmpty else { return .empty }
        let key = Key(count: chunk.count, fingerprint: Self.fingerprint(chunk))
        let segment = current[key] ?? last[key] ?? Segment(of: chunk, compress: compress)
        // Sized once per round; not at its end, where a shard's cache would hold two tables till its next render.
        if current.isEmpty { current.reserveCapacity(last.count) }
        current[key] = segment
        return segment
    }

    /// Ends a round: what it used is what the next finds.
    mutating func endRound() {
        last = current
        current = [:]
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
}

extension SegmentCache.Segment {
    /// `chunk` compressed with `compress`.
    init(of chunk: UnsafeBufferPointer<UInt8>, compress: (UnsafeBufferPointer<UInt8>) -> [UInt8]) {
        self.init(
            bytes: compress(chunk), crc: Gzip.crc32(chunk),
            combineOperator: Gzip.combineOperator(secondCount: chunk.count))
    }
}
