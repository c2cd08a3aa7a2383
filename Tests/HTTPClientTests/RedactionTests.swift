import TestSupport
import Testing

@testable import HTTPClient

@Suite struct RedactionTests {
    static let key = "held-out-secret-key-0123456789abcdef"

    @Test func theKeyInEveryEncodingIsCut() {
        for echo in [
            Self.key, "held%2dout-secret-key-0123456789abcdef", "held%2Dout-secret-key-0123456789abcdef",
            "%68eld-out-secret-key-0123456789abcdef",
        ] {
            #expect(Redaction.redacted("a \(echo) b", secrets: [Self.key]) == "a <redacted> b", "\(echo)")
        }
        #expect(Redaction.redacted("a b+c", secrets: ["b c"]) == "a <redacted>")
    }

    /// The cut comes after the redaction: a secret across it is found whole; the marker may pass the limit.
    @Test func redactedBeforeItIsCut() {
        let text = String(repeating: "x", count: 140) + Self.key + "tail"
        #expect(
            Redaction.excerpt(text, maxBytes: 160, secrets: [Self.key]) == String(repeating: "x", count: 140)
                + "<redacted>tail")
        #expect(
            Redaction.excerpt(text, maxBytes: 145, secrets: [Self.key]) == String(repeating: "x", count: 140)
                + "<redacted>")
        #expect(Redaction.excerpt(text, maxBytes: 160, secrets: []) == String(text.prefix(160)))
        #expect(Redaction.excerpt("ab" + Self.key, maxBytes: 1, secrets: [Self.key]) == "a")
        // The cut never splits a character.
        #expect(Redaction.excerpt("aé", maxBytes: 2, secrets: []) == "a")
    }

    /// A text that stops inside a secret (its echo was cut upstream) loses the piece, from 4 bytes on.
    @Test func aPieceAtTheEndIsCut() {
        #expect(Redaction.redacted("appid=held-out-sec", secrets: [Self.key]) == "appid=<redacted>")
        #expect(Redaction.redacted("appid=held%2D", secrets: [Self.key]) == "appid=<redacted>")
        #expect(Redaction.redacted("appid=held%2", secrets: [Self.key]) == "appid=<redacted>", "inside an escape")
        #expect(
            Redaction.redacted("the end: hel", secrets: [Self.key]) == "the end: hel", "3 bytes match too many endings")
        #expect(
            Redaction.redacted("held-ou in the middle", secrets: [Self.key]) == "held-ou in the middle",
            "under the window, only at the end")
    }

    /// A proxy's credentials, in every form an echo can take, are secrets like the key.
    @Test func proxyCredentialsInEveryForm() throws {
        let proxy = try ProxyServer(parsing: "http://alice:pa%40ss%2Fw0rd@proxy.example:3128", origin: "test")
        let secrets = ProxyConfiguration(proxy: proxy).secrets
        for echo in [
            "alice:pa@ss/w0rd", "alice:pa%40ss%2Fw0rd", "alice%3Apa%40ss%2fw0rd",
            "Proxy-Authorization: Basic YWxpY2U6cGFAc3MvdzByZA==",
            "password pa@ss/w0rd", "pa%40ss%2Fw0rd",
        ] {
            let shown = Redaction.redacted(echo, secrets: secrets)
            #expect(
                !shown.contains("pa@ss") && !shown.contains("pa%40ss") && !shown.contains("cGFAc3Mv")
                    && shown.contains("<redacted>"), "\(echo): \(shown)")
        }
        #expect(
            Redaction.redacted("user alice here", secrets: secrets) == "user alice here",
            "the user name alone is not a secret")
        #expect(
            Redaction.redacted("user alice", secrets: secrets) == "user <redacted>",
            "but may be the start of `alice:password`, cut short")
        // A password too short to look for alone is still cut in its other forms.
        let short = try ProxyServer(parsing: "http://bob:abc@proxy.example", origin: "test")
        #expect(ProxyConfiguration(proxy: short).secrets == ["bob:abc", "Ym9iOmFiYw=="])
        #expect(ProxyConfiguration.direct.secrets.isEmpty)
    }
}

