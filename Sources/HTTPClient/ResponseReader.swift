import Encoding

/// Reads one HTTP/1.1 response from a stream, enforcing the head and body caps.
struct ResponseReader {
    /// A head larger than this is not a response we want: it is garbage or an attack.
    static let maxHeadBytes = 64 * 1024

    private let stream: any ByteStream
    private let deadline: Deadline
    private let maxBodyBytes: Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    /// Whether any byte of the answer arrived: before that, a request on a reused
    /// connection that broke can be sent again on a new one.
    private(set) var receivedAny = false
    /// After `readResponse`: the message was framed, complete, and neither side asked to close,
    /// so the connection can carry the next request.
    private(set) var reusable = false

    init(stream: any ByteStream, deadline: Deadline, maxBodyBytes: Int) {
        self.stream = stream
        self.deadline = deadline
        self.maxBodyBytes = maxBodyBytes
    }

    mutating func readResponse() throws(HTTPClientError) -> HTTPClientResponse {
        var (status, headers, keepAlive) = try readHead(isFirst: true)
        // Interim responses (100 Continue, 103 Early Hints) precede the real one.
        while (100...199).contains(status) {
            (status, headers, keepAlive) = try readHead(isFirst: false)
        }
        let (body, framed) = try readBody(status: status, headers: headers)
        reusable = keepAlive && framed && position == buffer.count
        return HTTPClientResponse(status: status, headers: headers, body: body)
    }

    /// The answer of a proxy to CONNECT: its status and headers. A 2xx answer has no body, and
    /// nothing may follow it before the client speaks; a refusal's body is not read.
    mutating func readConnectResponse() throws(HTTPClientError) -> (
        status: Int, headers: [(name: String, value: String)]
    ) {
        var (status, headers, _) = try readHead(isFirst: true)
        while (100...199).contains(status) {
            (status, headers, _) = try readHead(isFirst: false)
        }
        if (200...299).contains(status) && position != buffer.count {
            throw .malformed("the proxy sent data after accepting the tunnel")
        }
        return (status, headers)
    }

    // MARK: Head

