import Glibc
import HTTPClient
import Simulator
import TestSupport
import Testing

@testable import Exporter

/// Proxy, trust and connection settings of the API client, as the loader reads them.
@Suite struct TransportConfigurationTests {
    let location = ["--location", "London=51.5074,-0.1278"]

    private func environment(_ extra: [String: String]) -> [String: String] {
        testKey.merging(extra) { $1 }
    }

    @Test func proxiesComeFromTheEnvironment() throws {
        let config = try load(
            location, environment: environment(["HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "localhost"]))
        #expect(
            config.proxy
                == (try ProxyConfiguration(environment: [
                    "HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "localhost",
                ])))
        #expect(config.proxy != .direct)
    }

    @Test func theFlagWinsOverTheEnvironment() throws {
        let config = try load(
            location + ["--openweather.proxy-url=http://u:p@flag.corp:8080"],
            environment: environment(["HTTPS_PROXY": "http://env.corp:3128", "NO_PROXY": "*"]))
        #expect(
            config.proxy == ProxyConfiguration(proxy: try ProxyServer(parsing: "http://u:p@flag.corp:8080", origin: ""))
        )
    }

    @Test func demoIgnoresProxies() throws {
        let config = try load(
            ["--demo"], environment: ["HTTPS_PROXY": "http://env.corp:3128", "HTTP_PROXY": "http://env.corp:3128"])
        #expect(config.proxy == .direct)
    }

    @Test func badProxySaysWhereItCameFromWithoutTheCredentials() {
        let fromEnvironment = loadError(
            location, environment: environment(["HTTPS_PROXY": "socks5://me:TOPSECRET@h:1080"]))
        #expect(fromEnvironment.hasPrefix("$HTTPS_PROXY: socks5:// proxies are not supported"), "\(fromEnvironment)")
        #expect(!fromEnvironment.contains("TOPSECRET"))
        let fromFlag = loadError(location + ["--openweather.proxy-url=http://me:TOPSECRET@h:0"])
        #expect(fromFlag.hasPrefix("--openweather.proxy-url"), "\(fromFlag)")
        #expect(!fromFlag.contains("TOPSECRET"))
    }

    @Test func caFileIsCheckedAtStartup() throws {
        let missing = loadError(location + ["--openweather.tls-ca-file=/nonexistent/ca.pem"])
        #expect(
            missing.contains("cannot read the CA certificates \"/nonexistent/ca.pem\" (--openweather.tls-ca-file)"),
            "\(missing)")
        let notPEM = temporaryFile("hello")
        #expect(loadError(location + ["--openweather.tls-ca-file=\(notPEM)"]).contains("holds no PEM certificate"))
        let pem = temporaryFile("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
        #expect(try load(location + ["--openweather.tls-ca-file=\(pem)"]).tlsCAFile == pem)
        let unreadableBundle = loadError(
            location, environment: environment(["SSL_CERT_FILE": "/nonexistent/bundle.pem"]))
        #expect(unreadableBundle.contains("($SSL_CERT_FILE)"), "\(unreadableBundle)")
    }

    @Test func idleConnections() throws {
        #expect(try load(location).maxIdleConnections == 16)
        #expect(try load(location + ["--openweather.max-idle-connections=0"]).maxIdleConnections == 0)
        #expect(loadError(location + ["--openweather.max-idle-connections=-1"]) != "no error")
    }

    @Test func plainHTTPOffLoopbackWarns() throws {
        let remote = try load(location + ["--openweather.url=http://api.openweathermap.org"])
        #expect(remote.warnings.contains { $0.contains("travels unencrypted") })
        for url in ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:80", "https://api.openweathermap.org"]
        {
            #expect(
                !(try load(location + ["--openweather.url=\(url)"])).warnings.contains { $0.contains("unencrypted") },
                "\(url)")
        }
    }

    /// A base URL no request could use is refused where it is read, naming where it came from; the
    /// client, which parses it once when it is made, is the judge of what is usable.
    @Test func aBaseURLTheClientCannotUseIsRefusedWhenRead() throws {
        #expect(
            throws: ConfigError(
                """
                --openweather.url is not a usable base URL (invalid URL: port must be a number from 1 to 65535): give \
                scheme and host, like https://api.openweathermap.org
                """
            )
        ) {
            try load(location + ["--openweather.url=https://api.openweathermap.org:99999"])
        }
        #expect(throws: Never.self) {
            try load(location + ["--openweather.url=https://gateway.example/owm/"]).openWeatherClient()
        }
    }

    /// A reload to such a URL is refused whole: the previous configuration and its client stay.
    @Test func aReloadToABaseURLTheClientCannotUseIsRefused() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let good = #"{"openweather": {"url": "\#(simulator.baseURL)"}}"#
        let configFile = temporaryFile(good)
        defer { unlink(configFile) }
        let loader = ConfigurationLoader(
            arguments: ["--web.listen-address=127.0.0.1:0", "--config.file", configFile] + location,
            environment: testKey)
        guard case .run(let configuration) = try loader.load() else { throw ConfigError("no run") }
        let exporter = try Exporter(configuration: configuration, logger: Logger(level: .error, sink: { _ in })) {
            () throws(ConfigError) -> Configuration in
            guard case .run(let next) = try loader.load() else { throw ConfigError("no run") }
            return next
        }
        defer { exporter.shutdown() }
        try writeFile(configFile, #"{"openweather": {"url": "http://127.0.0.1:99999"}}"#)
        #expect(
            exporter.reload()?.contains("is not a usable base URL (invalid URL: port must be a number from 1 to 65535)")
                == true)
        try writeFile(configFile, good)
        #expect(exporter.reload() == nil)
    }
}
