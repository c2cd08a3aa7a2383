/// Percent-encoding (RFC 3986, section 2.1): a query's names and values on the way out, and what
/// came in as `%XX` (a proxy URL's credentials, a request's query, an echo redaction searches).
public enum PercentEncoding {
    /// `A`–`Z`, `a`–`z`, `0`–`9`, `-`, `_`, `.`, `~` (RFC 3986's unreserved characters) as they are,
    /// every other byte of the UTF-8 as `%XX`: safe in any part of a URL, a query's value included.
    public static func encoded(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), Hex.digit(byte >> 4), Hex.digit(byte & 15)]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What to do with a `%` not followed by two hex digits.
    public enum BrokenEscape: Sendable {
        /// The whole text is refused (a URL's credentials: a typo must not become another password).
        case refuse
        /// The `%` is kept as written (a form, an echo: decode what can be decoded).
        case keep
    }

    /// `bytes` decoded; nil only when `broken` is `.refuse` and an escape is broken. `plusAsSpace`
    /// reads `+` as a form (`application/x-www-form-urlencoded`) sends a space; elsewhere it is a `+`.
    @inlinable
    public static func decoded<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, plusAsSpace: Bool = false, broken: BrokenEscape = .refuse
    ) -> [UInt8]? where Bytes.Index == Int {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let whole = decode(bytes, plusAsSpace: plusAsSpace, broken: broken) { byte, _ in out.append(byte) }
        return whole ? out : nil
    }

    /// The same as text; a byte sequence that is not UTF-8 is repaired (U+FFFD), as `String(decoding:)` does.
    public static func decoded(
        _ text: some StringProtocol, plusAsSpace: Bool = false, broken: BrokenEscape = .refuse
    ) -> String? {
        decoded(Array(text.utf8), plusAsSpace: plusAsSpace, broken: broken).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The decoder itself: each decoded byte with the range of `bytes` it came from (three for an
    /// escape, one otherwise), for a reader that maps what it finds back to the text (redaction).
    /// False when `broken` is `.refuse` and an escape is broken (what was emitted before stands).
    @inlinable @discardableResult
    public static func decode<Bytes: RandomAccessCollection<UInt8>>(
        _ bytes: Bytes, plusAsSpace: Bool, broken: BrokenEscape, _ emit: (UInt8, Range<Int>) -> Void
    ) -> Bool where Bytes.Index == Int {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                if index + 2 < bytes.endIndex, let high = Hex.value(of: bytes[index + 1]),
                    let low = Hex.value(of: bytes[index + 2])
                {
                    emit(high << 4 | low, index..<(index + 3))
                    index += 3
                    continue
                }
                if broken == .refuse { return false }
            }
            emit(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte, index..<(index + 1))
            index += 1
        }
        return true
    }

    @inlinable
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