/// Redaction by windows (issue 27): any run of 8 characters of a secret goes, whatever an upstream
/// did to it. Each form an upstream was seen to leak the key in, then random secrets, cuts, cases and
/// encodings, checked by a naive oracle of its own (every view decoded the slow way, every window
/// of the secret searched for).
@Suite struct RedactionWindowTests {
    static let key = "9f86d081884c7d659a2feaa0c55ad015"

    /// The forms that leaked 20 to 24 of the key's 32 characters, or all of them, before.
    @Test(arguments: [
        "{\"message\":\"Invalid API key 9f86d081884c7d659a2fe...\"}", "key 9f86d081884c7d659a2feaa…",
        "appid=\"9f86d081884c7d659a2feaa0\"",
        "…884c7d659a2feaa0c55ad015 is not valid", "KEY 9F86D081884C7D659A2FEAA0C55AD015",
        "k=OWY4NmQwODE4ODRjN2Q2NTlhMmZlYWEwYzU1YWQwMTU=",
        "appid%3D9f86d081884c7d659a2feaa0c55ad015", "appid=%2539%2566%2538%2536d081884c7d659a2feaa0c55ad015",
        "9f86d081884c7d65\n9a2feaa0c55ad015",
        "9f8\r\n6d081884c7d659a2feaa0c55ad015",
    ])
    func eachFormSeenLeakingIsCut(echo: String) {
        let shown = Redaction.redacted("upstream said: \(echo)", secrets: [Self.key])
        #expect(shown.hasPrefix("upstream said: "), "\(shown)")
        #expect(shown.contains(Redaction.marker), "\(shown)")
        #expect(Oracle.leak(in: shown, of: Self.key) == nil, "\(echo) → \(shown)")
    }

    /// A proxy password cut and followed by `...` (10 of 16 characters once stayed).
    @Test func aProxyPasswordCutShortIsCut() throws {
        let proxy = try ProxyServer(parsing: "http://alice:Tr0ub4dor%263xyzQ@proxy.example:3128", origin: "test")
        let secrets = ProxyConfiguration(proxy: proxy).secrets
        for echo in ["password Tr0ub4dor&3...", "\"Tr0ub4dor&3x\"", "tr0ub4dor&3xyzq", "VHIwdWI0ZG9yJjN4eXpR"] {
            let shown = Redaction.redacted("proxy said: \(echo)", secrets: secrets)
            #expect(Oracle.leak(in: shown, of: "Tr0ub4dor&3xyzQ") == nil, "\(echo) → \(shown)")
        }
        #expect(Redaction.redacted("user alice here", secrets: secrets) == "user alice here")
    }

    /// The key as a page or a terminal shows it (issue 38): full-width, as character references (decimal,
    /// hex, leading zeros, without `;`), all mixed with raw characters, references to full-width forms
    /// and percent-encoded full-width UTF-8. What goes is the text as written: whole references.
    @Test(arguments: [
        RedactionWindowTests.fullWidth(key), RedactionWindowTests.references(key, as: "&#%d;"),
        RedactionWindowTests.references(key, as: "&#x%x;"), RedactionWindowTests.references(key, as: "&#X%X"),
        RedactionWindowTests.references(key, as: "&#000%d;"), RedactionWindowTests.mixed(key),
        RedactionWindowTests.references(key, as: "&#x%x;", fullWidth: true),
        RedactionWindowTests.percentEncoded(RedactionWindowTests.fullWidth(String(key.prefix(12))))
            + String(key.dropFirst(12)),
        "appid=" + RedactionWindowTests.mixed(String(key.dropFirst(9))),
    ])
    func theKeyAsShownIsCutWhole(echo: String) {
        let shown = Redaction.redacted("upstream said: \(echo) (code 401)", secrets: [Self.key])
        #expect(shown == "upstream said: \(echo.hasPrefix("appid=") ? "appid=" : "")<redacted> (code 401)", "\(echo)")
        #expect(Oracle.leak(in: shown, of: Self.key) == nil, "\(echo) → \(shown)")
    }

