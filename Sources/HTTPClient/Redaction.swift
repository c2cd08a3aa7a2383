/// Cuts secrets (the API key, a proxy's credentials) out of text that came from elsewhere: an error
/// body, a redirect's `Location`, a log line. A secret is found echoed raw or percent-encoded (either
/// hex case, `+` for a space, escapes mixed with plain characters), as an upstream echoes a URL; and
/// text that ends inside a secret (an echo cut short) loses that piece too.
public enum Redaction {
    public static let marker = "<redacted>"
    /// The shortest piece of a secret at the end of a text that is cut out: shorter ones match
    /// ordinary endings of messages too often, and say next to nothing of the secret.
    static let shortestPiece = 4

    /// `text` without any of `secrets`.
    public static func redacted(_ text: String, secrets: [String]) -> String {
        excerpt(text, maxBytes: .max, secrets: secrets)
    }

    /// The start of `text`, redacted, up to `maxBytes` bytes (the cut on a character boundary). The
    /// redaction comes first: a secret that crosses the cut is found whole and replaced, and the
    /// marker may reach past `maxBytes`.
    public static func excerpt(_ text: String, maxBytes: Int, secrets: [String]) -> String {
        // Longest first: a password inside `user:password` must not leave the user name standing.
        let secrets = secrets.compactMap { $0.isEmpty ? nil : Array($0.utf8) }.sorted { $0.count > $1.count }
        let bytes = Array(text.utf8)
        guard !secrets.isEmpty || bytes.count > maxBytes else { return text }
        var out: [UInt8] = []
        var index = 0
        scan: while index < bytes.count && out.count < maxBytes {
            for secret in secrets {
                switch match(secret, in: bytes, at: index) {
                case .whole(let end):
                    out += marker.utf8
                    index = end
                    continue scan
                case .piece:
                    out += marker.utf8
                    break scan
                case nil:
                    continue
                }
            }
            var next = index + 1
            while next < bytes.count, bytes[next] & 0xC0 == 0x80 { next += 1 }
            if out.count + (next - index) > maxBytes { break }
            out += bytes[index..<next]
            index = next
        }
        return String(decoding: out, as: UTF8.self)
    }

    private enum Match {
        /// The whole secret, ending at this index.
        case whole(Int)
        /// The text ends inside the secret, after enough of it to count.
        case piece
    }

    /// Whether `secret` starts at `start`, reading each of its bytes in any encoded form.
    private static func match(_ secret: [UInt8], in bytes: [UInt8], at start: Int) -> Match? {
        var index = start
        for (count, expected) in secret.enumerated() {
            if index < bytes.count, bytes[index] == expected {
                index += 1
            } else if index < bytes.count, bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count {
                guard let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]), high << 4 | low == expected else { return nil }
                index += 3
            } else if index < bytes.count, expected == UInt8(ascii: " "), bytes[index] == UInt8(ascii: "+") {
                index += 1
            } else if index >= bytes.count || bytes[index] == UInt8(ascii: "%") {
                // The text ends here, or in the middle of an escape.
                return count >= shortestPiece ? .piece : nil
            } else {
                return nil
            }
        }
        return .whole(index)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
