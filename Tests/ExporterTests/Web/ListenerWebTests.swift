import Glibc
import Simulator
import TestSupport
import Testing

@testable import Exporter

/// One exporter on several addresses, or on the socket systemd hands over: the same server on each.
@Suite(.endToEnd) struct ListenerWebTests {
    @Test func servesTheSameExpositionOnEveryAddress() async throws {
        // Running listens on 127.0.0.1:0; a second 127.0.0.1:0 is a second free port.
        let running = try ExporterWebTests.Running(extra: ["--web.listen-address=127.0.0.1:0"])
        defer { running.stop() }
        let addresses = running.exporter.addresses
        let ports = addresses.compactMap { $0.split(separator: ":").last.flatMap { UInt16($0) } }
        #expect(addresses.count == 2 && ports.count == 2 && ports[0] != ports[1], "\(addresses)")
        #expect(addresses == ports.map { "127.0.0.1:\($0)" })
        for port in ports {
            #expect(
                await waitUntil(seconds: 60) {
                    let text = (try? LoopbackHTTP.request(port: port, method: "GET", path: "/metrics").text) ?? ""
                    return text.contains("openweather_temperature_celsius{location=\"London\"}")
                        && text.contains("openweather_temperature_celsius{location=\"Tokyo\"}")
                }, "port \(port)")
            let page = try LoopbackHTTP.request(port: port, method: "GET", path: "/").text
            #expect(page.contains("Listens on \(addresses.joined(separator: ", "))."), "\(page)")
        }
    }

    /// The descriptor systemd hands over is served on, and the variables that named it are gone
    /// before anything the exporter starts could inherit them.
    @Test func servesOnTheSocketSystemdHandsOverAndForgetsTheVariables() async throws {
        let fd = try LoopbackHTTP.tcpSocket(listening: 16, closeOnExec: false).fd
        let simulator = try Simulator()
        defer { simulator.stop() }
        setenv("LISTEN_PID", String(getpid()), 1)
        setenv("LISTEN_FDS", "1", 1)
        setenv("LISTEN_FDNAMES", "openweather-exporter.socket", 1)
        var configuration = try load([
            "--openweather.url=\(simulator.baseURL)", "--location", "London=51.5074,-0.1278",
            "--no-collector.forecast", "--openweather.max-requests-per-minute=6000",
        ])
        configuration.openWeatherURL = simulator.baseURL
        configuration.systemdSockets = fd..<fd + 1
        let exporter = try Exporter(configuration: configuration, logger: Logger(level: .error, secrets: []))
        exporter.start()
        defer { exporter.shutdown() }
        #expect(getenv("LISTEN_PID") == nil && getenv("LISTEN_FDS") == nil && getenv("LISTEN_FDNAMES") == nil)
        let port = exporter.port
        #expect(exporter.addresses == ["127.0.0.1:\(port)"])
        #expect(
            await waitUntil(seconds: 60) {
                let text = (try? LoopbackHTTP.request(port: port, method: "GET", path: "/metrics").text) ?? ""
                return text.contains("openweather_temperature_celsius{location=\"London\"}")
            })
    }
}
