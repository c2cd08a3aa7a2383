import Dispatch
import Glibc
import Locking
import Platform
import Simulator
import TestSupport
import Testing

@testable import Exporter

/// `openweather-exporter healthcheck`: where it asks, and what it says for each way an answer can fail.
@Suite struct HealthCheckOptionsTests {
    func check(_ arguments: [String], environment: [String: String] = [:]) throws -> HealthCheck {
        guard
            case .healthcheck(let check) = try ConfigurationLoader(
                arguments: ["healthcheck"] + arguments, environment: environment
            ).load()
        else {
            throw ConfigError("not a health check")
        }
        return check
    }

    @Test func readsTheListenAddressFromTheExportersOwnSettings() throws {
        #expect(try check([]).address == nil)
        #expect(try check([]).tls == nil)
        #expect(try check([]).timeout == .seconds(4))
        #expect(
            try check(["--web.listen-address=127.0.0.2:9800"]).address == ListenAddress(host: "127.0.0.2", port: 9800))
        #expect(
            try check([], environment: ["OPENWEATHER_EXPORTER_WEB_LISTEN_ADDRESS": ":9801"]).address
                == ListenAddress(host: "", port: 9801))
        let file = "/tmp/owe-healthcheck-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).yml"
        defer { unlink(file) }
        try write("web:\n  listen_address: \"[::1]:9802\"\n", to: file)
        #expect(try check(["--config.file=\(file)"]).address == ListenAddress(host: "::1", port: 9802))
        // Port 0 names no port to ask: the sockets in /proc are looked up instead.
        #expect(try check(["--web.listen-address=127.0.0.1:0"]).address == nil)
        // The exporter's whole command line is accepted (locations, keys' files), only the web part is read.
        #expect(
            try check(["--location", "London=51.5,-0.12", "--collector.onecall", "--timeout", "500ms"]).timeout
                == .milliseconds(500))
    }

    @Test func theWebConfigSaysWhetherToSpeakTLS() throws {
        let base = "/tmp/owe-healthcheck-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer {
            unlink(base + "-tls.yml")
            unlink(base + "-auth.yml")
        }
        try write("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n", to: base + "-tls.yml")
        try write("basic_auth_users:\n  alice: \(WebConfigTests.hash)\n", to: base + "-auth.yml")
        #expect(try check(["--web.config.file=\(base)-tls.yml"]).tls == true)
        #expect(try check([], environment: ["OPENWEATHER_EXPORTER_WEB_CONFIG_FILE": base + "-auth.yml"]).tls == false)
    }

    @Test func mistakesSayWhatIsWrong() {
        func failure(_ arguments: [String]) -> String {
            do {
                _ = try check(arguments)
                return ""
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(["--timeout=soon"]).contains("--timeout=soon is not a duration"))
        #expect(failure(["--timeout=1s", "--timeout=2s"]).contains("--timeout is given twice"))
        #expect(failure(["--timeout"]).contains("--timeout needs a value"))
        #expect(failure(["--web.listen-adress=:1"]).contains("unknown flag --web.listen-adress"))
        #expect(
            failure(["--web.config.file=/nonexistent/web.yml"]).contains(
                "cannot read --web.config.file /nonexistent/web.yml"))
        guard
            case .help(let text) = try? ConfigurationLoader(arguments: ["healthcheck", "--help"], environment: [:])
                .load()
        else {
            Issue.record("healthcheck --help is not help")
            return
        }
        #expect(text.hasPrefix("usage: openweather-exporter healthcheck"))
        guard case .help(let main) = try? ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            return
        }
        #expect(main.contains("openweather-exporter healthcheck --help"))
    }

    func write(_ text: String, to path: String) throws {
        let handle = try #require(fopen(path, "w"))
        fputs(text, handle)
        fclose(handle)
    }
}

