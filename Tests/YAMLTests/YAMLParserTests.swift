import Glibc
import TestSupport
import Testing

@testable import YAML

@Suite struct YAMLParserTests {
    @Test func keepsKeyOrderAndPositions() throws {
        let node = try YAML.parse(
            """
            # web\ntls_server_config:\n  cert_file: server.crt\n  key_file: "server.key"\nbasic_auth_users:\n\
              alice: x\n
            """
        )
        #expect(node.mapping?.map(\.key) == ["tls_server_config", "basic_auth_users"])
        let tls = try #require(node["tls_server_config"])
        #expect(tls.position == YAMLPosition(line: 3, column: 3))
        #expect(tls["key_file"]?.position == YAMLPosition(line: 4, column: 13))
        #expect(tls["key_file"]?.scalar?.style == .doubleQuoted)
        #expect(tls.mapping?.first?.keyPosition == YAMLPosition(line: 3, column: 3))
    }

    @Test func columnsCountCharactersNotBytes() throws {
        let node = try YAML.parse("städte: [Zürich, x]\n")
        #expect(node["städte"]?.sequence?[1].position == YAMLPosition(line: 1, column: 18))
    }

    /// Minified JSON is one long line: positions are kept as the parser moves, not counted from the
    /// line's start for each node, which made a 1,500-location config take half a minute to read.
    @Test func aLongLineTakesLinearTime() throws {
        func document(_ count: Int) -> String {
            "{\"locations\": ["
                + (0..<count).map { #"{"name": "Zürich-\#($0)", "latitude": 1}"# }.joined(separator: ", ") + "]}"
        }
        let node = try YAML.parse(document(3))
        #expect(node["locations"]?.sequence?[2]["latitude"]?.position == YAMLPosition(line: 1, column: 123))
        // The thread's own CPU time, not the wall clock: other processes on a shared machine stretch
        // the wall time of one measurement and not the other's, and made the ratio cross the bound.
        func seconds(_ text: String) throws -> Double {
            var best = Double.infinity
            for _ in 0..<3 {
                let start = threadCPUSeconds()
                _ = try YAML.parse(text)
                best = min(best, threadCPUSeconds() - start)
            }
            return best
        }
        let small = try seconds(document(2_000))
        let large = try seconds(document(16_000))
        // 8 times the input: about 8 times the time when linear, 64 when quadratic.
        #expect(large / small < 24, "2,000 items: \(small) s, 16,000: \(large) s")
    }

    @Test func readsJSON() throws {
        let text =
            """
            {\n\t"locations": [{"name": "Sydney", "lat":-33.87,"lon":151.21}],\n\
            \t"demo": true, "none": null\n}\n
            """
        #expect(
            try parsed(text)
                == #"{"locations":[{"name":"Sydney","lat":"-33.87","lon":"151.21"}],"demo":"true","none":null}"#)
        #expect(try YAML.parse(text)["demo"]?.scalar?.bool == true)
    }

    @Test func emptyInputsAreNull() throws {
        #expect(try YAML.parse("").isNull)
        #expect(try YAML.parse("# only a comment\n\n").isNull)
        #expect(try YAML.parse("---\n...\n").isNull)
        #expect(try parsed("a:\nb: ~\nc: null\nd: ''\n") == #"{"a":null,"b":null,"c":null,"d":""}"#)
    }

    @Test func plainScalarsKeepColonsAndHashesInsideWords() throws {
        #expect(
            try parsed("url: http://127.0.0.1:9090/path#frag\nt: 20:03:20 # comment\n")
                == #"{"url":"http://127.0.0.1:9090/path#frag","t":"20:03:20"}"#)
    }

    @Test func crlfLineEndsAndByteOrderMark() throws {
        #expect(try parsed("\u{FEFF}a: 1\r\nb:\r\n  - x\r\n") == #"{"a":"1","b":["x"]}"#)
    }

    @Test func sequencesAtTheKeysColumnAndDeeper() throws {
        #expect(try parsed("a:\n- 1\n- 2\nb:\n    - 3\nc: 4\n") == #"{"a":["1","2"],"b":["3"],"c":"4"}"#)
    }

    @Test func commentEndsAPlainScalar() throws {
        #expect(failure("a: one # c\n  two\n") != nil)
    }

    @Test func errorsSayWhereAndHow() {
        let cases: [(String, Int, Int, String)] = [
            ("a: 1\n  b: 2\n", 2, 3, "is indented under the value above it"),
            ("a: 1\na: 2\n", 2, 1, "duplicate key \"a\" (first at line 1, column 1)"),
            ("a:\n\tb: 1\n", 2, 2, "a tab in the indentation"),
            ("a: \"x\n", 1, 4, "not closed; add the closing \""),
            ("a: 'it''s\n", 1, 4, "a single-quoted value that began here is not closed; add the closing '"),
            ("a: [1, 2\n", 2, 1, "not closed; add the closing ']'"),
            ("a: {b: [1] c}\n", 1, 12, "expected ',' or '}'"),
            ("a: - b\n", 1, 4, "a sequence cannot start on the same line as its key"),
            ("a: b: c\n", 1, 4, "a nested mapping cannot start on the same line"),
            ("a:\n  b: 1\n c: 2\n", 3, 2, "unexpected indentation"),
            ("a: 'x' y\n", 1, 8, "unexpected text after the closing quote"),
            ("a: \"\\q\"\n", 1, 6, "unknown escape '\\q'"),
            ("- a\nb: c\n", 2, 1, "unexpected content"),
            ("a: |x\n  b\n", 1, 5, "after '|' or '>'"),
            ("a: *ref\n", 1, 4, "aliases (*name) are not supported"),
            ("a: !!int 3\n", 1, 4, "tags (!name) are not supported"),
        ]
        for (text, line, column, message) in cases {
            let error = failure(text)
            #expect(
                error?.position == YAMLPosition(line: line, column: column),
                "\(text.debugDescription): \(String(describing: error))")
            #expect(error?.message.contains(message) == true, "\(text.debugDescription): \(String(describing: error))")
        }
    }

