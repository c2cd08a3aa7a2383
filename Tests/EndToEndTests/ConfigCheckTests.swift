import Glibc
import TestSupport
import Testing

/// `--config.check`: the real binary reads the config file and the web config, says what they set and
/// exits 0, or prints the start's error and exits 2; it never listens, and never shows the key.
@Suite(.endToEnd) struct ConfigCheckTests {
    static let key = "d5e1b0c7a4f3e2d1c0b9a8f7e6d5c4b3"

    func check(config: String, webConfig: String?) async throws -> (status: Int32?, output: String) {
        let file = temporaryFile(config, suffix: ".yml")
        defer { unlink(file) }
        var arguments = ["--config.check", "--config.file", file]
        let web = webConfig.map { temporaryFile($0, suffix: ".yml") }
        defer { web.map { _ = unlink($0) } }
        if let web { arguments += ["--web.config.file", web] }
        let process = try ChildProcess(
            DemoModeTests.executable, arguments, environment: ["OPENWEATHER_API_KEY": Self.key])
        // A ceiling, not a timing: the check reads two small files and exits.
        let status = await process.wait(seconds: 120)
        let output = process.standardOutput + process.standardError
        #expect(!output.contains(Self.key), "the key in the check's output: \(output)")
        return (status, output)
    }

    static let config = """
        locations:
          - name: Zocca
            latitude: 44.35
            longitude: 10.99
          - name: London
            query: London,GB
        web:
          listen_address: 127.0.0.1:1
        """

    @Test func aValidConfigurationIsDescribedAndExitsZero() async throws {
        let (status, output) = try await check(
            config: Self.config,
            webConfig: "basic_auth_users:\n  prometheus: $2y$10$3jfcsq.3xkwhUltLH1IX1u4mZZuLPKiJAweGs/tVBuhfIDKDJTqZq\n"
        )
        #expect(status == 0, "\(output)")
        #expect(output.contains("the configuration is valid (--config.check: not starting)"), "\(output)")
        #expect(output.contains("locations=2"), "\(output)")
        #expect(output.contains("address=127.0.0.1:1"), "\(output)")
        #expect(output.contains("api_key=") && output.contains("$OPENWEATHER_API_KEY"), "\(output)")
        #expect(output.contains("request plan"), "\(output)")
        #expect(!output.contains("starting openweather-exporter"), "\(output)")
    }

    @Test func aMistakeInTheConfigFileIsTheStartsErrorAndExitsTwo() async throws {
        let (status, output) = try await check(config: Self.config + "\nlocatoins: []\n", webConfig: nil)
        #expect(status == 2, "\(output)")
        #expect(output.hasPrefix("openweather-exporter: error: "), "\(output)")
        #expect(output.contains("locatoins"), "\(output)")
    }

    @Test func aMistakeInTheWebConfigExitsTwo() async throws {
        let (status, output) = try await check(
            config: Self.config,
            webConfig: "tls_server_config:\n  cert_file: /nonexistent/server.crt\n  key_file: /nonexistent/server.key\n"
        )
        #expect(status == 2, "\(output)")
        #expect(output.contains("--web.config.file"), "\(output)")
    }
}
