// The encoders and decoders: percent-encoding, Base64 (both alphabets), character references and hex.
// Each encoding decodes back to its input; each decoder, given anything, stays inside the input and
// gives what its contract says (Base64 it reads re-encodes to a text of the same length).
import Encoding
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)

    // Percent: encoding is unreserved bytes or %XX, and decodes back; decoding anything stays in range.
    let percent = PercentEncoding.encoded(text)
    require(PercentEncoding.decoded(percent) == text, "percent-encoding does not decode back")
    let kept = PercentEncoding.decoded(bytes, plusAsSpace: true, broken: .keep)
    require(kept != nil && kept!.count <= bytes.count, "keeping broken escapes refused or grew")
    var last = 0
    let whole = PercentEncoding.decode(bytes, plusAsSpace: false, broken: .refuse) { _, range in
        require(range.lowerBound == last && range.upperBound <= bytes.count, "ranges not in order")
        last = range.upperBound
    }
    require(!whole || last == bytes.count, "decoded whole but not to the end")
    require((PercentEncoding.decoded(bytes) != nil) == whole, "decoded and decode disagree")

    // Base64: the input encodes and decodes back in both alphabets; strict decoding re-encodes exactly.
    for alphabet in [Base64.Alphabet.standard, .url] {
        let encoded = Base64.encoded(bytes, alphabet: alphabet)
        require(Base64.decoded(Array(encoded.utf8), alphabet: alphabet) == bytes, "Base64 does not decode back")
        if let decoded = Base64.decoded(bytes, alphabet: alphabet) {
            // As Go's StdEncoding, the unused bits of the last character need not be zero: the text
            // need not be the encoding of what it decodes to, but that encoding decodes alike.
            let again = Base64.encoded(decoded, alphabet: alphabet)
            require(again.utf8.count == bytes.count, "Base64 decoded a text of another length than its encoding")
            require(Base64.decoded(Array(again.utf8), alphabet: alphabet) == decoded, "Base64 is not stable")
        }
        let unpadded = Base64.encoded(bytes, alphabet: alphabet, padded: false)
        require(!unpadded.contains("="), "unpadded Base64 with padding")
    }

    // Character references: each one found ends past its '&' and within the input.
    for start in bytes.indices where bytes[start] == UInt8(ascii: "&") {
        if let found = CharacterReference.reference(in: bytes, at: start) {
            require(found.end > start + 2 && found.end <= bytes.count, "a reference ends out of range")
        }
        if let found = CharacterReference.reference(in: bytes[start...], at: start) {
            require(found.end <= bytes.count, "a slice's reference ends out of range")
        }
    }

    // Hex: each digit reads back as its value, and only hex digits have one.
    for byte in bytes {
        if let value = Hex.value(of: byte) {
            require(value < 16, "a hex digit above 15")
            require(
                Hex.digit(value, upperCase: byte < UInt8(ascii: "a")) == byte, "a hex digit that does not write back")
        }
    }
    for value in UInt8(0)..<16 {
        require(
            Hex.value(of: Hex.digit(value)) == value && Hex.value(of: Hex.digit(value, upperCase: false)) == value,
            "the digit of \(value) does not read back")
    }
    return 0
}
