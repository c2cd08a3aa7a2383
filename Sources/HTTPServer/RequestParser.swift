/// The limits the parser enforces, copied from `HTTPServerConfiguration`.
struct ParserLimits: Sendable {
    var maxHeadBytes: Int
    var maxHeaderCount: Int
    var maxBodyBytes: Int

    init(maxHeadBytes: Int = 16 * 1024, maxHeaderCount: Int = 100, maxBodyBytes: Int = 64 * 1024) {
        self.maxHeadBytes = maxHeadBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }
}

/// A request the server refuses: it answers `status` with `message` as the body, then closes.
struct ParseError: Error, Equatable, Sendable {
    let status: Int
    let message: String
}

struct ParsedRequest: Sendable {
    var request: HTTPRequest
    /// Bytes of head and body, to drop from the buffer.
    var consumed: Int
    var keepAlive: Bool
    var isHead: Bool
}

enum ParseResult: Sendable {
    case complete(ParsedRequest)
    /// Call again once the buffer holds `needBytes`; pass `scanned` back as `scanFrom` so the head is not rescanned.
    case incomplete(scanned: Int, needBytes: Int)
    case invalid(ParseError)
}

/// A pure function from bytes to a request, so it can be tested and fuzzed without sockets.
///
/// Bare LF is accepted wherever CRLF is (RFC 9112 section 2.2); a CR anywhere else is rejected.
/// Absolute-form targets (`http://host/path`) are accepted and reduced to their path.
enum RequestParser {
    static func parse(_ bytes: [UInt8], limits: ParserLimits = ParserLimits()) -> ParseResult {
        bytes.withUnsafeBytes { parse($0, limits: limits) }
    }

    static func parse(_ buffer: UnsafeRawBufferPointer, limits: ParserLimits, scanFrom: Int = 0) -> ParseResult {
        let n = buffer.count
        guard n > 0, let raw = buffer.baseAddress else { return .incomplete(scanned: 0, needBytes: 1) }
        let base = raw.assumingMemoryBound(to: UInt8.self)

        // RFC 9112 2.2: empty lines before a request line are ignored (some clients send CRLF after a body).
        var start = 0
        while start < n {
            if base[start] == lf {
                start += 1
            } else if base[start] == cr, start + 1 < n, base[start + 1] == lf {
                start += 2
            } else {
                break
            }
        }

        // Find the empty line ending the head, rejecting control bytes on the way so garbage fails fast.
        let windowEnd = min(n, start + limits.maxHeadBytes)
        var i = max(scanFrom, start)
        var headEnd = -1
        while i < windowEnd {
            let b = base[i]
            if b < 0x20 {
                if b == lf {
                    if i - 1 >= start, base[i - 1] == lf {
                        headEnd = i + 1
                        break
                    }
                    if i - 2 >= start, base[i - 1] == cr, base[i - 2] == lf {
                        headEnd = i + 1
                        break
                    }
                } else if b != cr && b != tab {
                    return .invalid(.init(status: 400, message: "control character in request head"))
                }
            } else if b == 0x7F {
                return .invalid(.init(status: 400, message: "control character in request head"))
            }
            i += 1
        }
        if headEnd < 0 {
            guard n - start >= limits.maxHeadBytes else { return .incomplete(scanned: i, needBytes: n + 1) }
            if findLF(base, from: start, to: windowEnd) == nil {
                return .invalid(.init(status: 414, message: "request line too long"))
            }
            return .invalid(.init(status: 431, message: "request header section too large"))
        }
        return parseHead(base, count: n, start: start, headEnd: headEnd, limits: limits)
    }