    /// Cut short by an upstream inside a reference: the piece at the end goes, the cut reference too.
    @Test func aKeyAsReferencesCutShortLosesThePiece() {
        let echo = Self.references(String(Self.key.prefix(6)), as: "&#x%x;")
        for cut in ["&", "&#", "&#x", "&#x6", "&#x64"] {
            #expect(Redaction.redacted("key \(echo)\(cut)", secrets: [Self.key]) == "key <redacted>", "\(cut)")
        }
        let fullWidth = Self.fullWidth(String(Self.key.prefix(5)))
        #expect(Redaction.redacted("key \(fullWidth)", secrets: [Self.key]) == "key <redacted>")
    }

    /// A proxy password with punctuation, as named references (XML's and HTML's) and full-width.
    @Test func aPasswordAsNamedReferencesIsCut() throws {
        let proxy = try ProxyServer(parsing: "http://alice:Tr0ub4dor%26%3Cxyz%40Q@proxy.example:3128", origin: "test")
        let secrets = ProxyConfiguration(proxy: proxy).secrets
        for echo in [
            "Tr0ub4dor&amp;&lt;xyz&commat;Q", "Tr0ub4dor&AMP;&#60;xyz&#x40Q", Self.fullWidth("Tr0ub4dor&<xyz@Q"),
        ] {
            let shown = Redaction.redacted("proxy said: \(echo)!", secrets: secrets)
            #expect(shown == "proxy said: <redacted>!", "\(echo)")
        }
        let plain = "a &amp; b &#60; c"
        #expect(Redaction.redacted(plain, secrets: secrets) == plain, "references alone are no secret")
    }

