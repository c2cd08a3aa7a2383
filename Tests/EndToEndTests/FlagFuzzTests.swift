import Glibc
import TestSupport
import Testing

/// No value from outside traps, an operator's included (issue 27): `--web.read-timeout=300y` and
/// `--web.idle-timeout=300y` once killed the exporter at start (SIGILL in a nanoseconds conversion).
/// The real binary is started with every flag that takes a number or a duration, read from its own
/// `--help` (which lists `Flag.all`, so a new flag is covered without an edit here), and extreme
/// values: each start ends in exit 2 with a message, or starts cleanly and stops on SIGTERM with 0.
/// Never a signal. The starts go through the whole path (parse, the server, the poller), not only the
/// parser, since the trap was in the server's start.
@Suite(.endToEnd) struct FlagFuzzTests {
    /// Placeholders of flags that take numbers or durations, and of those that take neither; a flag
    /// with a placeholder in neither fails the test until it is put in one.
    static let numeric: Set<String> = ["N", "I", "C", "TEMP", "M/S", "MM", "DURATION", "DURATIONS", "Nx|DURATION"]
    static let other: Set<String> = ["ADDRESS", "CODE", "DIR", "FORMAT", "LEVEL", "NAME", "PARTS", "PATH", "URL", "PLACE[,above=TEMP][,below=TEMP][,hysteresis=C][,gust=M/S][,rain=MM][,alerts=off]"]

    static let values = [
        "0", "-1", "1e300", "nan", "300y", "31000y", "9223372036854775808", "99999999999999999999", "1ms", "2562047788015216h",
    ]

    /// `--name=PLACEHOLDER` for each flag `--help` lists that takes a value.
    static func flags() throws -> [(name: String, placeholder: String)] {
        let help = try ChildProcess(DemoModeTests.executable, ["--help"])
        #expect(help.wait(seconds: 30) == 0)
        return help.standardOutput.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  --"), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[line.index(line.startIndex, offsetBy: 4)..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    @Test func everyNumberOrDurationFlagExitsTwoOrStartsNeverTraps() async throws {
        let flags = try Self.flags()
        #expect(flags.count > 30, "\(flags)")
        let unknown = flags.filter { !Self.numeric.contains($0.placeholder) && !Self.other.contains($0.placeholder) }
        #expect(unknown.isEmpty, "put these placeholders in FlagFuzzTests.numeric or .other: \(unknown)")
        let numeric = flags.filter { Self.numeric.contains($0.placeholder) }.map(\.name)
        #expect(numeric.contains("web.read-timeout") && numeric.contains("collector.weather.interval"))
        let cases = numeric.flatMap { name in Self.values.map { (name, $0) } }
        var outcomes: [String: Int] = [:]
        // Four at a time: a clean start waits for its listening line and a SIGTERM.
        for batch in stride(from: 0, to: cases.count, by: 4) {
            let results = await withTaskGroup(of: (String, String, String?).self) { group in
                for (name, value) in cases[batch..<min(batch + 4, cases.count)] {
                    group.addTask { (name, value, await Self.start(name, value)) }
                }
                var results: [(String, String, String?)] = []
                for await result in group { results.append(result) }
                return results
            }
            for (name, value, problem) in results {
                if let problem { Issue.record("--\(name)=\(value): \(problem)") } else { outcomes[name, default: 0] += 1 }
            }
        }
        #expect(outcomes.values.reduce(0, +) == cases.count)
    }

    /// Nil when the start ended well: exit 2 with a message, or a clean start that SIGTERM stops with 0.
    static func start(_ name: String, _ value: String) async -> String? {
        let arguments = ["--web.listen-address=127.0.0.1:0", "--location", "A=1,2", "--openweather.url=http://127.0.0.1:1", "--\(name)=\(value)"]
        guard let process = try? ChildProcess(DemoModeTests.executable, arguments, environment: ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"])
        else { return "could not be started" }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if process.standardError.contains("address=127.0.0.1:") {
                process.signal(SIGTERM)
                guard let code = await process.wait(seconds: 30) else {
                    process.signal(SIGKILL)
                    _ = await process.wait(seconds: 5)
                    return "started but did not stop on SIGTERM"
                }
                return code == 0 ? nil : "started, then exit \(code) on SIGTERM: \(process.standardError.suffix(400))"
            }
            if let code = await process.wait(seconds: 0.05) {
                if code >= 128 { return "killed by signal \(code - 128): \(process.standardError.suffix(400))" }
                guard code == 2, !process.standardError.isEmpty else { return "exit \(code) (not 2, or no message): \(process.standardError.suffix(400))" }
                return nil
            }
        }
        process.signal(SIGKILL)
        _ = await process.wait(seconds: 5)
        return "neither started nor ended in 60 s: \(process.standardError.suffix(400))"
    }
}
