import Encoding

extension Redaction.View {
    /// The text as a page or a terminal shows it: HTML and XML character references decoded
    /// (`&#57;`, `&#x39;`, `&amp;`) and full-width forms (U+FF01–U+FF5E) as the ASCII they stand for,
    /// as NFKC folds them; each character with the range of the text it came from. A numeric reference
    /// that runs to the end of the text without its `;` may have been cut: it is `tentative`. Nil when
    /// there is neither.
    func shown() -> Self? {
        guard bytes.contains(where: { $0 == UInt8(ascii: "&") || $0 == Self.fullWidthLead }) else { return nil }
        var out = Self()
        out.bytes.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            var character: (scalar: Unicode.Scalar, end: Int)?
            if bytes[index] == UInt8(ascii: "&"), let reference = CharacterReference.reference(in: bytes, at: index) {
                character = reference
            } else if let scalar = fullWidth(at: index) {
                character = (scalar, index + 3)
            }
            guard let (scalar, end) = character else {
                out.append(bytes[index], from: starts[index], to: ends[index])
                index += 1
                continue
            }
            let before = out.bytes.count
            UTF8.encode(Self.asciiForm(of: scalar)) { out.append($0, from: starts[index], to: ends[end - 1]) }
            if end == bytes.count, bytes[end - 1] != UInt8(ascii: ";"), bytes[index] == UInt8(ascii: "&") {
                out.tentative = out.bytes.count - before
            }
            index = end
        }
        return out
    }

    /// The first byte of every full-width form's UTF-8 (U+FF01 is EF BC 81, U+FF5E is EF BD 9E).
    private static let fullWidthLead: UInt8 = 0xEF

    /// The full-width form whose UTF-8 starts at `index`, if one does.
    private func fullWidth(at index: Int) -> Unicode.Scalar? {
        guard index + 2 < bytes.count, bytes[index] == Self.fullWidthLead, (0xBC...0xBD).contains(bytes[index + 1]),
            bytes[index + 2] & 0xC0 == 0x80
        else { return nil }
        let value = 0xF000 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
        return (0xFF01...0xFF5E).contains(value) ? Unicode.Scalar(value) : nil
    }

    /// A full-width form as its ASCII character (what NFKC makes of it); any other character as it is.
    private static func asciiForm(of scalar: Unicode.Scalar) -> Unicode.Scalar {
        (0xFF01...0xFF5E).contains(scalar.value) ? Unicode.Scalar(UInt8(scalar.value - 0xFEE0)) : scalar
    }
}
