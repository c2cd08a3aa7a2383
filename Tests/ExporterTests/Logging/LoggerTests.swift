import TestSupport
import Testing

@testable import Exporter

@Suite struct LoggerTests {
    @Test func logfmtQuotesWhatNeedsIt() {
        let logs = LogCapture()
        let logger = Logger(level: .info, format: .logfmt, sink: { logs.append($0) })
        logger.warn("poll failed", [("location", "New York"), ("code", "500"), ("reason", "a \"quoted\"\nline")])
        let line = logs.all[0]
        #expect(line.hasPrefix("ts="))
        #expect(
            line.contains(
                " level=warn msg=\"poll failed\" location=\"New York\" code=500 reason=\"a \\\"quoted\\\"\\nline\""))
        #expect(!line.contains("\n"))
    }

    @Test func jsonIsOneObjectPerLine() {
        let logs = LogCapture()
        let logger = Logger(level: .debug, format: .json, sink: { logs.append($0) })
        logger.info("starting", [("locations", "4")])
        #expect(logs.all[0].hasPrefix("{\"ts\":\""))
        #expect(logs.all[0].hasSuffix(",\"level\":\"info\",\"msg\":\"starting\",\"locations\":\"4\"}"))
    }

    @Test func levelsFilter() {
        let logs = LogCapture()
        let logger = Logger(level: .warn, sink: { logs.append($0) })
        logger.debug("d")
        logger.info("i")
        logger.warn("w")
        logger.error("e")
        #expect(
            logs.all.map { $0.split(separator: " ").dropFirst().joined(separator: " ") } == [
                "level=warn msg=w", "level=error msg=e",
            ])
        // Each level lets through itself and those above it, nothing below.
        for (threshold, expected) in [(Logger.Level.debug, 4), (.info, 3), (.warn, 2), (.error, 1)] {
            let lines = LogCapture()
            let filtered = Logger(level: threshold, sink: { lines.append($0) })
            for level in [Logger.Level.debug, .info, .warn, .error] { filtered.log(level, "m", []) }
            #expect(lines.all.count == expected, "\(threshold)")
            #expect(lines.all.first?.contains(" level=\(threshold.rawValue) ") == true, "\(threshold)")
        }
    }

    @Test func secretsAreRedactedWhateverTheMessage() {
        let logs = LogCapture()
        let logger = Logger(level: .debug, secrets: ["abc123secret"], sink: { logs.append($0) })
        logger.error("GET /data/2.5/weather?appid=abc123secret failed", [("url", "x?appid=abc123secret")])
        #expect(!logs.all[0].contains("abc123secret"))
        #expect(logs.all[0].contains("<redacted>"))
    }

    @Test func timestampsAreRFC3339() {
        #expect(Clock.rfc3339(1_700_000_000.25) == "2023-11-14T22:13:20.250Z")
    }

    @Test func secretsDoNotPrintThemselves() {
        let secret = Secret("hunter2")
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        var configuration = Configuration()
        configuration.apiKey = secret
        #expect(!"\(configuration)".contains("hunter2"))
    }
}
