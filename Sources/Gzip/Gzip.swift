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
        guard let inflater = GzipInflater(pieces) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(expectedCount)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !inflater.isFinished {
            guard let produced = buffer.withUnsafeMutableBytes({ inflater.read(into: $0) }) else { return nil }
            out.append(contentsOf: buffer[0..<produced])
        }
        return out
    }
}

/// Inflates a gzip stream of one or more members, given in pieces that may cut anywhere, as much at a
/// time as the caller has room for: a reader that takes the text a piece at a time holds zlib's state
/// (about 40 KB) and its own buffer, never the whole text. The pieces are referenced, not copied.
/// Not thread-safe: one owner at a time.
public final class GzipInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let pieces: [[UInt8]]
    /// The piece being read and how much of it zlib has taken.
    private var index = 0
    private var offset = 0
    /// Bytes of the current member have been read and its end not yet.
    private var insideMember = false
    private var failed = false
    /// The whole stream is inflated and every member's CRC and length matched.
    public private(set) var isFinished = false

    /// Nil when zlib cannot start (out of memory).
    public init?(_ pieces: [[UInt8]]) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_inflate_init_gzip(stream) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        self.pieces = pieces
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Fills `buffer` from its start and returns how many bytes it wrote: all of it unless the stream
    /// ends first (then `isFinished` is set; a call after the end writes nothing). Nil when the stream
    /// is not valid gzip (CRC and length checked) or ends inside a member, on this call or an earlier.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        var produced = 0
        while !failed && !isFinished && produced < buffer.count {
            guard index < pieces.count else {
                if insideMember { failed = true } else { isFinished = true }
                break
            }
            guard offset < pieces[index].count else {
                index += 1
                offset = 0
                continue
            }
            let (status, consumed, written) = pieces[index].withUnsafeBufferPointer { input -> (Int32, Int, Int) in
                let available = input.count - offset
                let room = buffer.count - produced
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + offset)
                stream.pointee.avail_in = uInt(available)
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + produced
                stream.pointee.avail_out = uInt(room)
                let status = CZlib.inflate(stream, Z_NO_FLUSH)
                defer {
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                }
                return (status, available - Int(stream.pointee.avail_in), room - Int(stream.pointee.avail_out))
            }
            offset += consumed
            produced += written
            insideMember = true
            switch status {
            case Z_STREAM_END:
                // The next member, if any, starts with the bytes left.
                insideMember = false
                if inflateReset(stream) != Z_OK { failed = true }
            case Z_OK:
                continue
            case Z_BUF_ERROR where consumed > 0 || written > 0:
                continue
            default:
                failed = true
            }
        }
        return failed ? nil : produced
    }
}
