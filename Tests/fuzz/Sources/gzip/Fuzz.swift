// Gzip inflate, as the web handler and the shard workers read it. The input, as a gzip stream, inflates
// to the same bytes (or the same refusal) whole, cut into pieces anywhere, and read through a small
// buffer; the input, compressed as segments of one member, inflates back to itself.
import FuzzSupport
import Gzip

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    // The first byte: where the pieces are cut (every `cut + 1` bytes) and the read buffer's size.
    let cut = Int(data[0] & 0x1F) + 1
    let whole = Gzip.inflate([bytes])
    let pieces = stride(from: 0, to: bytes.count, by: cut).map { Array(bytes[$0..<min($0 + cut, bytes.count)]) }
    require(Gzip.inflate(pieces) == whole, "inflating in pieces of \(cut) bytes differs from whole")
    if let inflater = GzipInflater(pieces) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: Int(data[0] >> 5) + 1)
        var failed = false
        while !inflater.isFinished {
            guard let produced = buffer.withUnsafeMutableBytes({ inflater.read(into: $0) }) else {
                failed = true
                break
            }
            out += buffer[0..<produced]
        }
        require(failed ? whole == nil : whole == out, "reading through a small buffer differs from whole")
    }

    let compressor = GzipCompressor()
    var member = Gzip.header
    var crc: UInt32 = 0
    for piece in pieces {
        member += compressor.segment(piece)
        crc = Gzip.combine(crc, Gzip.crc32(piece), secondCount: piece.count)
    }
    member += Gzip.trailer(crc: crc, count: bytes.count)
    require(Gzip.inflate([member]) == bytes, "a compressed member does not inflate back to its text")
    return 0
}
