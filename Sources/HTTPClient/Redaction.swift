import Encoding

/// Cuts secrets (the API key, a proxy's credentials) out of text that came from elsewhere: an error
/// body, a redirect's `Location`, a log line.
///
/// By windows, not by forms: any run of `window` (8) or more consecutive characters of a secret is
/// secret, whatever an upstream did around it (cut it and added `...`, started the text in its
/// middle, upper-cased it, split it by a line break). Letters are compared without case (the key is
/// hex). The text is searched in several views, each mapped back to the bytes it came from: as it
/// is (line breaks skipped), percent-decoded once and twice (`+` as a space), base64-decoded (both
/// alphabets, at each of the four alignments), and each of the first three as shown (character
/// references decoded, full-width forms as ASCII: `Redaction+Shown`), so what is cut is the text as
/// written, a whole `&#x39;` or `９`. A secret shorter than the window is searched whole.
/// A text that ends inside a secret (an echo cut short) loses that piece too, from 4 bytes on.
///
/// Linear in the text's length: every window of the text is one 64-bit word looked up in a set of
/// the secrets' windows, in a fixed number of views.
public enum Redaction {
    public static let marker = "<redacted>"
    /// A run of this many characters of a secret is secret.
    public static let window = 8
    /// The shortest piece of a secret at the end of a text that is cut out: shorter ones match
    /// ordinary endings of messages too often, and say next to nothing of the secret.
    static let shortestPiece = 4

    /// `text` without any of `secrets`.
    public static func redacted(_ text: String, secrets: [String]) -> String {
        excerpt(text, maxBytes: .max, secrets: secrets)
    }

    /// Pieces that are shown together (a log line's message and fields), searched as one text joined
    /// by line breaks, so a secret split across two pieces is found; each piece comes back redacted.
    public static func redacted(pieces: [String], secrets: [String]) -> [String] {
        let finder = Finder(secrets)
        guard !finder.isEmpty else { return pieces }
        var joined: [UInt8] = []
        var bounds: [Range<Int>] = []
        for piece in pieces {
            let start = joined.count
            joined += piece.utf8
            bounds.append(start..<joined.count)
            joined.append(UInt8(ascii: "\n"))
        }
        let marked = finder.marks(in: joined)
        return bounds.map { render(joined, range: $0, marked: marked, maxBytes: .max) }
    }

    /// The start of `text`, redacted, up to `maxBytes` bytes (the cut on a character boundary). The
    /// redaction comes first: a secret that crosses the cut is found whole and replaced, and the
    /// marker may reach past `maxBytes`.
    public static func excerpt(_ text: String, maxBytes: Int, secrets: [String]) -> String {
        let finder = Finder(secrets)
        let bytes = Array(text.utf8)
        guard !finder.isEmpty || bytes.count > maxBytes else { return text }
        let marked = finder.isEmpty ? [Bool](repeating: false, count: bytes.count) : finder.marks(in: bytes)
        return render(bytes, range: 0..<bytes.count, marked: marked, maxBytes: maxBytes)
    }

