import Glibc
import TestSupport
import Testing

/// `openweather-exporter backfill` as an operator runs it: the real executable against its own
/// simulator (`--demo`).
@Suite(.endToEnd) struct BackfillCommandTests {
    /// `--output=-`: the file on standard output, and a last line that says what went there (it used
    /// to say "wrote -"), counted from what standard output received.
    @Test func toStandardOutputTheLastLineSaysHowManySamplesWentThere() async throws {
        let backfill = try ChildProcess(
            DemoModeTests.executable,
            [
                "backfill", "--demo", "--location", "A=44.34,10.99", "--since=2h", "--output=-",
            ])
        #expect(await backfill.wait(seconds: 120) == 0, "\(backfill.standardError)")
        let file = backfill.standardOutput
        #expect(file.hasSuffix("# EOF\n"))
        let samples = file.split(separator: "\n").count { !$0.hasPrefix("#") }
        #expect(samples > 10, "\(file)")
        let last = backfill.standardError.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            last == "backfill: wrote \(samples) samples (1 of 1 locations) to standard output; "
                + "save it as FILE and import it with promtool tsdb create-blocks-from openmetrics FILE DIR",
            "\(backfill.standardError)")
        #expect(access("-.partial", F_OK) != 0, "nothing kept on disk")
    }

    /// The README's `backfill --demo --since=24h`: the demo's own simulator is not paced against at
    /// OpenWeather's 60 a minute (125 calls took 2 minutes); a budget given explicitly still holds.
    @Test func theDemosBackfillIsNotPacedAgainstItself() async throws {
        let output = "/tmp/owe-backfill-demo-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).om"
        defer { unlink(output) }
        let backfill = try ChildProcess(
            DemoModeTests.executable, ["backfill", "--demo", "--since=24h", "--output=\(output)"])
        // At 60 a minute its 125 calls take over 2 minutes; unpaced, seconds (1.8 s in a debug build).
        #expect(await backfill.wait(seconds: 100) == 0, "\(backfill.standardError)")
        let first = backfill.standardError.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.contains("5 locations (0 done before), "), "\(first)")
        #expect(first.contains(" calls at 6000 a minute;"), "\(first)")
        #expect(backfill.standardError.contains("wrote \(output): 5 of 5 locations"), "\(backfill.standardError)")
    }

    /// A configuration mistake exits 2, as the exporter's do, whether the flag parser or the run finds
    /// it: `--since=31000y` said what was wrong and exited 1.
    @Test func configurationMistakesExitTwo() async throws {
        let output = "/tmp/owe-backfill-status-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).om"
        let nothing = ["--no-collector.weather", "--no-collector.air_pollution", "--collector.forecast"]
        for (arguments, says) in [
            (["--since=31000y", "--output=\(output)"], "--since and --until give a range OpenWeather has no history"),
            (["--since=soon", "--output=\(output)"], "--since=soon is not a duration"),
            (["--since=2h", "--output=/nonexistent/history.om"], "--output must be in a directory you can write"),
            (["--since=2h", "--output=\(output)"] + nothing, "nothing to backfill"),
        ] {
            let command = ["backfill", "--demo", "--location", "A=44.34,10.99"] + arguments
            let backfill = try ChildProcess(DemoModeTests.executable, command)
            #expect(await backfill.wait(seconds: 60) == 2, "\(arguments): \(backfill.standardError)")
            #expect(backfill.standardError.contains(says), "\(arguments): \(backfill.standardError)")
        }
        #expect(access(output, F_OK) != 0 && access(output + ".partial", F_OK) != 0, "nothing written")
    }
}
