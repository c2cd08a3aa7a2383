// libFuzzer entry point for the request parser: built by ../fuzz.sh with
// `swiftc -sanitize=fuzzer,address` (fuzz.sh request-parser) with RequestParser.swift and HTTPMessage.swift.
// Besides "no crash", it checks the invariants the server relies on.

private let limits = ParserLimits(maxHeadBytes: 2048, maxHeaderCount: 20, maxBodyBytes: 256)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    check(RequestParser.parse(buffer, limits: limits), size: size)
    // Resuming from a partial scan must agree with parsing the whole buffer at once.
    if size > 1 {
        let half = UnsafeRawBufferPointer(rebasing: buffer[0..<(size / 2)])
        if case .incomplete(let scanned, _) = RequestParser.parse(half, limits: limits) {
            let resumed = RequestParser.parse(buffer, limits: limits, scanFrom: scanned)
            check(resumed, size: size)
            if case .complete(let whole) = RequestParser.parse(buffer, limits: limits) {
                guard case .complete(let again) = resumed, again.consumed == whole.consumed,
                    again.request.target == whole.request.target, again.request.body == whole.request.body
                else { fatalError("resumed parse disagrees with the whole parse") }
            }
        }
    }
    return 0
}

private func check(_ result: ParseResult, size: Int) {
    switch result {
    case .complete(let parsed):
        precondition(parsed.consumed > 0 && parsed.consumed <= size, "consumed out of range")
        precondition(parsed.request.body.count <= limits.maxBodyBytes, "body over the limit")
        precondition(parsed.request.headers.count <= limits.maxHeaderCount, "too many headers")
        // Bytes, not characters: "/" followed by a combining mark is one Character.
        precondition(
            parsed.request.path.utf8.first == UInt8(ascii: "/") || parsed.request.path == "*",
            "path \(parsed.request.path)")
    case .incomplete(let scanned, let needBytes):
        precondition(needBytes > size && scanned <= size, "incomplete with enough bytes")
        precondition(size <= limits.maxHeadBytes + limits.maxBodyBytes + 4, "waiting past the limits")
    case .invalid(let error):
        precondition([400, 413, 414, 431, 501, 505].contains(error.status), "status \(error.status)")
    }
}