    private static func parseHead(
        _ base: UnsafePointer<UInt8>, count n: Int, start: Int, headEnd: Int, limits: ParserLimits
    ) -> ParseResult {
        let requestLine: RequestLine
        switch parseRequestLine(base, start: start) {
        case .success(let parsed): requestLine = parsed
        case .failure(let error): return .invalid(error)
        }
        let fields: HeaderFields
        switch parseHeaderFields(base, from: requestLine.afterLine, limits: limits) {
        case .success(let parsed): fields = parsed
        case .failure(let error): return .invalid(error)
        }

        if fields.hasTransferEncoding {
            if fields.contentLength != nil {
                return .invalid(.init(status: 400, message: "both Content-Length and Transfer-Encoding sent"))
            }
            return .invalid(.init(status: 501, message: "Transfer-Encoding is not supported; send a Content-Length"))
        }
        let bodyLength = fields.contentLength ?? 0
        if bodyLength > limits.maxBodyBytes {
            return .invalid(.init(status: 413, message: "request body too large"))
        }
        let total = headEnd + bodyLength
        if n < total {
            // Resume the scan at the head's final LF, which is found again at once.
            return .incomplete(scanned: headEnd - 1, needBytes: total)
        }
        let body = bodyLength == 0 ? [] : Array(UnsafeBufferPointer(start: base + headEnd, count: bodyLength))
        let version = requestLine.version
        let keepAlive =
            version == .http11
            ? !fields.connectionClose : (fields.connectionKeepAlive && !fields.connectionClose)
        let target = requestLine.target
        let request = HTTPRequest(
            method: requestLine.method, target: target.whole, path: target.path, query: target.query,
            version: version, headers: fields.headers, body: body
        )
        return .complete(
            ParsedRequest(request: request, consumed: total, keepAlive: keepAlive, isHead: requestLine.isHead))
    }

    private struct RequestLine {
        var method: String
        var isHead: Bool
        var target: (whole: String, path: String, query: String)
        var version: HTTPVersion
        /// Where the first header field starts.
        var afterLine: Int
    }

    /// METHOD SP target SP HTTP/x.y
    private static func parseRequestLine(_ base: UnsafePointer<UInt8>, start: Int) -> Result<RequestLine, ParseError> {
        let (lineEnd, afterLine) = line(base, from: start)
        var p = start
        while p < lineEnd, isTokenByte(base[p]) { p += 1 }
        guard p > start, p < lineEnd, base[p] == sp else {
            return .failure(
                .init(status: 400, message: "malformed request line: expected METHOD SP target SP HTTP/1.1"))
        }
        let methodEnd = p
        p += 1
        let targetStart = p
        while p < lineEnd, base[p] > sp, base[p] != 0x7F { p += 1 }
        guard p > targetStart, p < lineEnd, base[p] == sp else {
            return .failure(
                .init(status: 400, message: "malformed request line: expected METHOD SP target SP HTTP/1.1"))
        }
        let targetEnd = p
        p += 1
        guard lineEnd - p == 8, base[p] == 0x48, base[p + 1] == 0x54, base[p + 2] == 0x54, base[p + 3] == 0x50,
            base[p + 4] == 0x2F, isDigit(base[p + 5]), base[p + 6] == 0x2E, isDigit(base[p + 7])
        else {
            return .failure(.init(status: 400, message: "malformed HTTP version"))
        }
        let version: HTTPVersion
        switch (base[p + 5], base[p + 7]) {
        case (0x31, 0x31): version = .http11
        case (0x31, 0x30): version = .http10
        default: return .failure(.init(status: 505, message: "only HTTP/1.0 and HTTP/1.1 are supported"))
        }

        let method = string(base, start, methodEnd)
        let isHead =
            methodEnd - start == 4 && base[start] == 0x48 && base[start + 1] == 0x45 && base[start + 2] == 0x41
            && base[start + 3] == 0x44
        return parseTarget(base, targetStart, targetEnd, method: method).map { target in
            RequestLine(method: method, isHead: isHead, target: target, version: version, afterLine: afterLine)
        }
    }

    /// The fields the parser acts on, besides the list it hands to the handler.
    private struct HeaderFields {
        var headers: [(name: String, value: String)] = []
        var contentLength: Int?
        var hasTransferEncoding = false
        var connectionClose = false
        var connectionKeepAlive = false
    }

