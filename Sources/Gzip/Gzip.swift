import CZlib

/// Compresses byte chunks into deflate segments that can be served one after the other as one gzip
/// member: each segment is raw deflate, compressed on its own (no reference to earlier chunks) and
/// ended with a sync flush, so it stops on a byte boundary with no final block. A body is then
/// `Gzip.header`, the segments in order, and `Gzip.trailer` with the CRC of the whole text (from the
/// chunks' CRCs with `Gzip.combine`). One member rather than one per chunk: curl and browsers read
/// only the first member of a multi-member stream. One `z_stream` is reused for every chunk.
/// Not thread-safe: one owner at a time.
public final class GzipCompressor {
    private let stream: UnsafeMutablePointer<z_stream>
    /// Where deflate writes; grows to the largest chunk seen, each segment is copied out to size.
    private var scratch: [UInt8] = []

    /// Level 1 is the fastest; the exposition is repetitive enough that it shrinks about tenfold.
    public init(level: Int32 = 1) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_deflate_init_raw(stream, level)
        precondition(status == Z_OK, "deflateInit2 failed: \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// `bytes` as a deflate segment, in an array of exactly its size; empty for empty `bytes`.
    public func segment(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { segment($0) }
    }

    /// `bytes` as a deflate segment, in an array of exactly its size; empty for empty `bytes`.
    public func segment(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        var status = deflateReset(stream)
        precondition(status == Z_OK, "deflateReset failed: \(status)")
        // deflateBound covers Z_FINISH; a sync flush adds an empty stored block (5 bytes) at most.
        let bound = Int(deflateBound(stream, uLong(bytes.count))) + 16
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        return scratch.withUnsafeMutableBufferPointer { output in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress)
            stream.pointee.avail_in = uInt(bytes.count)
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = uInt(bound)
            status = deflate(stream, Z_SYNC_FLUSH)
            // With room left over, everything was consumed and flushed.
            precondition(
                status == Z_OK && stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0,
                "deflate did not flush: \(status)")
            let written = bound - Int(stream.pointee.avail_out)
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
            return Array(UnsafeBufferPointer(rebasing: output[0..<written]))
        }
    }
}

public enum Gzip {
    /// A gzip member's header: deflate, no name, no time, unknown OS.
    public static let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]

    /// Ends a member after its segments: a final empty block, the CRC-32 and the length (mod 2^32) of the text.
    public static func trailer(crc: UInt32, count: Int) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: count)
        return [0x03, 0x00] + (0..<4).map { UInt8(truncatingIfNeeded: crc >> ($0 * 8)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: size >> ($0 * 8)) }
    }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer(crc32)
    }

    public static func crc32(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        UInt32(CZlib.crc32(0, bytes.baseAddress, uInt(bytes.count)))
    }

    /// The CRC of A followed by B, from A's CRC, B's CRC and B's length.
    public static func combine(_ first: UInt32, _ second: UInt32, secondCount: Int) -> UInt32 {
        UInt32(crc32_combine(uLong(first), uLong(second), secondCount))
    }

    /// What `combine(_:_:using:)` needs to know of B's length; made once per length, it makes each
    /// combination about ten times cheaper (one multiplication instead of one per bit of the length).
    public static func combineOperator(secondCount: Int) -> UInt32 {
        UInt32(crc32_combine_gen(secondCount))
    }

    /// The CRC of A followed by B, from A's CRC, B's CRC and `combineOperator(secondCount:)` of B's length.
    public static func combine(_ first: UInt32, _ second: UInt32, using combineOperator: UInt32) -> UInt32 {
        UInt32(crc32_combine_op(uLong(first), uLong(second), uLong(combineOperator)))
    }

    /// Inflates a gzip stream of one or more members, given in pieces that may cut anywhere
    /// (empty pieces are skipped). Nil when it is not valid gzip (CRC and length checked) or ends
    /// inside a member. `expectedCount`, when known, sizes the output once.
    public static func inflate(_ pieces: [[UInt8]], expectedCount: Int = 0) -> [UInt8]? {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard czlib_inflate_init_gzip(stream) == Z_OK else { return nil }
        defer { inflateEnd(stream) }

        var out: [UInt8] = []
        out.reserveCapacity(expectedCount)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        /// Bytes of the current member have been read and its end not yet.
        var insideMember = false
        for piece in pieces where !piece.isEmpty {
            let ok = piece.withUnsafeBufferPointer { input -> Bool in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = uInt(input.count)
                defer { stream.pointee.next_in = nil }
                while stream.pointee.avail_in > 0 {
                    insideMember = true
                    let (status, produced) = buffer.withUnsafeMutableBufferPointer { output -> (Int32, Int) in
                        stream.pointee.next_out = output.baseAddress
                        stream.pointee.avail_out = uInt(output.count)
                        let status = CZlib.inflate(stream, Z_NO_FLUSH)
                        stream.pointee.next_out = nil
                        return (status, output.count - Int(stream.pointee.avail_out))
                    }
                    out.append(contentsOf: buffer[0..<produced])
                    switch status {
                    case Z_STREAM_END:
                        // The next member, if any, starts with the bytes left.
                        insideMember = false
                        guard inflateReset(stream) == Z_OK else { return false }
                    case Z_OK:
                        continue
                    default:
                        return false
                    }
                }
                return true
            }
            guard ok else { return nil }
        }
        return insideMember ? nil : out
    }
}
