import Testing

@testable import Exporter

/// The line of a failed start: control characters escaped, length bounded at a character boundary.
@Suite struct StartupFailureTests {
    @Test func controlCharactersBecomeEscapes() {
        let line = StartupFailure.line("name \"a\u{1B}[31m\u{07}\nb\u{0}c\u{7F}\u{9B}d\" é\tx\r")
        #expect(
            String(decoding: line, as: UTF8.self)
                == "openweather-exporter: error: name \"a\\u001b[31m\\u0007\\nb\\u0000c\\u007f\\u009bd\" é\\tx\\r\n")
    }

    @Test func longMessagesAreCutAtACharacterBoundary() {
        let message = String(repeating: "é", count: 10_000)  // 2 bytes each
        let line = String(decoding: StartupFailure.line(message), as: UTF8.self)
        #expect(line.utf8.count < StartupFailure.limit + 100)
        #expect(line.hasSuffix("é... (15904 more bytes)\n"), "\(line.suffix(40))")
        // An escape is never split.
        let escapes = StartupFailure.printable(String(repeating: "\u{1B}", count: 10), limit: 15)
        #expect(escapes == "\\u001b\\u001b... (8 more bytes)")
        #expect(StartupFailure.printable("short", limit: 5) == "short")
    }
}