    /// Issue 29 §9: a key that lost its item's indentation is told the item's key column, not the
    /// column of the mapping that holds the list (which would make it a key of that mapping).
    @Test func aKeyOutOfItsItemIsToldTheItemsKeyColumn() {
        let atTheDash = failure("locations:\n  - name: Home\n    longitude: 2\n  latitude: 1\n")
        #expect(atTheDash?.position == YAMLPosition(line: 4, column: 3))
        #expect(
            atTheDash?.message.contains("indent it like that item's keys (column 5)") == true,
            "\(String(describing: atTheDash))")
        #expect(
            atTheDash?.message.contains("column 1") == true, "the list's own key column is named as the other choice")
        let between = failure("locations:\n  - name: Home\n   latitude: 1\n")
        #expect(between?.position == YAMLPosition(line: 3, column: 4))
        #expect(
            between?.message.contains("indent it like that item's keys (column 5)") == true,
            "\(String(describing: between))")
        #expect(between?.message.contains("(column 3)") == true, "a new item's '- ' column")
        // Not after a list of mappings: the mapping's own keys' column, as before.
        #expect(failure("a:\n  b: 1\n c: 2\n")?.message.contains("(column 1)") == true)
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        #expect(failure(String(repeating: "[", count: 10_000))?.message.contains("nesting deeper") == true)
        #expect(failure(String(repeating: "- ", count: 10_000) + "x")?.message.contains("nesting deeper") == true)
    }

    @Test func bytesMustBeUTF8() {
        #expect(throws: YAMLError.self) { try YAML.parse(bytes: [0x61, 0x3A, 0x20, 0xFF]) }
    }
}