    /// Header fields from `afterLine` up to the empty line that ends the head.
    private static func parseHeaderFields(
        _ base: UnsafePointer<UInt8>, from afterLine: Int, limits: ParserLimits
    ) -> Result<HeaderFields, ParseError> {
        var fields = HeaderFields()
        fields.headers.reserveCapacity(8)
        var p = afterLine
        while true {
            if base[p] == lf || (base[p] == cr && base[p + 1] == lf) { break }
            if base[p] == sp || base[p] == tab {
                return .failure(.init(status: 400, message: "obsolete line folding in headers is not allowed"))
            }
            let (fieldEnd, next) = line(base, from: p)
            let nameStart = p
            while p < fieldEnd, isTokenByte(base[p]) { p += 1 }
            guard p > nameStart, p < fieldEnd, base[p] == colon else {
                return .failure(.init(status: 400, message: "malformed header field name"))
            }
            let nameEnd = p
            p += 1
            while p < fieldEnd, base[p] == sp || base[p] == tab { p += 1 }
            let valueStart = p
            while p < fieldEnd {
                if base[p] == cr { return .failure(.init(status: 400, message: "bare CR in header field")) }
                p += 1
            }
            var valueEnd = fieldEnd
            while valueEnd > valueStart, base[valueEnd - 1] == sp || base[valueEnd - 1] == tab { valueEnd -= 1 }
            if fields.headers.count == limits.maxHeaderCount {
                return .failure(.init(status: 431, message: "too many header fields"))
            }
            if let error = note(base, name: nameStart..<nameEnd, value: valueStart..<valueEnd, in: &fields) {
                return .failure(error)
            }
            fields.headers.append((lowercased(base, nameStart, nameEnd), string(base, valueStart, valueEnd)))
            p = next
        }
        return .success(fields)
    }

    /// Records what the fields that frame the body or the connection say.
    private static func note(
        _ base: UnsafePointer<UInt8>, name: Range<Int>, value: Range<Int>, in fields: inout HeaderFields
    ) -> ParseError? {
        let nameStart = name.lowerBound
        let (valueStart, valueEnd) = (value.lowerBound, value.upperBound)
        if name.count == 14, equalsLowercase(base, nameStart, "content-length") {
            switch parseContentLength(base, valueStart, valueEnd) {
            case .success(let length):
                if let previous = fields.contentLength, previous != length {
                    return .init(status: 400, message: "conflicting Content-Length headers")
                }
                fields.contentLength = length
            case .failure(let error):
                return error
            }
        } else if name.count == 17, equalsLowercase(base, nameStart, "transfer-encoding") {
            fields.hasTransferEncoding = true
        } else if name.count == 10, equalsLowercase(base, nameStart, "connection") {
            forEachListElement(base, valueStart, valueEnd) { s, e in
                if e - s == 5, equalsLowercase(base, s, "close") { fields.connectionClose = true }
                if e - s == 10, equalsLowercase(base, s, "keep-alive") { fields.connectionKeepAlive = true }
            }
        }
        return nil
    }