/// Finding the listening sockets in /proc, as the image's check does with no address given.
@Suite struct ListeningSocketsTests {
    @Test func readsTheKernelsAddressesOnAnyByteOrder() {
        // The tables print each 32-bit word as the host reads it: 127.0.0.1 is 0100007F on little-endian machines.
        let loopback = String(UInt32(0x7F00_0001).bigEndian, radix: 16, uppercase: true).leftPadded(8) + ":2623"
        #expect(ListeningSockets.parse(loopback, isIPv6: false) == ListenAddress(host: "127.0.0.1", port: 0x2623))
        #expect(ListeningSockets.parse("00000000:0050", isIPv6: false) == ListenAddress(host: "127.0.0.1", port: 80))
        #expect(
            ListeningSockets.parse("00000000000000000000000000000000:2623", isIPv6: true)
                == ListenAddress(host: "127.0.0.1", port: 0x2623))
        let v6loopback =
            "000000000000000000000000" + String(UInt32(1).bigEndian, radix: 16, uppercase: true).leftPadded(8)
        #expect(ListeningSockets.parse(v6loopback + ":2623", isIPv6: true) == ListenAddress(host: "::1", port: 0x2623))
        let mapped =
            "0000000000000000" + String(UInt32(0xFFFF).bigEndian, radix: 16, uppercase: true).leftPadded(8)
            + String(UInt32(0x7F00_0002).bigEndian, radix: 16, uppercase: true).leftPadded(8)
        #expect(ListeningSockets.parse(mapped + ":0050", isIPv6: true) == ListenAddress(host: "127.0.0.2", port: 80))
        #expect(ListeningSockets.parse("0100007F", isIPv6: false) == nil)
        #expect(ListeningSockets.parse("0100007Z:0050", isIPv6: false) == nil)
        #expect(ListeningSockets.parse("0100007F:0050", isIPv6: true) == nil)
    }

    @Test func findsThisProcesssListeningSocketButNotItsConnections() throws {
        let listener = try StubListener(accepting: false)
        defer { listener.close() }
        let fd = try LoopbackHTTP.connect(port: listener.port)
        defer { close(fd) }
        let addresses = ListeningSockets.addresses(of: [getpid()])
        #expect(addresses.contains(ListenAddress(host: "127.0.0.1", port: listener.port)), "\(addresses)")
        // The connected socket's local port is not a listening one.
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        #expect(!addresses.contains { $0.port == UInt16(bigEndian: local.sin_port) })
        // The test runner is not an openweather-exporter: nothing else runs its executable.
        #expect(!ListeningSockets.exporterProcesses().contains(getpid()))
    }

    /// The first process of a namespace may exit between the listing of its descriptors and the reading
    /// of the namespace's tables (many short-lived runs of the executable, as the end-to-end tests
    /// start): the tables are read through another of its processes.
    @Test func readsTheTablesThroughAProcessStillThereWhenTheFirstIsGone() throws {
        let listener = try StubListener(accepting: false)
        defer { listener.close() }
        let inodes = ListeningSockets.socketInodes(of: getpid())
        // No process has the number pid_max: the kernel hands out numbers below it.
        let text = String(decoding: try RegularFile.read("/proc/sys/kernel/pid_max", limit: 64), as: UTF8.self)
        let maximum = try #require(Int32(text.filter(\.isNumber)))
        let found = ListeningSockets.listening(readingFrom: [maximum, getpid()], among: inodes)
        #expect(found.contains(ListenAddress(host: "127.0.0.1", port: listener.port)), "\(found)")
        #expect(ListeningSockets.listening(readingFrom: [maximum], among: inodes).isEmpty)
    }
}

/// A loopback TCP listener for the answers an exporter would never give.
final class StubListener: Sendable {
    let fd: Int32
    let port: UInt16
    let accepting: Bool
    private let closed = Locked(false)

    /// `accepting: false` leaves connections in the backlog: connected, never answered (a hung server).
    /// `answer` is written to each accepted connection, which is then closed.
    init(accepting: Bool, answer: [UInt8] = []) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw ConfigError("cannot listen on the loopback")
        }
        port = UInt16(bigEndian: address.sin_port)
        self.accepting = accepting
        guard accepting else { return }
        let server = fd
        let closed = self.closed
        // A queue of its own: its blocking accept never holds a thread of the shared pool.
        // The accepting thread closes the listener when it is done with it: closed from `close()`, its
        // number could be another test's socket by the time this loop calls `accept` on it again.
        DispatchQueue(label: "test-listener").async {
            defer { Glibc.close(server) }
            while !closed.withLock({ $0 }) {
                let client = accept(server, nil, nil)
                guard client >= 0 else { return }
                var request = [UInt8](repeating: 0, count: 4096)
                _ = read(client, &request, request.count)
                _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                Glibc.close(client)
            }
        }
    }

    /// Once; the accepting thread, woken by the shutdown, closes its own listener.
    func close() {
        guard
            closed.withLock({ was in
                defer { was = true }
                return !was
            })
        else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        if !accepting { Glibc.close(fd) }
    }
}