    /// `text` in full-width forms (U+FF01–U+FF5E for `!` to `~`).
    static func fullWidth(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { Unicode.Scalar($0.value + 0xFEE0)! }))
    }

    /// Each character of `text` as a numeric reference written by `format` (`%d` decimal, `%x`/`%X`
    /// hex); of its full-width form when asked.
    static func references(_ text: String, as format: String, fullWidth: Bool = false) -> String {
        text.unicodeScalars.map { scalar in
            let value = scalar.value + (fullWidth ? 0xFEE0 : 0)
            let number =
                format.contains("%d") ? String(value) : String(value, radix: 16, uppercase: format.contains("%X"))
            return format.replacing("%d", with: number).replacing("%x", with: number).replacing("%X", with: number)
        }.joined()
    }

    /// Every byte of `text` as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        String(decoding: text.utf8.flatMap { Oracle.escape($0, upper: true) }, as: UTF8.self)
    }

    /// Each character in turn raw, full-width, decimal, hex and hex of its full-width form.
    static func mixed(_ text: String) -> String {
        text.unicodeScalars.enumerated().map { index, scalar in
            let character = String(scalar)
            switch index % 5 {
            case 0: return character
            case 1: return fullWidth(character)
            case 2: return references(character, as: "&#%d;")
            case 3: return references(character, as: "&#x%x")
            default: return references(character, as: "&#X%X;", fullWidth: true)
            }
        }.joined()
    }

    /// A secret split between a log line's message and a field is found in the pieces joined.
    @Test func aSecretSplitAcrossPiecesIsCut() {
        let pieces = Redaction.redacted(
            pieces: ["poll failed: key 9f86d", "081884c7d659a2feaa0c55ad015 refused", "London"], secrets: [Self.key])
        #expect(pieces == ["poll failed: key <redacted>", "<redacted> refused", "London"])
    }

    /// Random secrets (hex keys and passwords), cut anywhere to 8 characters or more, their case
    /// changed, encoded raw, percent-encoded (all or some bytes, once or twice), in base64 (either
    /// alphabet, at any alignment), full-width, as character references (numeric in every way, named
    /// where HTML names the character) or all of these mixed, split by line breaks or across two
    /// pieces, and decorated as upstreams cut text: no window of the secret is left in any view, and
    /// the text around stays.
    @Test func randomSecretsCutsCasesAndEncodingsLeaveNoWindow() {
        var random = SeededGenerator(seed: 0x27_05)
        let hexDigits = Array("0123456789abcdef")
        let passwordCharacters = Array(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*()-_=+:/?")
        let decorations = ["", "...", "…", "\"", "'", ")", "\\n"]
        var forms: [String: Int] = [:]
        for round in 0..<1200 {
            let isKey = round % 2 == 0
            let secret =
                isKey
                ? String((0..<32).map { _ in hexDigits.randomElement(using: &random)! })
                : String(
                    (0..<Int.random(in: 8...24, using: &random)).map { _ in
                        passwordCharacters.randomElement(using: &random)!
                    })
            let bytes = Array(secret.utf8)
            let length = Int.random(in: 8...bytes.count, using: &random)
            let start = Int.random(in: 0...(bytes.count - length), using: &random)
            var piece = Array(bytes[start..<(start + length)])
            if Bool.random(using: &random) {
                piece = piece.map { byte in
                    guard Bool.random(using: &random) else { return byte }
                    return (97...122).contains(byte) ? byte - 32 : (65...90).contains(byte) ? byte + 32 : byte
                }
            }
            let form = [
                "raw", "percent-all", "percent-some", "percent-twice", "base64", "base64url", "line-break", "pieces",
                "full-width", "references", "mixed-shown",
            ].randomElement(using: &random)!
            forms[form, default: 0] += 1
            var echo: [UInt8]
            switch form {
            case "percent-all": echo = piece.flatMap { Oracle.escape($0, upper: Bool.random(using: &random)) }
            case "percent-some":
                echo = piece.flatMap { Bool.random(using: &random) ? Oracle.escape($0, upper: false) : [$0] }
            case "percent-twice":
                echo = piece.flatMap { Oracle.escape($0, upper: true) }.flatMap {
                    $0 == UInt8(ascii: "%") ? Array("%25".utf8) : [$0]
                }
            case "base64", "base64url":
                // What is encoded may start before the secret, so its groups fall at any alignment.
                let before = Array("appid=".utf8.suffix(Int.random(in: 0...6, using: &random)))
                echo = Array(Oracle.base64(before + piece + Array("&x".utf8), url: form == "base64url").utf8)
            case "full-width": echo = piece.flatMap { Oracle.fullWidth($0) }
            case "references":
                echo = piece.flatMap { Oracle.reference($0, using: &random, semicolon: Bool.random(using: &random)) }
            case "mixed-shown":
                echo = piece.flatMap { byte in
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: [byte]
                    case 1: Oracle.fullWidth(byte)
                    default: Oracle.reference(byte, using: &random, semicolon: true)
                    }
                }
            case "line-break":
                echo = piece
                echo.insert(
                    contentsOf: Bool.random(using: &random) ? [10] : [13, 10],
                    at: Int.random(in: 1..<echo.count, using: &random))
            default: echo = piece
            }
            let lead = "upstream said: "
            let text =
                lead + decorations.randomElement(using: &random)! + String(decoding: echo, as: UTF8.self)
                + decorations.randomElement(using: &random)! + " (code 401)"
            let shown: String
            if form == "pieces" {
                let cut = text.utf8.count - Int.random(in: 12...(12 + length - 1), using: &random)
                let parts = [
                    String(decoding: Array(text.utf8)[..<cut], as: UTF8.self),
                    String(decoding: Array(text.utf8)[cut...], as: UTF8.self),
                ]
                shown = Redaction.redacted(pieces: parts, secrets: [secret]).joined()
            } else {
                shown = Redaction.redacted(text, secrets: [secret])
            }
            if let leak = Oracle.leak(in: shown, of: secret) {
                Issue.record("round \(round), \(form), secret \(secret), text \(text) → \(shown): \(leak)")
                return
            }
            #expect(
                shown.hasPrefix(lead) && shown.hasSuffix("(code 401)"),
                "round \(round): the text around is kept: \(shown)")
        }
        #expect(forms.count == 11 && forms.values.allSatisfy { $0 > 60 }, "\(forms)")
    }

    /// Linear in the text: 1 MB of near misses (7 characters of the key, escapes, base64 letters)
    /// with 65 secrets, in a debug build. A quadratic search would not end. Bounded in the thread's
    /// CPU time, not the wall clock's: beside two CPU hogs under ThreadSanitizer it took 90 s of wall time.
    @Test func aLargeTextIsRedactedInLinearTime() {
        let secrets =
            (0..<64).map { index in String(repeating: String(index, radix: 16), count: 40).prefix(32) }.map(String.init)
            + [Self.key]
        let unit = "9f86d08 %39%66 OWY4NmQw 9F86D08x &#57;&#x66;８６ｄ０８\n"
        let text = String(repeating: unit, count: 1_000_000 / unit.utf8.count) + Self.key
        let started = threadCPUSeconds()
        let shown = Redaction.redacted(text, secrets: secrets)
        let took = threadCPUSeconds() - started
        #expect(shown.hasSuffix(Redaction.marker) && shown.utf8.count < text.utf8.count)
        #expect(took < 60, "\(took) s of CPU")
    }
}

