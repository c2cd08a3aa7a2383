import Glibc
import TestSupport
import Testing

/// A start that fails prints one line a terminal can show safely: the config it quotes is escaped and bounded.
@Suite(.endToEnd) struct StartupFailureTests {
    /// Runs the executable with `configFile` and returns its exit status and standard error.
    func start(configFile text: String) async throws -> (status: Int32?, standardError: String) {
        let file = temporaryFile(text, suffix: ".json")
        defer { unlink(file) }
        let process = try ChildProcess(
            DemoModeTests.executable, ["--config.file", file], environment: ["OPENWEATHER_API_KEY": "k"])
        // A ceiling, not a timing: a 1 MB file took a debug build 7 s at a load average of 14; 15 MB under
        // ThreadSanitizer beside two CPU hogs did not end within 120 s.
        let status = await process.wait(seconds: 120)
        return (status, process.standardError)
    }

    @Test func controlCharactersAreEscapedAndANULDoesNotEndTheMessage() async throws {
        let name = #"evil\u001b[2J\u0007\nforged line\u0000after the NUL"#
        let (status, output) = try await start(
            configFile: #"{"locations": [{"name": "\#(name)", "latitude": 1, "longitude": 2}]}"#)
        #expect(status == 2)
        #expect(output.hasPrefix("openweather-exporter: error: "), "\(output.debugDescription)")
        #expect(output.hasSuffix("\n") && output.count { $0 == "\n" } == 1, "\(output.debugDescription)")
        #expect(!output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(output.debugDescription)")
        #expect(output.contains(#"evil\u001b[2J\u0007\nforged line\u0000after the NUL"#), "\(output.debugDescription)")
    }

    /// A name of a megabyte (thousands of terminal screens) ends up as a few hundred bytes.
    @Test func aHugeLocationNameIsNotEchoedWhole() async throws {
        let name = String(repeating: "A", count: 1 << 20)
        let (status, output) = try await start(
            configFile: #"{"locations": [{"name": "\#(name)", "latitude": 1, "longitude": 2}]}"#)
        #expect(status == 2)
        #expect(output.utf8.count < 600, "\(output.prefix(600))")
        #expect(output.contains("is 1048576 characters long; use a short name (at most 128)"), "\(output.prefix(600))")
    }
}