    private static func parseTarget(
        _ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, method: String
    ) -> Result<(whole: String, path: String, query: String), ParseError> {
        guard
            let whole = String(validating: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
        else {
            return .failure(.init(status: 400, message: "request target is not valid UTF-8"))
        }
        var pathStart = start
        if base[start] == slash {
            // origin-form, the usual case
        } else if end - start == 1, base[start] == 0x2A {
            guard method == "OPTIONS" else {
                return .failure(.init(status: 400, message: "the * target is only allowed with OPTIONS"))
            }
            return .success((whole, whole, ""))
        } else if let authorityStart = absoluteFormAuthority(base, start, end) {
            var p = authorityStart
            while p < end, base[p] != slash, base[p] != question { p += 1 }
            guard p > authorityStart else {
                return .failure(.init(status: 400, message: "absolute-form target without a host"))
            }
            pathStart = p
        } else {
            return .failure(.init(status: 400, message: "request target must be a path such as /metrics"))
        }
        var q = pathStart
        while q < end, base[q] != question { q += 1 }
        let path: String
        if pathStart == start && q == end {
            path = whole
        } else if q == pathStart {
            path = "/"
        } else {
            path = string(base, pathStart, q)
        }
        let query = q < end ? string(base, q + 1, end) : ""
        return .success((whole, path, query))
    }

    /// Where the authority starts when the target begins with "http://" or "https://" (any case).
    private static func absoluteFormAuthority(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Int? {
        if end - start > 7, equalsLowercase(base, start, "http://") { return start + 7 }
        if end - start > 8, equalsLowercase(base, start, "https://") { return start + 8 }
        return nil
    }

    private static func parseContentLength(
        _ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int
    ) -> Result<Int, ParseError> {
        // A list of identical values is allowed (RFC 9110 8.6); anything else is a framing attack or a bug.
        var value: Int?
        var error: ParseError?
        var elements = 0
        forEachListElement(base, start, end, keepEmpty: true) { s, e in
            guard error == nil else { return }
            elements += 1
            guard e > s else {
                error = .init(status: 400, message: "invalid Content-Length")
                return
            }
            if e - s > 18 {
                // Checked before the digits so a huge number cannot overflow.
                error =
                    (s..<e).allSatisfy { isDigit(base[$0]) }
                    ? .init(status: 413, message: "request body too large")
                    : .init(status: 400, message: "invalid Content-Length")
                return
            }
            var v = 0
            for k in s..<e {
                guard isDigit(base[k]) else {
                    error = .init(status: 400, message: "invalid Content-Length")
                    return
                }
                v = v * 10 + Int(base[k] &- 0x30)
            }
            if let previous = value, previous != v {
                error = .init(status: 400, message: "conflicting Content-Length values")
                return
            }
            value = v
        }
        if let error { return .failure(error) }
        guard elements > 0, let value else { return .failure(.init(status: 400, message: "invalid Content-Length")) }
        return .success(value)
    }

    /// Calls `body` with each comma-separated element of a header value, trimmed of whitespace.
    private static func forEachListElement(
        _ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, keepEmpty: Bool = false, _ body: (Int, Int) -> Void
    ) {
        var s = start
        while s <= end {
            var e = s
            while e < end, base[e] != comma { e += 1 }
            var a = s
            var b = e
            while a < b, base[a] == sp || base[a] == tab { a += 1 }
            while b > a, base[b - 1] == sp || base[b - 1] == tab { b -= 1 }
            if b > a || keepEmpty { body(a, b) }
            s = e + 1
        }
    }

    /// The end of the line's content (before CRLF or LF) and the start of the next line; the caller knows an LF
    /// follows.
    private static func line(_ base: UnsafePointer<UInt8>, from start: Int) -> (contentEnd: Int, next: Int) {
        var p = start
        while base[p] != lf { p += 1 }
        let next = p + 1
        if p > start, base[p - 1] == cr { p -= 1 }
        return (p, next)
    }

    private static func findLF(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int? {
        var p = start
        while p < end {
            if base[p] == lf { return p }
            p += 1
        }
        return nil
    }

    /// Compares bytes case-insensitively against an ASCII lowercase literal.
    private static func equalsLowercase(_ base: UnsafePointer<UInt8>, _ start: Int, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        for k in 0..<count {
            var b = base[start + k]
            if b >= 0x41 && b <= 0x5A { b |= 0x20 }
            if b != expected[k] { return false }
        }
        return true
    }

    private static func string(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: base + start, count: end - start), as: UTF8.self)
    }

    private static func lowercased(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> String {
        String(unsafeUninitializedCapacity: end - start) { out in
            for k in 0..<(end - start) {
                let b = base[start + k]
                out[k] = b >= 0x41 && b <= 0x5A ? b | 0x20 : b
            }
            return end - start
        }
    }
}

private let lf: UInt8 = 0x0A
private let cr: UInt8 = 0x0D
private let tab: UInt8 = 0x09
private let sp: UInt8 = 0x20
private let colon: UInt8 = 0x3A
private let comma: UInt8 = 0x2C
private let slash: UInt8 = 0x2F
private let question: UInt8 = 0x3F

@inline(__always)
private func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }

/// tchar from RFC 9110 5.6.2, as a 128-bit table for one branch per byte.
@inline(__always)
private func isTokenByte(_ b: UInt8) -> Bool {
    guard b < 128 else { return false }
    let (lo, hi): (UInt64, UInt64) = (0x03FF_6CFA_0000_0000, 0x57FF_FFFF_C7FF_FFFE)
    return b < 64 ? (lo >> UInt64(b)) & 1 == 1 : (hi >> UInt64(b - 64)) & 1 == 1
}