/// The slow, obvious reading of what redaction promises, to check the fast one against.
enum Oracle {
    /// A window of 8 characters of `secret` (or all of it, when shorter) left in `shown`, in any view.
    static func leak(in shown: String, of secret: String) -> String? {
        let secretBytes = Array(secret.lowercased().utf8)
        let width = min(8, secretBytes.count)
        let windows = (0...(secretBytes.count - width)).map { Array(secretBytes[$0..<($0 + width)]) }
        let raw = Array(shown.utf8).filter { $0 != 10 && $0 != 13 }
        let once = percentDecoded(raw)
        var views: [(String, [UInt8])] = [
            ("raw", raw), ("percent-decoded", once), ("percent-decoded twice", percentDecoded(once)),
        ]
        for (name, view) in [("raw", raw), ("percent-decoded", once)] {
            for skip in 0..<4 { views.append(("\(name) base64 at \(skip)", base64Decoded(view, skip: skip))) }
        }
        for (name, view) in views.prefix(3) { views.append(("\(name) as shown", Self.shown(view))) }
        for (name, view) in views {
            let folded = view.map { (65...90).contains($0) ? $0 + 32 : $0 }
            for window in windows where contains(folded, window) {
                return "\(name) holds \(String(decoding: window, as: UTF8.self))"
            }
        }
        return nil
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }

