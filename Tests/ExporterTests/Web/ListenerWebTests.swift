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

    /// Issue 49: of two sockets systemd hands over, one shut down by another holder stops alone: the
    /// other serves on, one `level=error` line names it, and `openweather_exporter_listeners_dropped_total`
    /// counts it.
    @Test func aSocketShutDownElsewhereIsDroppedCountedAndLogged() async throws {
        let (one, firstPort) = try LoopbackHTTP.tcpSocket(listening: 16, closeOnExec: false)
        let (two, secondPort) = try LoopbackHTTP.tcpSocket(listening: 16, closeOnExec: false)
        // Two numbers in a row, as systemd hands them over, far above those other tests open meanwhile.
        let first = fcntl(one, F_DUPFD, 800)
        let second = fcntl(two, F_DUPFD, first + 1)
        close(one)
        close(two)
        try #require(first >= 800 && second == first + 1)
        let holder = dup(second)
        defer { close(holder) }
        var configuration = try load(["--location", "London=51.5074,-0.1278", "--openweather.url=http://127.0.0.1:9"])
        configuration.systemdSockets = first..<first + 2
        let logs = LogCapture()
        let logger = Logger(level: .info, format: .logfmt, secrets: [], sink: { logs.append($0) })
        let exporter = try Exporter(configuration: configuration, logger: logger)
        exporter.start()
        defer { exporter.shutdown() }
        #expect(shutdown(holder, Int32(SHUT_RD)) == 0)
        #expect(
            await waitUntil(seconds: 60) {
                let text = (try? LoopbackHTTP.request(port: firstPort, method: "GET", path: "/metrics").text) ?? ""
                return text.contains("openweather_exporter_listeners_dropped_total 1")
            })
        let errors = logs.all.filter { $0.contains("level=error") && $0.contains("stopped accepting") }
        #expect(errors.count == 1 && errors.first?.contains("127.0.0.1:\(secondPort)") == true, "\(logs.all)")
    }
}
