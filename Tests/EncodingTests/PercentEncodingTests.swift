import Testing

@testable import Encoding

@Suite struct PercentEncodingTests {
    @Test func onlyTheUnreservedCharactersStayAsTheyAre() {
        #expect(PercentEncoding.encoded("AZaz09-_.~") == "AZaz09-_.~")
        #expect(PercentEncoding.encoded("a b&c=d/e?f#g%h+i") == "a%20b%26c%3Dd%2Fe%3Ff%23g%25h%2Bi")
        #expect(PercentEncoding.encoded("Zürich") == "Z%C3%BCrich")
        #expect(PercentEncoding.encoded("") == "")
        // Every byte but the 66 unreserved is escaped, in upper case.
        for byte in UInt8.min...UInt8.max where byte < 0x80 {
            let text = String(Unicode.Scalar(byte))
            let unreserved =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || "-_.~".utf8.contains(byte)
            #expect(
                PercentEncoding.encoded(text)
                    == (unreserved ? text : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)))
        }
    }

    @Test func whatIsEncodedDecodesBack() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let scalars = (0..<Int.random(in: 0...24, using: &random)).map { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x2FFF, using: &random)).map(Character.init) ?? "x"
            }
            let text = String(scalars)
            let encoded = PercentEncoding.encoded(text)
            #expect(encoded.utf8.allSatisfy { $0 == UInt8(ascii: "%") || PercentEncoding.isUnreserved($0) })
            #expect(PercentEncoding.decoded(encoded) == text)
            #expect(PercentEncoding.decoded(encoded, plusAsSpace: true, broken: .keep) == text)
        }
    }

    @Test func escapesOfEitherCaseDecode() {
        #expect(PercentEncoding.decoded("p%40ss%2fword%2F") == "p@ss/word/")
        #expect(PercentEncoding.decoded("%e2%82%AC") == "€")
    }

    @Test func aBrokenEscapeIsRefusedOrKeptAsAsked() {
        for broken in ["%", "%4", "a%4", "%zz", "%4g", "%+1", "%-1", "ok%"] {
            #expect(PercentEncoding.decoded(broken) == nil, "\(broken)")
            #expect(PercentEncoding.decoded(broken, broken: .keep) == broken, "\(broken)")
        }
        #expect(PercentEncoding.decoded("%41%4", broken: .keep) == "A%4")
    }

    @Test func plusIsASpaceOnlyInAForm() {
        #expect(PercentEncoding.decoded("a+b%2B") == "a+b+")
        #expect(PercentEncoding.decoded("a+b%2B", plusAsSpace: true) == "a b+")
    }

    @Test func eachDecodedByteSaysWhereItCameFrom() {
        var seen: [(UInt8, Range<Int>)] = []
        let bytes = Array("x%41+%".utf8)
        let whole = PercentEncoding.decode(bytes, plusAsSpace: true, broken: .keep) { seen.append(($0, $1)) }
        #expect(whole)
        #expect(seen.map(\.0) == Array("xA %".utf8))
        #expect(seen.map(\.1) == [0..<1, 1..<4, 4..<5, 5..<6])
        // A slice's positions are the slice's own indices.
        var fromSlice: [Range<Int>] = []
        PercentEncoding.decode(bytes[1...], plusAsSpace: false, broken: .refuse) { fromSlice.append($1) }
        #expect(fromSlice == [1..<4, 4..<5])
        #expect(!PercentEncoding.decode(bytes[1...], plusAsSpace: false, broken: .refuse) { _, _ in })
    }
}
