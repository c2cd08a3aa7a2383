import TestSupport
import Testing

@testable import JSON

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(
            #" {"a": [1, -2.5e1, true, false, null], "b": {"c": "d\n\u00e9\ud83d\ude00"}} "#)
        #expect(value["a"] == .array([.number(1), .number(-25), .bool(true), .bool(false), .null]))
        #expect(value["b"]?["c"] == .string("d\né😀"))
    }

    @Test func keepsKeyOrder() throws {
        guard case .object(let members) = try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "m"])
    }

    @Test(arguments: [
        (#"{"a":1,}"#, 1, 8),
        ("{\n  \"a\": tru\n}", 2, 8),
        (#"[1 2]"#, 1, 4),
        (#"{"a":01}"#, 1, 7),
        (#""abc"#, 1, 5),
        ("\"a\u{01}\"", 1, 3),
        (#"{"a":1} x"#, 1, 9),
        (#"NaN"#, 1, 1),
        (#""\x""#, 1, 4),
        ("", 1, 1),
    ])
    func reportsWhereItWentWrong(text: String, line: Int, column: Int) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.line == line, "\(text): \(error)")
            #expect(error.column == column, "\(text): \(error)")
        }
    }

    /// Issue 49: a number too large for a Double made the whole document an error, so one huge
    /// optional field lost the reading. It is ±infinity now, which every field's range refuses alone.
    @Test func aNumberTooLargeToHoldIsInfinity() throws {
        #expect(
            try JSONParser.parse("[1e999, -1e999, 1e-999]")
                == .array([.number(.infinity), .number(-.infinity), .number(0)]))
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try JSONParser.parse(fine) }
    }

    @Test func survivesRandomInput() {
        var generator = SeededGenerator(seed: 42)
        let alphabet = Array(#"{}[]:,"\ -0123456789.eE+truefalsnul"#.utf8) + [0, 0x0A, 0xC3, 0xA9, 0xFF]
        var parsed = 0
        var refused = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            do {
                _ = try JSONParser.parse(bytes)
                parsed += 1
            } catch {
                // A refusal points into the input: a line that exists, a column on it.
                let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
                #expect(error.line >= 1 && error.line <= lines.count, "\(bytes): \(error)")
                #expect(
                    error.column >= 1 && error.column <= (lines[min(max(error.line, 1), lines.count) - 1].count + 1),
                    "\(bytes): \(error)")
                refused += 1
            }
        }
        // Both outcomes happen, so the loop really exercises the parser's accepting and refusing paths.
        #expect(parsed > 100, "\(parsed) parsed")
        #expect(refused > 10_000, "\(refused) refused")
    }
}
