import Glibc
import TestSupport
import Testing

/// The real executable behind a proxy taken from its environment. The demo's simulator stands in
/// for the proxy: like any HTTP/1.1 server it answers absolute-form requests (`GET http://host/...`),
/// which is what a client sends to an http proxy, so polls of a host that does not exist succeed
/// only if they went through it.
@Suite(.endToEnd) struct ProxyEnvironmentTests {
    static func port(of process: ChildProcess) async -> UInt16? {
        await process.port(after: "address=127.0.0.1:")
    }

    static func simulatorURL(of process: ChildProcess) async -> String? {
        var url: String?
        _ = await waitUntil(seconds: 60) {
            guard let range = process.standardError.firstRange(of: "simulator=http://127.0.0.1:") else { return false }
            url = String(
                process.standardError[range.lowerBound...].dropFirst("simulator=".count).prefix {
                    $0 != " " && $0 != "\n"
                })
            return true
        }
        return url
    }

    @Test func httpProxyFromTheEnvironmentAndTheFlagThatWinsOverIt() async throws {
        let (demo, _) = try await DemoModeTests.startDemo()
        let proxy = try #require(await Self.simulatorURL(of: demo), "\(demo.standardError)")
        let common = [
            "--web.listen-address=127.0.0.1:0", "--openweather.url=http://api.openweathermap.invalid",
            "--location", "Proxied=10,20", "--collector.weather.interval=1m",
        ]
        let environment = [
            "HTTP_PROXY": proxy, "HTTPS_PROXY": "http://127.0.0.1:1", "OPENWEATHER_API_KEY": "0123456789abcdef",
        ]

        let viaEnvironment = try ChildProcess(DemoModeTests.executable, common, environment: environment)
        let port = try #require(await Self.port(of: viaEnvironment), "\(viaEnvironment.standardError)")
        #expect(
            await waitUntil(seconds: 20) {
                (try? LoopbackHTTP.request(port: port, path: "/metrics").text)?.contains(
                    "openweather_up{location=\"Proxied\",source=\"weather\"} 1") == true
            }, "\(viaEnvironment.standardError)")
        #expect(await waitUntil { viaEnvironment.standardError.contains("the API key travels unencrypted") })
        #expect(!viaEnvironment.standardError.contains("0123456789abcdef"))

        // The flag replaces the environment: a proxy nobody listens on makes every poll fail as `proxy`.
        let viaFlag = try ChildProcess(
            DemoModeTests.executable, common + ["--openweather.proxy-url=http://127.0.0.1:1"], environment: environment)
        let flagPort = try #require(await Self.port(of: viaFlag), "\(viaFlag.standardError)")
        #expect(
            await waitUntil(seconds: 20) {
                (try? LoopbackHTTP.request(port: flagPort, path: "/metrics").text)?.contains(
                    "openweather_api_requests_total{code=\"proxy\",source=\"weather\"} 1") == true
            }, "\(viaFlag.standardError)")
        #expect(await waitUntil { viaFlag.standardError.contains("connect to proxy 127.0.0.1:1 failed") })
    }
}
