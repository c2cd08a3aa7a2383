/// The line a failed start leaves on stderr before the process exits. Its message can quote the
/// config (a location name, a file's text), so, like a log value, its control characters are escaped
/// (an ESC must not drive the terminal, a newline must not forge a second line, a NUL must not end
/// the message early) and its length is bounded (a 15 MB location name is not echoed whole).
public enum StartupFailure {
    /// Bytes of the message shown; the rest is counted, not printed.
    static let limit = 4096

    /// `openweather-exporter: error: MESSAGE` and a newline, as bytes for one `write(2)`.
    public static func line(_ message: String) -> [UInt8] {
        Array("openweather-exporter: error: \(printable(message, limit: limit))\n".utf8)
    }

    /// `text` with C0 and C1 control characters and DEL written as escapes (`\n`, `\u001b`), cut
    /// before `limit` bytes at a character boundary with a count of what was left out.
    static func printable(_ text: String, limit: Int) -> String {
        var out = ""
        var used = 0
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            let piece: String
            switch scalar {
            case "\n": piece = "\\n"
            case "\r": piece = "\\r"
            case "\t": piece = "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                let hex = String(scalar.value, radix: 16)
                piece = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: piece = String(scalar)
            }
            guard used + piece.utf8.count <= limit else {
                var left = scalar.utf8.count
                while let rest = scalars.next() { left += rest.utf8.count }
                return out + "... (\(left) more bytes)"
            }
            out += piece
            used += piece.utf8.count
        }
        return out
    }
}
