/// Base64 (RFC 4648): `Basic` credentials both ways, and the alphabets redaction reads an echo in.
public enum Base64 {
    /// RFC 4648's two alphabets: section 4's (`+`, `/`), which HTTP's `Basic` uses, and section 5's
    /// URL- and file-safe one (`-`, `_`).
    public enum Alphabet: Sendable {
        case standard
        case url

        fileprivate var characters: [UInt8] {
            switch self {
            case .standard: Base64.standardCharacters
            case .url: Base64.urlCharacters
            }
        }
    }

    /// `bytes` in `alphabet`, padded with `=` to a multiple of four unless `padded` is false.
    public static func encoded(
        _ bytes: some Collection<UInt8>, alphabet: Alphabet = .standard, padded: Bool = true
    ) -> String {
        let characters = alphabet.characters
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let count = min(3, input.count - index)
            var value: UInt32 = 0
            for offset in 0..<3 { value = value << 8 | (offset < count ? UInt32(input[index + offset]) : 0) }
            for position in 0...count { out.append(characters[Int(value >> (18 - 6 * UInt32(position)) & 63)]) }
            if padded { out += repeatElement(UInt8(ascii: "="), count: 3 - count) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The text as `encoded` writes it, strictly (as Go's `StdEncoding`): a length that is a multiple
    /// of four, padding only at the end, no other character, no line breaks. Nil for anything else.
    public static func decoded(_ text: some Collection<UInt8>, alphabet: Alphabet = .standard) -> [UInt8]? {
        let input = Array(text)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let last = index + 4 == input.count
            var value: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let byte = input[index + offset]
                if byte == UInt8(ascii: "="), last, offset >= 2 {
                    padding += 1
                    value <<= 6
                    continue
                }
                guard padding == 0, let sextet = sextet(byte, in: alphabet) else { return nil }
                value = value << 6 | UInt32(sextet)
            }
            out.append(UInt8(truncatingIfNeeded: value >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: value >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: value)) }
            index += 4
        }
        return out
    }

    /// A character's six bits in `alphabet`, or in either alphabet when nil (a reader that does not
    /// know which one an echo used); nil for a character of neither.
    @inlinable
    public static func sextet(_ byte: UInt8, in alphabet: Alphabet? = nil) -> UInt8? {
        let value: UInt8
        switch alphabet {
        case .standard?: value = standardValues[Int(byte)]
        case .url?: value = urlValues[Int(byte)]
        case nil: value = eitherValues[Int(byte)]
        }
        return value == none ? nil : value
    }

    @usableFromInline static let none: UInt8 = 255
    private static let standardCharacters = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// By table: redaction reads every byte of a text through one of these.
    @usableFromInline static let standardValues = values(standardCharacters)
    @usableFromInline static let urlValues = values(urlCharacters)
    @usableFromInline static let eitherValues = zip(standardValues, urlValues).map { min($0, $1) }

    private static func values(_ characters: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: none, count: 256)
        for (value, character) in characters.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }
}
