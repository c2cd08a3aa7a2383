/// HTML and XML character references (`&#57;`, `&#x39;`, `&amp;`), read as a browser reads them, for
/// a reader that looks for text in what a page or a message shows once they are decoded (redaction).
public enum CharacterReference {
    /// The reference that starts at `start` (its `&`): the character it stands for and the index after
    /// it; nil when none starts there. A numeric one is decimal or hex (`x` or `X`), with any number of
    /// leading zeros and its `;` optional, as HTML reads it; one for no character (0, a surrogate, past
    /// U+10FFFF) stands for U+FFFD. A named one needs its `;`: XML's five and HTML's names of the other
    /// ASCII punctuation (HTML names no ASCII letter or digit).
    public static func reference<Bytes: RandomAccessCollection<UInt8>>(
        in bytes: Bytes, at start: Int
    ) -> (scalar: Unicode.Scalar, end: Int)? where Bytes.Index == Int {
        guard start + 2 < bytes.endIndex, bytes[start] == UInt8(ascii: "&") else { return nil }
        if bytes[start + 1] == UInt8(ascii: "#") { return numeric(in: bytes, at: start) }
        var end = start + 1
        var name: [UInt8] = []
        while end < bytes.endIndex, name.count <= longestName, isAlphanumeric(bytes[end]) {
            name.append(bytes[end])
            end += 1
        }
        guard end < bytes.endIndex, bytes[end] == UInt8(ascii: ";"), let value = names[name] else { return nil }
        return (Unicode.Scalar(value), end + 1)
    }

    private static func numeric<Bytes: RandomAccessCollection<UInt8>>(
        in bytes: Bytes, at start: Int
    ) -> (scalar: Unicode.Scalar, end: Int)? where Bytes.Index == Int {
        var end = start + 2
        let hex = end < bytes.endIndex && (bytes[end] == UInt8(ascii: "x") || bytes[end] == UInt8(ascii: "X"))
        if hex { end += 1 }
        let digitsStart = end
        var value: UInt32 = 0
        while end < bytes.endIndex, let digit = hex ? Hex.value(of: bytes[end]) : decimal(bytes[end]) {
            // Held just past the largest code point: more digits cannot bring it back.
            value = min(value * (hex ? 16 : 10) + UInt32(digit), 0x11_0000)
            end += 1
        }
        guard end > digitsStart else { return nil }
        if end < bytes.endIndex, bytes[end] == UInt8(ascii: ";") { end += 1 }
        let scalar = value == 0 ? nil : Unicode.Scalar(value)
        return (scalar ?? "\u{FFFD}", end)
    }

    private static func decimal(_ byte: UInt8) -> UInt8? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? byte - UInt8(ascii: "0") : nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        decimal(byte) != nil || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// The names of ASCII characters, as HTML spells them (case matters, as there).
    private static let names: [[UInt8]: UInt8] = {
        let table: [(String, Character)] = [
            ("amp", "&"), ("AMP", "&"), ("lt", "<"), ("LT", "<"), ("gt", ">"), ("GT", ">"), ("quot", "\""),
            ("QUOT", "\""), ("apos", "'"), ("excl", "!"), ("num", "#"), ("dollar", "$"), ("percnt", "%"),
            ("lpar", "("), ("rpar", ")"), ("ast", "*"), ("midast", "*"), ("plus", "+"), ("comma", ","),
            ("period", "."), ("sol", "/"), ("colon", ":"), ("semi", ";"), ("equals", "="), ("quest", "?"),
            ("commat", "@"), ("lsqb", "["), ("lbrack", "["), ("bsol", "\\"), ("rsqb", "]"), ("rbrack", "]"),
            ("Hat", "^"), ("lowbar", "_"), ("UnderBar", "_"), ("grave", "`"), ("DiacriticalGrave", "`"),
            ("lcub", "{"), ("lbrace", "{"), ("verbar", "|"), ("vert", "|"), ("VerticalLine", "|"), ("rcub", "}"),
            ("rbrace", "}"), ("Tab", "\t"), ("NewLine", "\n"),
        ]
        return Dictionary(uniqueKeysWithValues: table.map { (Array($0.0.utf8), $0.1.asciiValue!) })
    }()

    private static let longestName = 16
}
