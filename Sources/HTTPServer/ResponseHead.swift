import Glibc
import Platform

/// What the server says about the connection in a response head.
enum ConnectionHeader {
    case omitted, close, keepAlive
}

/// Serializes a status line and headers into one reused buffer, so writing a response head allocates nothing.
struct ResponseHeadWriter {
    private(set) var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(1024)
    }

    mutating func build(
        status: Int, headers: [(name: String, value: String)], contentLength: Int, date: [UInt8],
        connection: ConnectionHeader, extra: [UInt8] = []
    ) {
        bytes.removeAll(keepingCapacity: true)
        let status = (100...999).contains(status) ? status : 500
        append("HTTP/1.1 ")
        appendDecimal(status)
        append(" ")
        append(reasonPhrase(status))
        append("\r\n")
        // RFC 9110 8.6: no Content-Length on 1xx and 204.
        if status >= 200 && status != 204 {
            append("Content-Length: ")
            appendDecimal(contentLength)
            append("\r\n")
        }
        append("Date: ")
        bytes.append(contentsOf: date)
        append("\r\n")
        switch connection {
        case .omitted: break
        case .close: append("Connection: close\r\n")
        case .keepAlive: append("Connection: keep-alive\r\n")
        }
        appendFields(headers)
        bytes.append(contentsOf: extra)
        append("\r\n")
    }

    /// Header lines alone, for fields rendered once and added to many responses.
    mutating func renderFields(_ headers: [(name: String, value: String)]) -> [UInt8] {
        bytes.removeAll(keepingCapacity: true)
        appendFields(headers)
        return bytes
    }

    private mutating func appendFields(_ headers: [(name: String, value: String)]) {
        for (name, value) in headers where !isServerOwned(name) {
            appendSanitized(name)
            append(": ")
            appendSanitized(value)
            append("\r\n")
        }
    }

    private mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Control bytes from a handler would let a header value inject headers or end the head early.
    private mutating func appendSanitized(_ text: String) {
        let from = bytes.count
        bytes.append(contentsOf: text.utf8)
        for i in from..<bytes.count where bytes[i] < 0x20 || bytes[i] == 0x7F {
            bytes[i] = 0x20
        }
    }

    private mutating func appendDecimal(_ value: Int) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let from = bytes.count
        bytes.append(contentsOf: repeatElement(0x30, count: digits))
        var v = value
        var i = from + digits - 1
        while i >= from {
            bytes[i] = 0x30 + UInt8(v % 10)
            v /= 10
            i -= 1
        }
    }

    /// The framing headers belong to the server; a handler copying them would corrupt the stream.
    private func isServerOwned(_ name: String) -> Bool {
        switch name.utf8.count {
        case 4: return equalsIgnoringCase(name, "date")
        case 10: return equalsIgnoringCase(name, "connection")
        case 14: return equalsIgnoringCase(name, "content-length")
        case 17: return equalsIgnoringCase(name, "transfer-encoding")
        default: return false
        }
    }

    private func equalsIgnoringCase(_ name: String, _ lowercase: StaticString) -> Bool {
        var i = 0
        let expected = lowercase.utf8Start
        for var b in name.utf8 {
            if b >= 0x41 && b <= 0x5A { b |= 0x20 }
            if b != expected[i] { return false }
            i += 1
        }
        return true
    }
}

func reasonPhrase(_ status: Int) -> StaticString {
    switch status {
    case 100: "Continue"
    case 101: "Switching Protocols"
    case 200: "OK"
    case 201: "Created"
    case 202: "Accepted"
    case 204: "No Content"
    case 206: "Partial Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 406: "Not Acceptable"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 410: "Gone"
    case 411: "Length Required"
    case 413: "Content Too Large"
    case 414: "URI Too Long"
    case 415: "Unsupported Media Type"
    case 422: "Unprocessable Content"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    case 505: "HTTP Version Not Supported"
    default: "Status"
    }
}

/// The IMF-fixdate for the Date header, reformatted only when the second changes.
struct HTTPDate {
    private(set) var bytes = [UInt8](repeating: 0x20, count: 29)
    private var second = -1

    mutating func refresh() {
        let now = time(nil)
        guard now != second else { return }
        second = now
        let parts = CivilTime(seconds: now)
        let days: StaticString = "SunMonTueWedThuFriSat"
        let months: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"
        copy(days, at: 0, from: parts.weekday * 3)
        bytes[3] = 0x2C
        bytes[4] = 0x20
        twoDigits(parts.day, at: 5)
        bytes[7] = 0x20
        copy(months, at: 8, from: (parts.month - 1) * 3)
        bytes[11] = 0x20
        let year = parts.year
        twoDigits(year / 100, at: 12)
        twoDigits(year % 100, at: 14)
        bytes[16] = 0x20
        twoDigits(parts.hour, at: 17)
        bytes[19] = 0x3A
        twoDigits(parts.minute, at: 20)
        bytes[22] = 0x3A
        twoDigits(parts.second, at: 23)
        bytes[25] = 0x20
        bytes[26] = 0x47
        bytes[27] = 0x4D
        bytes[28] = 0x54
    }

    private mutating func copy(_ names: StaticString, at index: Int, from offset: Int) {
        for k in 0..<3 { bytes[index + k] = names.utf8Start[offset + k] }
    }

    private mutating func twoDigits(_ value: Int, at index: Int) {
        bytes[index] = 0x30 + UInt8(value / 10 % 10)
        bytes[index + 1] = 0x30 + UInt8(value % 10)
    }
}