    /// `bytes[range]` with each run of marked bytes replaced by the marker, cut at `maxBytes`.
    private static func render(_ bytes: [UInt8], range: Range<Int>, marked: [Bool], maxBytes: Int) -> String {
        var out: [UInt8] = []
        var index = range.lowerBound
        while index < range.upperBound && out.count < maxBytes {
            if marked[index] {
                out += marker.utf8
                while index < range.upperBound && marked[index] { index += 1 }
                continue
            }
            var next = index + 1
            while next < range.upperBound, bytes[next] & 0xC0 == 0x80, !marked[next] { next += 1 }
            if out.count + (next - index) > maxBytes { break }
            out += bytes[index..<next]
            index = next
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A text as read one way: each byte with the range of the text's bytes it came from.
    struct View {
        var bytes: [UInt8] = []
        var starts: [Int] = []
        var ends: [Int] = []
        /// Bytes at the end decoded from what the end of the text may have cut (`&#x6` of `&#x66;`):
        /// read in the windows, left out of the piece at the end.
        var tentative = 0

        mutating func append(_ byte: UInt8, from start: Int, to end: Int) {
            bytes.append(byte)
            starts.append(start)
            ends.append(end)
        }

        /// The text itself, without line breaks. Case is kept (base64 needs it) and folded where compared.
        init(raw text: [UInt8]) {
            bytes.reserveCapacity(text.count)
            starts.reserveCapacity(text.count)
            ends.reserveCapacity(text.count)
            for (index, byte) in text.enumerated() where byte != UInt8(ascii: "\n") && byte != UInt8(ascii: "\r") {
                append(byte, from: index, to: index + 1)
            }
        }

        init() {}

        /// `%XX` as its byte and `+` as a space; anything else as it is. Nil when there is nothing to decode.
        func percentDecoded() -> View? {
            guard bytes.contains(UInt8(ascii: "%")) || bytes.contains(UInt8(ascii: "+")) else { return nil }
            var out = View()
            out.bytes.reserveCapacity(bytes.count)
            PercentEncoding.decode(bytes, plusAsSpace: true, broken: .keep) { byte, from in
                out.append(byte, from: starts[from.lowerBound], to: ends[from.upperBound - 1])
            }
            return out
        }

        /// Every run of base64 characters (either alphabet) of at least `shortest` decoded from its
        /// `skip`th character on; each decoded byte comes from the four characters of its group.
        func base64Decoded(skip: Int, shortest: Int) -> View {
            var out = View()
            var index = 0
            while index < bytes.count {
                guard Base64.sextet(bytes[index]) != nil else {
                    index += 1
                    continue
                }
                var end = index
                while end < bytes.count, Base64.sextet(bytes[end]) != nil { end += 1 }
                // Shorter runs (most words) cannot hold a window: not decoded at all.
                guard end - index >= shortest else {
                    index = end
                    continue
                }
                var group = index + skip
                while group + 4 <= end {
                    var value: UInt32 = 0
                    for offset in 0..<4 { value = value << 6 | UInt32(Base64.sextet(bytes[group + offset])!) }
                    for shift in [16, 8, 0] as [UInt32] {
                        out.append(UInt8(truncatingIfNeeded: value >> shift), from: starts[group], to: ends[group + 3])
                    }
                    group += 4
                }
                // Two or three characters before padding still hold one or two bytes.
                let left = end - group
                if left >= 2 {
                    var value: UInt32 = 0
                    for offset in 0..<left { value = value << 6 | UInt32(Base64.sextet(bytes[group + offset])!) }
                    value <<= UInt32(6 * (4 - left))
                    for shift in ([16, 8] as [UInt32]).prefix(left - 1) {
                        out.append(UInt8(truncatingIfNeeded: value >> shift), from: starts[group], to: ends[end - 1])
                    }
                }
                // Apart from the next run: a window never spans two runs' bytes.
                out.append(0, from: starts[end - 1], to: starts[end - 1])
                index = end
            }
            return out
        }
    }

    /// The secrets' windows, by length, folded; and the secrets themselves for pieces at the end.
    struct Finder {
        /// Per window length (1 to `window`): the secrets' windows of that length as 64-bit words.
        private var windows: [Int: Set<UInt64>] = [:]
        /// Per window length: a bit per hash of each window (65,536 bits), to pass most text by cheaply.
        private var filters: [Int: [UInt64]] = [:]
        private var secrets: [[UInt8]] = []

        init(_ given: [String]) {
            for secret in given where !secret.isEmpty {
                let bytes = secret.utf8.map(folded)
                secrets.append(bytes)
                let length = min(window, bytes.count)
                for start in 0...(bytes.count - length) {
                    let word = word(bytes[start..<(start + length)])
                    windows[length, default: []].insert(word)
                    let bit = Int(truncatingIfNeeded: (word &* 0x9E37_79B9_7F4A_7C15) >> 48)
                    filters[length, default: [UInt64](repeating: 0, count: 1024)][bit >> 6] |= 1 << UInt64(bit & 63)
                }
            }
        }

        var isEmpty: Bool { secrets.isEmpty }

        /// Which of `text`'s bytes belong to a secret, in any view.
        func marks(in text: [UInt8]) -> [Bool] {
            var marked = [Bool](repeating: false, count: text.count)
            let raw = View(raw: text)
            var views = [raw]
            if let once = raw.percentDecoded() {
                views.append(once)
                if let twice = once.percentDecoded() { views.append(twice) }
            }
            // The fewest base64 characters that hold the shortest window, wherever its groups fall.
            let shortest = ((windows.keys.min() ?? window) * 4 + 2) / 3
            let texts = views
            for view in texts.prefix(2) {
                for skip in 0..<4 {
                    let decoded = view.base64Decoded(skip: skip, shortest: shortest + skip)
                    if !decoded.bytes.isEmpty { views.append(decoded) }
                }
            }
            views += texts.compactMap { $0.shown() }
            for view in views { mark(view, into: &marked) }
            return marked
        }

        private func mark(_ view: View, into marked: inout [Bool]) {
            func markRange(_ from: Int, _ to: Int) {
                for position in from..<to {
                    for index in view.starts[position]..<view.ends[position] { marked[index] = true }
                }
            }
            for (length, set) in windows where view.bytes.count >= length {
                let mask: UInt64 = length == 8 ? .max : (1 << UInt64(8 * length)) - 1
                let filter = filters[length]!
                var current: UInt64 = 0
                var found: [Int] = []
                view.bytes.withUnsafeBufferPointer { bytes in
                    filter.withUnsafeBufferPointer { filter in
                        for position in 0..<bytes.count {
                            current = (current << 8 | UInt64(folded(bytes[position]))) & mask
                            // Most windows are no secret's: a bit of the filter says so without hashing.
                            let bit = Int(truncatingIfNeeded: (current &* 0x9E37_79B9_7F4A_7C15) >> 48)
                            if filter[bit >> 6] & (1 << UInt64(bit & 63)) != 0, position + 1 >= length {
                                found.append(position)
                            }
                        }
                    }
                }
                for position in found {
                    var word: UInt64 = 0
                    for index in (position + 1 - length)...position {
                        word = word << 8 | UInt64(folded(view.bytes[index]))
                    }
                    // Marking each byte of a window once per window is at most `window` times per byte.
                    if set.contains(word) { markRange(position + 1 - length, position + 1) }
                }
            }
            // A text that stops inside a secret: its last bytes (perhaps but the start of an escape or
            // of a character reference, cut) are the secret's first.
            var end = view.bytes.count
            if view.tentative > 0 {
                end -= view.tentative
            } else if end > 0, view.bytes[end - 1] == UInt8(ascii: "%") {
                end -= 1
            } else if end > 1, view.bytes[end - 2] == UInt8(ascii: "%"), Hex.value(of: view.bytes[end - 1]) != nil {
                end -= 2
            } else if let start = unfinishedReference(view.bytes) {
                end = start
            }
            for secret in secrets {
                var length = min(secret.count - 1, end)
                while length >= shortestPiece {
                    if view.bytes[(end - length)..<end].lazy.map(folded).elementsEqual(secret.prefix(length)) {
                        markRange(end - length, view.bytes.count)
                        break
                    }
                    length -= 1
                }
            }
        }

        /// Where a character reference cut by the end of `bytes` starts (`&`, `&#x`, `&am`), if one may.
        private func unfinishedReference(_ bytes: [UInt8]) -> Int? {
            var index = bytes.count - 1
            while index >= max(bytes.count - 20, 0) {
                let byte = bytes[index]
                if byte == UInt8(ascii: "&") { return index }
                guard byte == UInt8(ascii: "#") || Hex.value(of: byte) != nil || (97...122).contains(byte | 0x20) else {
                    return nil
                }
                index -= 1
            }
            return nil
        }

        private func word(_ bytes: ArraySlice<UInt8>) -> UInt64 {
            bytes.reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    /// ASCII letters in lower case, by table: this runs for every byte of every view.
    private static let lowerCase: [UInt8] = (0...255).map { (65...90).contains($0) ? UInt8($0 + 32) : UInt8($0) }

    private static func folded(_ byte: UInt8) -> UInt8 { lowerCase[Int(byte)] }
}
