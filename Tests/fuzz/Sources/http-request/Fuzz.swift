// The HTTP request parser, as the event loop drives it: the input parsed whole and fed in pieces of
// 1–32 bytes (sizes drawn from the first byte) must give the same requests, then the same refusal.
// Besides "no crash", the invariants the server relies on.
import FuzzSupport

@testable import HTTPServer

private let limits = ParserLimits(maxHeadBytes: 2048, maxHeaderCount: 20, maxBodyBytes: 256)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    var seed = UInt64(data[0]) &+ 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let whole = outcomes(input, pieces: { input.count })
    let fed = outcomes(input) {
        // A small xorshift: the piece sizes differ from input to input, but are fixed by it.
        seed ^= seed << 13
        seed ^= seed >> 7
        seed ^= seed << 17
        return Int(seed % 32) + 1
    }
    require(whole == fed, "whole \(whole) but in pieces \(fed)")
    return 0
}

/// What the loop would do with these bytes: each request's summary, then how it ended.
private func outcomes(_ input: [UInt8], pieces: () -> Int) -> [String] {
    var results: [String] = []
    var buffered: [UInt8] = []
    var offset = 0
    var scanned = 0
    var needBytes = 1
    while true {
        if buffered.count < needBytes {
            guard offset < input.count else {
                results.append(buffered.isEmpty ? "end" : "incomplete")
                return results
            }
            let next = min(input.count, offset + pieces())
            buffered += input[offset..<next]
            offset = next
            continue
        }
        let result = buffered.withUnsafeBytes { RequestParser.parse($0, limits: limits, scanFrom: scanned) }
        switch result {
        case .incomplete(let nowScanned, let need):
            require(need > buffered.count && nowScanned <= buffered.count, "incomplete with enough bytes")
            require(buffered.count <= limits.maxHeadBytes + limits.maxBodyBytes + 4, "waiting past the limits")
            scanned = nowScanned
            needBytes = need
        case .invalid(let error):
            require([400, 413, 414, 431, 501, 505].contains(error.status), "status \(error.status)")
            results.append("\(error.status) \(error.message)")
            return results
        case .complete(let parsed):
            require(parsed.consumed > 0 && parsed.consumed <= buffered.count, "consumed out of range")
            let request = parsed.request
            require(request.body.count <= limits.maxBodyBytes, "body over the limit")
            require(request.headers.count <= limits.maxHeaderCount, "too many headers")
            // Bytes, not characters: "/" followed by a combining mark is one Character.
            require(request.path.utf8.first == UInt8(ascii: "/") || request.path == "*", "path \(request.path)")
            results.append(
                "\(request.method) \(request.target) \(request.path) \(request.query) \(request.version) "
                    + "\(request.headers) \(request.body) \(parsed.consumed) \(parsed.keepAlive) \(parsed.isHead)")
            buffered.removeFirst(parsed.consumed)
            scanned = 0
            needBytes = 1
        }
    }
}