    /// The text as shown: every `&` tried as each kind of character reference, every character
    /// between U+FF01 and U+FF5E as the ASCII it is the full-width form of.
    static func shown(_ bytes: [UInt8]) -> [UInt8] {
        let scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        func ascii(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
            (0xFF01...0xFF5E).contains(scalar.value) ? Unicode.Scalar(scalar.value - 0xFEE0)! : scalar
        }
        var out = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if let (scalar, length) = reference(Array(scalars[index...].prefix(40))) {
                out.append(ascii(scalar))
                index += length
            } else {
                out.append(ascii(scalars[index]))
                index += 1
            }
        }
        return Array(String(out).utf8)
    }

    static let names: [String: Unicode.Scalar] = [
        "amp": "&", "AMP": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "commat": "@", "num": "#", "excl": "!",
    ]

    /// The character reference at the start of `scalars`, and how many it takes.
    static func reference(_ scalars: [Unicode.Scalar]) -> (Unicode.Scalar, Int)? {
        let text = String(String.UnicodeScalarView(scalars))
        for (name, scalar) in names where text.hasPrefix("&\(name);") { return (scalar, name.count + 2) }
        let hex = text.hasPrefix("&#x") || text.hasPrefix("&#X")
        guard hex || text.hasPrefix("&#") else { return nil }
        let start = hex ? 3 : 2
        let digits = scalars.dropFirst(start).prefix {
            $0.isASCII && (hex ? $0.properties.isASCIIHexDigit : ("0"..."9").contains($0))
        }
        guard !digits.isEmpty else { return nil }
        let value = UInt32(String(String.UnicodeScalarView(digits)), radix: hex ? 16 : 10) ?? 0
        let semicolon = scalars.count > start + digits.count && scalars[start + digits.count] == ";"
        return ((value == 0 ? nil : Unicode.Scalar(value)) ?? "\u{FFFD}", start + digits.count + (semicolon ? 1 : 0))
    }

    /// `byte` (printable ASCII) as its full-width form's UTF-8.
    static func fullWidth(_ byte: UInt8) -> [UInt8] { Array(String(Unicode.Scalar(UInt32(byte) + 0xFEE0)!).utf8) }

    /// `byte` as a numeric character reference, decimal or hex, perhaps with leading zeros; by its
    /// name for some that have one.
    static func reference(_ byte: UInt8, using random: inout SeededGenerator, semicolon: Bool) -> [UInt8] {
        if let name = names.first(where: { $0.value.value == UInt32(byte) })?.key, Bool.random(using: &random) {
            return Array("&\(name);".utf8)
        }
        let zeros = String(repeating: "0", count: Int.random(in: 0...2, using: &random))
        let number = [String(byte), "x" + String(byte, radix: 16), "X" + String(byte, radix: 16, uppercase: true)]
            .randomElement(using: &random)!
        let text = number.first!.isLetter ? "&#\(number.prefix(1))\(zeros)\(number.dropFirst())" : "&#\(zeros)\(number)"
        return Array((text + (semicolon ? ";" : "")).utf8)
    }

    static func escape(_ byte: UInt8, upper: Bool) -> [UInt8] {
        let hex = String(byte, radix: 16, uppercase: upper)
        return Array(("%" + (hex.count == 1 ? "0" : "") + hex).utf8)
    }

    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                out.append(value)
                index += 3
            } else {
                out.append(bytes[index] == UInt8(ascii: "+") ? 32 : bytes[index])
                index += 1
            }
        }
        return out
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func base64(_ bytes: [UInt8], url: Bool) -> String {
        var out = ""
        for start in stride(from: 0, to: bytes.count, by: 3) {
            let chunk = Array(bytes[start..<min(start + 3, bytes.count)]) + [0, 0]
            let value = Int(chunk[0]) << 16 | Int(chunk[1]) << 8 | Int(chunk[2])
            for position in 0..<4 {
                guard position <= bytes.count - start else {
                    out += "="
                    continue
                }
                var character = alphabet[value >> (18 - 6 * position) & 63]
                if url {
                    character =
                        character == UInt8(ascii: "+")
                        ? UInt8(ascii: "-") : character == UInt8(ascii: "/") ? UInt8(ascii: "_") : character
                }
                out.unicodeScalars.append(Unicode.Scalar(character))
            }
        }
        return out
    }

    /// Every run of base64 characters decoded from its `skip`th on, runs apart.
    static func base64Decoded(_ bytes: [UInt8], skip: Int) -> [UInt8] {
        func value(_ byte: UInt8) -> Int? {
            if let index = alphabet.firstIndex(of: byte) { return index }
            return byte == UInt8(ascii: "-") ? 62 : byte == UInt8(ascii: "_") ? 63 : nil
        }
        var out: [UInt8] = []
        var run: [Int] = []
        for byte in bytes + [0] {
            if let sextet = value(byte) {
                run.append(sextet)
                continue
            }
            var bits = 0
            var count = 0
            for sextet in run.dropFirst(skip) {
                bits = bits << 6 | sextet
                count += 6
                if count >= 8 {
                    out.append(UInt8(truncatingIfNeeded: bits >> (count - 8)))
                    count -= 8
                    bits &= (1 << count) - 1
                }
            }
            out.append(0)
            run = []
        }
        return out
    }
}
