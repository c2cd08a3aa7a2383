import CZlib
import Gzip

/// What tests need of gzip beyond what the product serves: a whole member in one call, and how
/// many members a stream holds (curl and browsers read only the first).
extension Gzip {
    /// `bytes` as one complete gzip member, framed the way the product frames its segments.
    public static func member(_ bytes: [UInt8], level: Int32 = 1) -> [UInt8] {
        header + GzipCompressor(level: level).segment(bytes) + trailer(crc: crc32(bytes), count: bytes.count)
    }

    /// How many gzip members the stream holds; nil when it is not valid gzip or ends inside a member.
    public static func memberCount(_ pieces: [[UInt8]]) -> Int? {
        var stream = z_stream()
        guard czlib_inflate_init_gzip(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var input = pieces.concatenated
        var output = [UInt8](repeating: 0, count: 64 << 10)
        var members = 0
        var inside = false
        var offset = 0
        while offset < input.count {
            inside = true
            let (status, consumed) = input.withUnsafeMutableBufferPointer { bytes in
                output.withUnsafeMutableBufferPointer { out in
                    stream.next_in = bytes.baseAddress! + offset
                    stream.avail_in = uInt(bytes.count - offset)
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (status, bytes.count - offset - Int(stream.avail_in))
                }
            }
            offset += consumed
            switch status {
            case Z_STREAM_END:
                members += 1
                inside = false
                guard inflateReset(&stream) == Z_OK else { return nil }
            case Z_OK: continue
            default: return nil
            }
        }
        return inside ? nil : members
    }
}
