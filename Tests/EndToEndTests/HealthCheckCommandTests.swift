import Glibc
import Simulator
import TestSupport
import Testing

/// `openweather-exporter healthcheck` as the image's HEALTHCHECK runs it: the real executable, its exit
/// status and its one line, against the real executable serving.
@Suite(.endToEnd) struct HealthCheckCommandTests {
    func healthcheck(_ arguments: [String]) async throws -> (status: Int32?, output: String, errors: String) {
        let check = try ChildProcess(DemoModeTests.executable, ["healthcheck"] + arguments)
        let status = await check.wait(seconds: 20)
        return (status, check.standardOutput, check.standardError)
    }

    @Test func exitsZeroWhileTheExporterServesAndOneOnceItIsGone() async throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let exporter = try ChildProcess(
            DemoModeTests.executable,
            [
                "--web.listen-address=127.0.0.1:0", "--openweather.url=\(simulator.baseURL)", "--location",
                "London=51.5,-0.12",
            ],
            environment: ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"])
        let port = try #require(await exporter.port(after: "address=127.0.0.1:"), "\(exporter.standardError)")

        let given = try await healthcheck(["--web.listen-address=127.0.0.1:\(port)"])
        #expect(given.status == 0, "\(given.errors)")
        #expect(given.output == "healthcheck: GET http://127.0.0.1:\(port)/-/healthy answered 200\n")
        // No address given: the sockets of the processes running this executable, from /proc (other
        // tests' exporters may answer first, so this shows only that one is found and asked).
        let found = try await healthcheck([])
        #expect(found.status == 0, "\(found.output) \(found.errors)")
        #expect(found.output.hasSuffix("/-/healthy answered 200\n"), "\(found.output)")

        exporter.signal(SIGTERM)
        #expect(await exporter.wait(seconds: 10) == 0)
        let gone = try await healthcheck(["--web.listen-address=127.0.0.1:\(port)"])
        #expect(gone.status == 1)
        #expect(
            gone.output.hasPrefix("healthcheck: unhealthy: GET http://127.0.0.1:\(port)/-/healthy: "), "\(gone.output)")
    }

    /// A mistake in the check's flags exits 2, as the exporter's own do (Docker counts it as a failed
    /// check all the same): told apart from an exporter that does not answer (1).
    @Test func aBadSettingIsStatusTwoWithTheReason() async throws {
        let bad = try await healthcheck(["--web.config.file=/nonexistent/web.yml"])
        #expect(bad.status == 2)
        #expect(bad.errors.contains("cannot read --web.config.file /nonexistent/web.yml"), "\(bad.errors)")
        let timeout = try await healthcheck(["--timeout=soon"])
        #expect(timeout.status == 2)
        #expect(timeout.errors.contains("--timeout=soon is not a duration"), "\(timeout.errors)")
        let help = try await healthcheck(["--help"])
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("usage: openweather-exporter healthcheck"))
    }
}
