// The HTTP client's response reader over a stream of the input's bytes: status line, headers,
// Content-Length, chunked bodies with extensions and trailers, and the responses after it while the
// connection stays reusable. The first answer must be the same whether the bytes come whole or in
// pieces of 1–32 bytes (sizes drawn from the first byte), and no body may pass its cap.
import FuzzSupport

@testable import HTTPClient

private let maxBodyBytes = 4096

/// Hands out the input, whole or in pieces, then 0 (the peer closed).
private final class Upstream: ByteStream {
    let bytes: [UInt8]
    var offset = 0
    var seed: UInt64
    let whole: Bool

    init(_ bytes: [UInt8], seed: UInt8, whole: Bool) {
        self.bytes = bytes
        self.seed = UInt64(seed) &+ 1
        self.whole = whole
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int {
        var count = buffer.count
        if !whole {
            seed ^= seed << 13
            seed ^= seed >> 7
            seed ^= seed << 17
            count = min(count, Int(seed % 32) + 1)
        }
        count = min(count, bytes.count - offset)
        bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
        }
        offset += count
        return count
    }

    func writeAll(_ bytes: [UInt8], deadline: Deadline) throws(HTTPClientError) {}
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = answers(Upstream(input, seed: data[0], whole: true))
    let pieces = answers(Upstream(input, seed: data[0], whole: false))
    require(whole.first == pieces.first, "whole \(whole) but in pieces \(pieces)")
    return 0
}

/// Each response read from the stream while the connection stays reusable, and how the last ended.
private func answers(_ upstream: Upstream) -> [String] {
    let deadline = Deadline(after: .seconds(3600))
    var results: [String] = []
    for _ in 0..<8 {
        var reader = ResponseReader(stream: upstream, deadline: deadline, maxBodyBytes: maxBodyBytes)
        do {
            let response = try reader.readResponse()
            require(response.body.count <= maxBodyBytes, "a body of \(response.body.count) bytes passed the cap")
            require(
                (0...999).contains(response.status) && !(100...199).contains(response.status), "interim status")
            results.append("\(response.status) \(response.headers) \(response.body)")
            guard reader.reusable else { break }
        } catch {
            require(error.kind == "decode", "a reader failure of kind \(error.kind): \(error)")
            results.append("\(error)")
            break
        }
    }
    return results
}
