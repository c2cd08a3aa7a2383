/// A strict RFC 8259 parser over bytes. Small on purpose: the exporter reads
/// 1 KB weather answers and its own config file, and this keeps Foundation
/// (and its memory) out of the process.
public struct JSONParser {
    /// Deep enough for any real document, shallow enough that hostile input
    /// cannot exhaust the stack.
    public static let maxDepth = 128

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index != bytes.count { throw parser.error("unexpected text after the end of the document") }
        return value
    }

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"):
            return try nested { (p: inout JSONParser) throws(JSONSyntaxError) in try p.parseObject() }
        case UInt8(ascii: "["):
            return try nested { (p: inout JSONParser) throws(JSONSyntaxError) in try p.parseArray() }
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character \(Self.show(byte))")
        }
    }

    private mutating func nested(
        _ body: (inout JSONParser) throws(JSONSyntaxError) -> JSONValue
    ) throws(JSONSyntaxError) -> JSONValue {
        depth += 1
        if depth > Self.maxDepth { throw error("nested deeper than \(Self.maxDepth) levels") }
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a key in double quotes") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after the key \"\(key)\"") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw error("expected ',' or '}' after the value of \"\(key)\"")
            }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw error("expected ',' or ']' in a list")
            }
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        var scalars: [UInt8] = []
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scalars, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &scalars)
            case 0..<0x20:
                throw error("control character \(Self.show(byte)) inside a string (escape it)")
            default:
                scalars.append(byte)
                index += 1
            }
        }
        throw error("a string is not closed")
    }

    private mutating func parseEscape(into out: inout [UInt8]) throws(JSONSyntaxError) {
        guard let byte = current else { throw error("unexpected end inside an escape") }
        index += 1
        let simple: UInt8? =
            switch byte {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case UInt8(ascii: "/"): UInt8(ascii: "/")
            case UInt8(ascii: "b"): 8
            case UInt8(ascii: "f"): 12
            case UInt8(ascii: "n"): 10
            case UInt8(ascii: "r"): 13
            case UInt8(ascii: "t"): 9
            default: nil
            }
        if let simple {
            out.append(simple)
            return
        }
        guard byte == UInt8(ascii: "u") else { throw error("unknown escape \\\(Self.show(byte))") }
        var code = try parseHex4()
        if (0xD800..<0xDC00).contains(code) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("a \\u escape starts a surrogate pair but does not finish it")
            }
            index += 2
            let low = try parseHex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate in a \\u escape") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(code) else { throw error("a \\u escape names no character") }
        out.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("unexpected end inside a \\u escape") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, Self.isDigit(first) else { throw error("a number needs digits") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, Self.isDigit(next) { throw error("a number cannot start with 0") }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let next = current, Self.isDigit(next) else { throw error("a decimal point needs digits after it") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let next = current, Self.isDigit(next) else { throw error("an exponent needs digits") }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        // Past the largest Double this is ±infinity (`JSONValue.number`), refused by the field's range.
        guard let value = Double(text) else {
            index = start
            throw error("the number \(text) cannot be read")
        }
        return value
    }

    private mutating func skipDigits() {
        while let byte = current, Self.isDigit(byte) { index += 1 }
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard index + expected.count <= bytes.count, bytes[index..<index + expected.count].elementsEqual(expected)
        else {
            throw error("unexpected word (strings need double quotes)")
        }
        index += expected.count
    }

    private mutating func skipWhitespace() {
        while let byte = current,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
                || byte == UInt8(ascii: "\r")
        {
            index += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func show(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }

    /// Line and column of the current position, counted only when an error needs them.
    private func error(_ message: String) -> JSONSyntaxError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONSyntaxError(message: message, line: line, column: column)
    }
}
