import Glibc
import HTTPClient
import Simulator
import TestSupport
import Testing

@testable import Exporter

extension LoggerTests {
    @Test func secretsAddedLaterAreRedactedByEveryCopy() {
        let logs = LogCapture()
        let logger = Logger(level: .debug, secrets: ["first-key-1234"], sink: { logs.append($0) })
        let copy = logger
        logger.redact(["second-key-5678"])
        copy.error("echo", [("body", "first-key-1234 second-key-5678 second%2Dkey-5678"), ("cut", "appid=second-ke")])
        #expect(
            logs.all[0].hasSuffix(#"msg=echo body="<redacted> <redacted> <redacted>" cut="appid=<redacted>""#),
            "\(logs.all[0])")
    }

    /// A secret with a quote or a backslash is redacted before the line is quoted, which would change it.
    @Test func aSecretThatQuotingWouldChangeIsStillRedacted() {
        let logs = LogCapture()
        let logger = Logger(level: .debug, format: .json, secrets: [#"pa"ss\word"#], sink: { logs.append($0) })
        logger.error("proxy said", [("body", #"user:pa"ss\word"#)])
        #expect(!logs.all[0].contains("ss\\\\word") && logs.all[0].contains("user:<redacted>"), "\(logs.all[0])")
    }

    /// The logger's secrets were fixed at startup: a reload with a new key file, or a new proxy
    /// password, let them into the log. Each reload adds them; the old key stays redacted too.
    @Test func aReloadWithANewKeyFileAndProxyRedactsThem() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let keyFile = temporaryFile("old-key-0123456789abcdef\n")
        defer { unlink(keyFile) }
        let configFile = temporaryFile("{}")
        defer { unlink(configFile) }
        let loader = ConfigurationLoader(
            arguments: [
                "--web.listen-address=127.0.0.1:0", "--openweather.url=\(simulator.baseURL)", "--location", "A=1,2",
                "--openweather.api-key-file", keyFile, "--config.file", configFile,
            ],
            environment: [:])
        guard case .run(let configuration) = try loader.load() else { throw ConfigError("no run") }
        let logs = LogCapture()
        let logger = Logger(level: .debug, secrets: configuration.secrets, sink: { logs.append($0) })
        let exporter = try Exporter(configuration: configuration, logger: logger) {
            () throws(ConfigError) -> Configuration in
            guard case .run(let next) = try loader.load() else { throw ConfigError("no run") }
            return next
        }
        defer { exporter.shutdown() }

        try writeFile(keyFile, "new-key-fedcba9876543210\n", mode: 0o600)
        try writeFile(
            configFile, #"{"openweather": {"proxy_url": "http://alice:s3cret-pass@127.0.0.1:1"}}"#, mode: 0o600)
        #expect(exporter.reload() == nil)
        logger.warn(
            "an upstream echoed",
            [
                ("old", "appid=old-key-0123456789abcdef"), ("new", "appid=new-key-fedcba9876543210"),
                ("proxy", "Proxy-Authorization: Basic YWxpY2U6czNjcmV0LXBhc3M= alice:s3cret-pass s3cret-pass"),
            ])
        let all = logs.all.joined(separator: "\n")
        for secret in ["old-key", "new-key", "s3cret", "YWxpY2U6czNjcmV0LXBhc3M="] {
            #expect(!all.contains(secret), "\(secret)")
        }
        #expect(logs.all.last?.contains(#"new="appid=<redacted>""#) == true)
    }
}
