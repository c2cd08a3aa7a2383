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
                "backfill", "--demo", "--openweather.max-requests-per-minute=6000", "--location", "A=44.34,10.99",
                "--since=2h", "--output=-",
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
