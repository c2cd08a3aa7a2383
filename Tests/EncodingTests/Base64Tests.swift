import Testing

@testable import Encoding

@Suite struct Base64Tests {
    /// RFC 4648, section 10.
    static let vectors = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test func theRFCsVectors() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encoded(plain.utf8) == encoded)
            #expect(Base64.decoded(encoded.utf8) == Array(plain.utf8))
            #expect(Base64.encoded(plain.utf8, padded: false) == encoded.filter { $0 != "=" })
        }
    }

    @Test func theTwoAlphabetsDifferInTheirLastTwoCharacters() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encoded(bytes) == "+/+/")
        #expect(Base64.encoded(bytes, alphabet: .url) == "-_-_")
        #expect(Base64.decoded("-_-_".utf8, alphabet: .url) == bytes)
        // Each alphabet refuses the other's characters.
        #expect(Base64.decoded("-_-_".utf8) == nil)
        #expect(Base64.decoded("+/+/".utf8, alphabet: .url) == nil)
        // A reader that does not know which was used reads both.
        for (standard, url) in zip("+/".utf8, "-_".utf8) {
            #expect(Base64.sextet(standard) != nil && Base64.sextet(standard) == Base64.sextet(url))
            #expect(Base64.sextet(standard, in: .url) == nil && Base64.sextet(url, in: .standard) == nil)
        }
    }

    @Test func everyCharacterHasItsValueInItsAlphabet() {
        for (alphabet, characters) in [(Base64.Alphabet.standard, "+/"), (.url, "-_")] {
            let all = Array(("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + characters).utf8)
            for byte in UInt8.min...UInt8.max {
                #expect(Base64.sextet(byte, in: alphabet) == all.firstIndex(of: byte).map(UInt8.init), "byte \(byte)")
            }
        }
    }

    @Test func randomBytesGoThereAndBack() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            for alphabet in [Base64.Alphabet.standard, .url] {
                let encoded = Base64.encoded(bytes, alphabet: alphabet)
                #expect(encoded.utf8.count == (bytes.count + 2) / 3 * 4)
                #expect(Base64.decoded(encoded.utf8, alphabet: alphabet) == bytes)
            }
        }
    }

    /// As Go's `StdEncoding`, which exporter-toolkit's basic auth reads `Authorization` with.
    @Test func aDecoderThatIsStrict() {
        for bad in [
            "Zg", "Zg=", "Zm9vY", "Z===", "Zg=a", "=Zg=", "Zg==Zg==", "Zm9v\nYmFy", "Zm9v YmFy", "Zm9v!mFy",
            "Zm9vYmFy=",
        ] {
            #expect(Base64.decoded(bad.utf8) == nil, "\(bad)")
        }
    }
}
