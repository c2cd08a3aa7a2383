import Testing

@testable import JSON

@Suite struct JSONWriterTests {
    @Test func writesWhatTheParserReadsBack() throws {
        let text =
            #"{"z":[1,-2.5,0.00001,1e300,1764590517,-0,true,false,null],"a":{"q\"\\\n\r\t\u0001é😀":"x"},"e":[],"o":{}}"#
        let value = try JSONParser.parse(text)
        let written = value.encoded()
        #expect(try JSONParser.parse(written) == value)
        #expect(try JSONParser.parse(written).encoded() == written, "writing is stable")
    }

    @Test func wholeNumbersHaveNoFractionAndKeysKeepTheirOrder() throws {
        let value = try JSONParser.parse(#"{"b":1764590517,"a":8.23,"c":-21600}"#)
        #expect(String(decoding: value.encoded(), as: UTF8.self) == #"{"b":1764590517,"a":8.23,"c":-21600}"#)
    }

    @Test func controlCharactersAreEscaped() {
        let written = String(decoding: JSONValue.string("a\u{01}\u{1F}\"\\\n").encoded(), as: UTF8.self)
        #expect(written == #""a\u0001\u001f\"\\\n""#)
    }

    /// The json fuzz target's finding (`1e400\r`): a number too large to hold parses as infinity and is
    /// written as null, which every reader takes as a value out of range, as it takes infinity.
    @Test func aNumberTooLargeToHoldIsWrittenAsNull() throws {
        let value = try JSONParser.parse(Array("1e400\r".utf8))
        #expect(value == .number(.infinity))
        #expect(value.encoded() == Array("null".utf8))
        #expect(try JSONParser.parse(#"{"a":[-1e999,2]}"#).encoded() == Array(#"{"a":[null,2]}"#.utf8))
    }

    /// JSON has no infinity: a value made in code, not parsed, may hold one.
    @Test func aNonFiniteNumberIsNull() {
        #expect(JSONValue.array([.number(.infinity), .number(.nan)]).encoded() == Array("[null,null]".utf8))
    }
}
