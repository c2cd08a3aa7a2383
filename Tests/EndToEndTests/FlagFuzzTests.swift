import Glibc
import TestSupport
import Testing

@testable import Exporter

/// No value from outside traps, an operator's included (issue 27): `--web.read-timeout=300y` and
/// `--web.idle-timeout=300y` once killed the exporter at start (SIGILL in a nanoseconds conversion).
/// The real binary is started with every setting that takes a number or a duration (from `Flag.all`,
/// so a new flag is covered without an edit here) set to extreme values through each door an operator
/// has: the flag, its environment variable and its config-file key (the `Setting` table gives each).
/// Every start ends in exit 2 with a message naming where the value came from, or starts cleanly and
/// stops on SIGTERM with 0. Never a signal, never a hang. The starts go through the whole path
/// (parse, the server, the poller), not only the parser, since the trap was in the server's start.
@Suite(.endToEnd) struct FlagFuzzTests {
    /// Placeholders of flags that take numbers or durations, and of those that take neither; a flag
    /// with a placeholder in neither fails the test until it is put in one.
    static let numeric: Set<String> = ["N", "I", "C", "TEMP", "M/S", "MM", "DURATION", "DURATIONS", "Nx|DURATION"]
    static let other: Set<String> = [
        "", "ADDRESS", "CODE", "DIR", "FORMAT", "LEVEL", "NAME", "PARTS", "PATH", "URL",
        "PLACE[,above=TEMP][,below=TEMP][,hysteresis=C][,gust=M/S][,rain=MM][,heat_index=TEMP][,wet_bulb=TEMP][,wind_chill=TEMP][,alerts=off]",
    ]

    static let values = [
        "0", "-1", "1e300", "nan", "300y", "31000y", "9223372036854775808", "99999999999999999999", "1ms",
        "2562047788015216h",
    ]
    /// The variable and the file hand their text to the same `Setting` parser the flag does: they
    /// are shown to reach it unchanged, and to be named in its errors, with the values that trapped
    /// or overflow (a duration past Int64 nanoseconds, a number past Double's range, not a number),
    /// so the whole suite stays within its time under the sanitizers.
    static let otherDoorValues = ["300y", "1e300", "nan"]

    /// How an operator gives a setting a value.
    enum Door: String, CaseIterable, Sendable {
        case flag, environment, file
    }

    /// One start: a setting, a value, a door.
    struct Case: Sendable, CustomStringConvertible {
        let flag: Flag
        let value: String
        let door: Door

        var description: String {
            switch door {
            case .flag: "--\(flag.name)=\(value)"
            case .environment: "\(flag.environmentName)=\(value)"
            case .file: "config file `\(flag.key!): \(value)`"
            }
        }

        /// What the door's error message must name: the flag, the variable or the file's key.
        var origin: String {
            switch door {
            case .flag: "--\(flag.name)"
            case .environment: "$\(flag.environmentName)"
            case .file: "`\(flag.key!)`"
            }
        }

        /// The file's key path as nested YAML mappings: `web.read_timeout` is `read_timeout` under `web`.
        var yaml: String {
            let parts = flag.key!.split(separator: ".")
            return parts.enumerated().map { index, part in
                String(repeating: "  ", count: index) + part + ":" + (index == parts.count - 1 ? " \(value)" : "")
            }.joined(separator: "\n") + "\n"
        }
    }

    /// Every numeric setting × every value through its flag, and × `otherDoorValues` through its
    /// variable and its file key (a flag-only setting has none).
    static func cases() -> [Case] {
        Flag.all.filter { numeric.contains($0.placeholder) }.flatMap { flag in
            Door.allCases.filter { $0 != .file || flag.key != nil }.flatMap { door in
                (door == .flag ? values : otherDoorValues).map { Case(flag: flag, value: $0, door: door) }
            }
        }
    }

    @Test func everyNumberOrDurationSettingThroughEveryDoorExitsTwoOrStartsNeverTraps() async throws {
        let unknown = Flag.all.filter { !Self.numeric.contains($0.placeholder) && !Self.other.contains($0.placeholder) }
        #expect(
            unknown.isEmpty,
            "put these placeholders in FlagFuzzTests.numeric or .other: \(unknown.map { "--\($0.name)=\($0.placeholder)" })"
        )
        let cases = Self.cases()
        let names = Set(cases.map(\.flag.name))
        #expect(
            names.contains("web.read-timeout") && names.contains("collector.weather.interval") && names.count > 15,
            "\(names.sorted())")
        for door in Door.allCases {
            #expect(
                cases.filter { $0.door == door }.count >= (door == .flag ? 10 : 3) * 12,
                "too few starts through the \(door)")
        }
        let started = ContinuousClock.now
        // Eight at a time, each slot refilled as it frees: a start mostly waits (for its listening
        // line, then its exit after SIGTERM), so the cores are not the limit.
        var problems: [String] = []
        var done = 0
        await withTaskGroup(of: String?.self) { group in
            var next = cases.makeIterator()
            for _ in 0..<8 {
                guard let start = next.next() else { break }
                group.addTask { await Self.run(start) }
            }
            for await problem in group {
                done += 1
                if let problem { problems.append(problem) }
                if let start = next.next() { group.addTask { await Self.run(start) } }
            }
        }
        #expect(done == cases.count)
        for problem in problems.sorted() { Issue.record(Comment(rawValue: problem)) }
        print(
            "FlagFuzzTests: \(cases.count) starts (\(names.count) settings, \(Self.values.count) values through flags, \(Self.otherDoorValues.count) through variables and the file) in \(ContinuousClock.now - started)"
        )
    }

    /// Nil when the start ended well, else what went wrong, naming the case.
    static func run(_ start: Case) async -> String? {
        var arguments = [
            "--web.listen-address=127.0.0.1:0", "--location", "A=1,2", "--openweather.url=http://127.0.0.1:1",
        ]
        var environment = ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"]
        var file: String?
        switch start.door {
        case .flag: arguments.append("--\(start.flag.name)=\(start.value)")
        case .environment: environment[start.flag.environmentName] = start.value
        case .file:
            file = temporaryFile(start.yaml, suffix: ".yml")
            arguments.append("--config.file=\(file!)")
        }
        defer { if let file { unlink(file) } }
        return await outcome(arguments, environment, origin: start.origin).map { "\(start): \($0)" }
    }

    /// Nil when the process ended well: exit 2 with a message naming `origin`, or a clean start that
    /// SIGTERM stops with 0.
    static func outcome(_ arguments: [String], _ environment: [String: String], origin: String) async -> String? {
        guard let process = try? ChildProcess(DemoModeTests.executable, arguments, environment: environment)
        else { return "could not be started" }
        // Generous: this is about hangs, and a sanitized build on a busy machine starts slowly.
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
                let message = process.standardError
                if code >= 128 { return "killed by signal \(code - 128): \(message.suffix(400))" }
                guard code == 2, message.contains(origin) else {
                    return "exit \(code) (not 2, or a message not naming \(origin)): \(message.suffix(400))"
                }
                return nil
            }
        }
        process.signal(SIGKILL)
        _ = await process.wait(seconds: 5)
        return "neither started nor ended in 60 s: \(process.standardError.suffix(400))"
    }
}