/// The check against real servers: the exporter in-process (plain, TLS, basic auth) and listeners that
/// answer wrong or never.
@Suite(.blocking) struct HealthCheckTests {
    @Test func healthyExporterIsZeroWithTheAddressItAsked() async throws {
        let running = try ExporterWebTests.Running()
        defer { running.stop() }
        let (status, line) = HealthCheck(
            address: ListenAddress(host: "127.0.0.1", port: running.port), tls: nil, timeout: .seconds(4)
        ).run()
        #expect(status == 0)
        #expect(line == "healthcheck: GET http://127.0.0.1:\(running.port)/-/healthy answered 200")
        // The wildcard host, as --web.listen-address=:PORT gives it, is asked on the loopback.
        #expect(
            HealthCheck(address: ListenAddress(host: "", port: running.port), tls: false, timeout: .seconds(4)).run()
                .status == 0)
    }

    @Test func nothingListeningIsOneAndSaysRefused() throws {
        let listener = try StubListener(accepting: false)
        let port = listener.port
        listener.close()
        let (status, line) = HealthCheck(
            address: ListenAddress(host: "127.0.0.1", port: port), tls: nil, timeout: .seconds(4)
        ).run()
        #expect(status == 1)
        #expect(line.hasPrefix("healthcheck: unhealthy: GET http://127.0.0.1:\(port)/-/healthy: "), "\(line)")
        #expect(line.contains("refused"), "\(line)")
        // Refused over plain HTTP is not tried again over TLS.
        #expect(!line.contains("https"), "\(line)")
    }

    @Test func anotherServerOnThePortIsOneWithItsStatus() throws {
        // The simulator speaks HTTP but has no /-/healthy: a wrong port in the settings.
        let simulator = try Simulator()
        defer { simulator.stop() }
        let port = try #require(UInt16(simulator.baseURL.split(separator: ":").last.map(String.init) ?? ""))
        let (status, line) = HealthCheck(
            address: ListenAddress(host: "127.0.0.1", port: port), tls: nil, timeout: .seconds(4)
        ).run()
        #expect(status == 1)
        #expect(line.contains("GET http://127.0.0.1:\(port)/-/healthy answered 404"), "\(line)")
    }

    @Test func hungServerIsOneWithinTheTimeout() throws {
        let listener = try StubListener(accepting: false)
        defer { listener.close() }
        let started = monotonicSeconds()
        let (status, line) = HealthCheck(
            address: ListenAddress(host: "127.0.0.1", port: listener.port), tls: nil, timeout: .milliseconds(500)
        ).run()
        let took = monotonicSeconds() - started
        #expect(status == 1)
        #expect(line.contains("timed out"), "\(line)")
        // One timeout for the whole check: the TLS attempt does not get another.
        #expect(took >= 0.45 && took < 3, "took \(took) s")
    }

    @Test func garbageAnswerIsOneAndSaysSo() throws {
        let listener = try StubListener(accepting: true, answer: Array("SSH-2.0-OpenSSH_9.2\r\n".utf8))
        defer { listener.close() }
        let (status, line) = HealthCheck(
            address: ListenAddress(host: "127.0.0.1", port: listener.port), tls: nil, timeout: .seconds(4)
        ).run()
        #expect(status == 1)
        #expect(line.contains("GET http://127.0.0.1:\(listener.port)/-/healthy: malformed response"), "\(line)")
        // Not HTTP: perhaps TLS, so https was tried as well, and failed.
        #expect(line.contains("GET https://127.0.0.1:\(listener.port)/-/healthy: "), "\(line)")
        let plainOnly = HealthCheck(
            address: ListenAddress(host: "127.0.0.1", port: listener.port), tls: false, timeout: .seconds(4)
        ).run()
        #expect(plainOnly.status == 1 && !plainOnly.line.contains("https"), "\(plainOnly.line)")
    }

    @Test func tlsAndBasicAuthThroughTheWebConfig() throws {
        let serving = try WebConfigServingTests()
        let hash = WebConfigTests.hash
        let dir = serving.directory(
            web:
                "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  alice: \(hash)\n"
        )
        let (exporter, simulator) = try serving.start(dir)
        defer {
            exporter.shutdown()
            simulator.stop()
        }
        let address = ListenAddress(host: "127.0.0.1", port: exporter.port)
        // As the subcommand reads it: the web config's TLS, from the exporter's own flag.
        guard
            case .healthcheck(let given) = try ConfigurationLoader(
                arguments: [
                    "healthcheck", "--web.listen-address=127.0.0.1:\(exporter.port)",
                    "--web.config.file=\(dir)/web.yml",
                ],
                environment: [:]
            ).load()
        else { throw ConfigError("not a health check") }
        #expect(given.tls == true)
        let (status, line) = given.run()
        #expect(status == 0, "\(line)")
        #expect(line == "healthcheck: GET https://127.0.0.1:\(exporter.port)/-/healthy answered 200")
        // Not told of the web config: plain HTTP fails, then https answers.
        let guessed = HealthCheck(address: address, tls: nil, timeout: .seconds(4)).run()
        #expect(guessed.status == 0, "\(guessed.line)")
        #expect(guessed.line.contains("https://"))
        // Told wrong: plain only, which the TLS port refuses.
        #expect(HealthCheck(address: address, tls: false, timeout: .seconds(4)).run().status == 1)
        // Basic auth still guards everything else.
        #expect(serving.curl(exporter.port, "") == "401")
        #expect(serving.curl(exporter.port, "", path: "/-/ready") == "401")
        #expect(serving.curl(exporter.port, "", path: "/-/healthy") == "200")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
