import Testing

@testable import Encoding

@Suite struct CharacterReferenceTests {
    /// The reference at the start of `text`: its character and how many bytes it takes.
    static func read(_ text: String) -> (Character, Int)? {
        CharacterReference.reference(in: Array(text.utf8), at: 0).map { (Character($0.scalar), $0.end) }
    }

    @Test func numericReferencesAsHTMLReadsThem() {
        #expect(Self.read("&#57;") ?? ("?", 0) == ("9", 5))
        #expect(Self.read("&#x66;x") ?? ("?", 0) == ("f", 6))
        #expect(Self.read("&#X4A;") ?? ("?", 0) == ("J", 6))
        #expect(Self.read("&#000000057;") ?? ("?", 0) == ("9", 12), "leading zeros")
        #expect(Self.read("&#57&#58;") ?? ("?", 0) == ("9", 4), "the ; is optional")
        #expect(Self.read("&#xFF19;") ?? ("?", 0) == ("\u{FF19}", 8), "a full-width digit stays itself here")
        #expect(Self.read("&#233") ?? ("?", 0) == ("é", 5), "at the end of the text")
        // No character: U+FFFD, as a browser shows it; the digits are read to their end.
        for text in ["&#0;", "&#xD800;", "&#x110000;", "&#99999999999999999999999;"] {
            #expect(Self.read(text) ?? ("?", 0) == ("\u{FFFD}", text.utf8.count), "\(text)")
        }
        for text in ["&#;", "&#x;", "&#xg;", "&#", "& #57;", "#57;"] {
            #expect(Self.read(text) == nil, "\(text)")
        }
    }

    @Test func namedReferencesOfASCIIPunctuation() {
        #expect(Self.read("&amp;") ?? ("?", 0) == ("&", 5))
        #expect(Self.read("&AMP;") ?? ("?", 0) == ("&", 5))
        #expect(Self.read("&quot;x") ?? ("?", 0) == ("\"", 6))
        #expect(Self.read("&apos;") ?? ("?", 0) == ("'", 6))
        #expect(Self.read("&commat;") ?? ("?", 0) == ("@", 8))
        #expect(Self.read("&DiacriticalGrave;") ?? ("?", 0) == ("`", 18))
        for text in ["&amp", "&Amp;", "&nosuchname;", "&ampx;", "&;", "&DiacriticalGraveAccent;"] {
            #expect(Self.read(text) == nil, "\(text)")
        }
    }

    @Test func aReferenceIsReadWhereItStarts() {
        let bytes = Array("key=&#x39;&lt;".utf8)
        #expect(CharacterReference.reference(in: bytes, at: 4).map { ($0.scalar, $0.end) } ?? ("?", 0) == ("9", 10))
        #expect(CharacterReference.reference(in: bytes, at: 10).map { ($0.scalar, $0.end) } ?? ("?", 0) == ("<", 14))
        #expect(CharacterReference.reference(in: bytes, at: 5) == nil)
    }
}