    /// Status, headers, and whether the connection may stay open (HTTP/1.1 without `Connection: close`).
    private mutating func readHead(
        isFirst: Bool
    ) throws(HTTPClientError) -> (Int, [(name: String, value: String)], Bool) {
        var headBytes = 0
        let statusLine = try readLine(
            budget: &headBytes,
            missing: isFirst && buffer.count == position
                ? "connection closed without a response" : "connection closed inside the response header")
        let (status, isHTTP11) = try Self.parseStatusLine(statusLine)
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try readLine(budget: &headBytes, missing: "connection closed inside the response header")
            if line.isEmpty { break }
            if line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t") {
                throw .malformed("obsolete folded header line")
            }
            // A slice of the buffer: its indices are the buffer's, so an empty name is a colon at its start.
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw .malformed("header line without a name and colon")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            guard name.utf8.allSatisfy(Self.isTokenByte) else { throw .malformed("invalid header name") }
            headers.append((name, String(decoding: Self.trimmed(line[(colon + 1)...]), as: UTF8.self)))
        }
        let close = headers.contains { header in
            header.name == "connection"
                && header.value.split(separator: ",").contains {
                    String(decoding: Self.trimmed(ArraySlice($0.utf8)), as: UTF8.self).lowercased() == "close"
                }
        }
        return (status, headers, isHTTP11 && !close)
    }

    /// `HTTP/1.x SSS reason`; the reason phrase is optional and ignored. Also: whether it is 1.1.
    private static func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTPClientError) -> (Int, Bool) {
        let bytes = Array(line)
        guard bytes.count >= 12, bytes[0..<7].elementsEqual("HTTP/1.".utf8),
            bytes[7] == UInt8(ascii: "0") || bytes[7] == UInt8(ascii: "1"),
            bytes[8] == UInt8(ascii: " "),
            bytes[9..<12].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            bytes.count == 12 || bytes[12] == UInt8(ascii: " ")
        else {
            throw .malformed("invalid status line")
        }
        return (bytes[9..<12].reduce(0) { $0 * 10 + Int($1 - 0x30) }, bytes[7] == UInt8(ascii: "1"))
    }

    // MARK: Body

    /// The body, and whether its end was framed (not marked by the close of the connection).
    private mutating func readBody(
        status: Int, headers: [(name: String, value: String)]
    ) throws(HTTPClientError) -> ([UInt8], Bool) {
        if status == 204 || status == 304 { return ([], true) }
        let transferCodings = headers.filter { $0.name == "transfer-encoding" }
            .flatMap { $0.value.split(separator: ",") }
            .map { String(decoding: Self.trimmed(ArraySlice($0.utf8)), as: UTF8.self).lowercased() }
        if let last = transferCodings.last {
            // RFC 9112 6.3: without chunked last, the body runs to the close.
            return last == "chunked" ? (try readChunkedBody(), true) : (try readUntilClose(), false)
        }
        if let length = try Self.contentLength(headers) {
            guard length <= maxBodyBytes else { throw .tooLarge(limit: maxBodyBytes) }
            return (try readExactly(length, truncated: "connection closed before Content-Length bytes arrived"), true)
        }
        return (try readUntilClose(), false)
    }

    /// Repeated or comma-joined values are allowed only when they all agree.
    private static func contentLength(_ headers: [(name: String, value: String)]) throws(HTTPClientError) -> Int? {
        var result: Int?
        for header in headers where header.name == "content-length" {
            for part in header.value.split(separator: ",", omittingEmptySubsequences: false) {
                let digits = trimmed(ArraySlice(part.utf8))
                guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw .malformed("invalid Content-Length")
                }
                let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                guard result == nil || result == value else { throw .malformed("conflicting Content-Length values") }
                result = value
            }
        }
        return result
    }

    private mutating func readChunkedBody() throws(HTTPClientError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            var lineBudget = 0
            let sizeLine = try readLine(
                budget: &lineBudget, missing: "connection closed inside a chunk header", requireCR: true)
            let size = try Self.chunkSize(sizeLine)
            if size == 0 { break }
            guard size <= maxBodyBytes - body.count else { throw .tooLarge(limit: maxBodyBytes) }
            body += try readExactly(size, truncated: "connection closed inside a chunk")
            let end = try readExactly(2, truncated: "connection closed after a chunk")
            guard end == [0x0D, 0x0A] else { throw .malformed("chunk data not followed by CRLF where its size ends") }
        }
        // Trailers are read to reach the end of the message and then ignored.
        var trailerBudget = 0
        while try !readLine(budget: &trailerBudget, missing: "connection closed inside the trailers").isEmpty {}
        return body
    }

    /// RFC 9112 7.1: `1*HEXDIG [ BWS ";" chunk-ext ]`, nothing else. `Int(_:radix:)` alone would take a
    /// sign (`-b`: a negative size, which the ranges below trap on) and overflow past 15 digits.
    private static func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPClientError) -> Int {
        var size = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let value = Hex.value(of: line[index]) {
            // Leading zeros add nothing; 15 significant hex digits still fit in Int.
            if size > 0 || value > 0 { digits += 1 }
            guard digits <= 15 else { throw .malformed("chunk size larger than 15 hex digits") }
            size = size << 4 | Int(value)
            index += 1
        }
        guard index > line.startIndex else {
            throw .malformed("invalid chunk size: the line must start with hex digits")
        }
        let rest = line[index...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard rest.isEmpty ? rest.startIndex == index : rest.first == UInt8(ascii: ";") else {
            throw .malformed("invalid chunk size: only hex digits, then optionally ';' and extensions")
        }
        return size
    }

    private mutating func readUntilClose() throws(HTTPClientError) -> [UInt8] {
        while !atEnd {
            guard buffer.count - position <= maxBodyBytes else { throw .tooLarge(limit: maxBodyBytes) }
            try fill()
        }
        guard buffer.count - position <= maxBodyBytes else { throw .tooLarge(limit: maxBodyBytes) }
        defer { position = buffer.count }
        return Array(buffer[position...])
    }

    // MARK: Buffering

    private mutating func readExactly(_ count: Int, truncated: String) throws(HTTPClientError) -> [UInt8] {
        while buffer.count - position < count {
            try fill()
            if atEnd && buffer.count - position < count { throw .malformed(truncated) }
        }
        defer { position += count }
        return Array(buffer[position..<(position + count)])
    }

    /// One line without its LF (and CR); `budget` accumulates bytes across the lines of one head.
    /// A head line may end in a bare LF (RFC 9112 2.2); a chunk line must end in CRLF (`requireCR`).
    private mutating func readLine(
        budget: inout Int, missing: String, requireCR: Bool = false
    ) throws(HTTPClientError) -> ArraySlice<UInt8> {
        // Counted from `position`, because fill() may move the unread bytes to the front.
        var scanned = 0
        while true {
            if let newline = buffer[(position + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                budget += newline + 1 - position
                guard budget <= Self.maxHeadBytes else {
                    throw .malformed("response header larger than \(Self.maxHeadBytes) bytes")
                }
                var line = buffer[position..<newline]
                if line.last == UInt8(ascii: "\r") {
                    line = line.dropLast()
                } else if requireCR {
                    throw .malformed("chunk line ends in a bare LF, not CRLF")
                }
                position = newline + 1
                return line
            }
            guard budget + buffer.count - position <= Self.maxHeadBytes else {
                throw .malformed("response header larger than \(Self.maxHeadBytes) bytes")
            }
            scanned = buffer.count - position
            try fill()
            if atEnd && position + scanned == buffer.count { throw .malformed(missing) }
        }
    }

    /// Appends what the stream has, dropping consumed bytes first so the buffer stays small.
    private mutating func fill() throws(HTTPClientError) {
        guard !atEnd else { return }
        if position > 0 && position >= buffer.count / 2 {
            buffer.removeFirst(position)
            position = 0
        }
        // Read into uninitialized stack memory and append what came: zero-filling a 16 KB
        // chunk for every read of a 1 KB answer showed up in profiles of the poller.
        let (stream, deadline) = (stream, deadline)
        let result = withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 1) {
            scratch -> Result<Int, HTTPClientError> in
            do throws(HTTPClientError) {
                let count = try stream.read(into: scratch, deadline: deadline)
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                return .success(count)
            } catch {
                return .failure(error)
            }
        }
        let n = try result.get()
        if n == 0 { atEnd = true } else { receivedAny = true }
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (b: UInt8) in b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else {
            return bytes[bytes.endIndex...]
        }
        return bytes[first...last]
    }

    private static func isTokenByte(_ b: UInt8) -> Bool {
        b > 0x20 && b < 0x7F && !"\"(),/:;<=>?@[\\]{}".utf8.contains(b)
    }
}
