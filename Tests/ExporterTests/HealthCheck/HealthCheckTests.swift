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
        #expect(try check([]).addresses.isEmpty)
        #expect(try check([]).tls == nil)
        #expect(try check([]).timeout == .seconds(4))
        #expect(
            try check(["--web.listen-address=127.0.0.2:9800"]).addresses == [
                ListenAddress(host: "127.0.0.2", port: 9800)
            ])
        #expect(
            try check([], environment: ["OPENWEATHER_EXPORTER_WEB_LISTEN_ADDRESS": ":9801"]).addresses
                == [ListenAddress(host: "", port: 9801)])
        let file = "/tmp/owe-healthcheck-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).yml"
        defer { unlink(file) }
        try write("web:\n  listen_address: \"[::1]:9802\"\n", to: file)
        #expect(try check(["--config.file=\(file)"]).addresses == [ListenAddress(host: "::1", port: 9802)])
        // Every address given is asked, in turn; with --web.systemd-socket the sockets are the exporter's,
        // found in /proc, whatever address is given.
        #expect(
            try check(["--web.listen-address=127.0.0.2:9800", "--web.listen-address=:9801"]).addresses == [
                ListenAddress(host: "127.0.0.2", port: 9800), ListenAddress(host: "", port: 9801),
            ])
        #expect(try check(["--web.systemd-socket", "--web.listen-address=127.0.0.2:9800"]).addresses.isEmpty)
        // Port 0 names no port to ask: the sockets in /proc are looked up instead.
        #expect(try check(["--web.listen-address=127.0.0.1:0"]).addresses.isEmpty)
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

    static let later = ContinuousClock.now + .seconds(3600)

    @Test func findsThisProcesssListeningSocketButNotItsConnections() throws {
        let listener = try StubListener(accepting: false)
        defer { listener.close() }
        let fd = try LoopbackHTTP.connect(port: listener.port)
        defer { close(fd) }
        let inodes = try #require(ListeningSockets.socketInodes(of: getpid(), until: Self.later))
        // Other tests listen in this process too: no limit here.
        let found = try #require(
            ListeningSockets.listening(readingFrom: [getpid()], among: inodes, until: Self.later, limit: .max))
        let addresses = found.addresses
        #expect(addresses.contains(ListenAddress(host: "127.0.0.1", port: listener.port)), "\(addresses)")
        // The connected socket's local port is not a listening one.
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        #expect(!addresses.contains { $0.port == UInt16(bigEndian: local.sin_port) })
        // The test runner is not an openweather-exporter: nothing else runs its executable.
        #expect(ListeningSockets.exporterProcesses(until: Self.later)?.contains(getpid()) == false)
    }

    /// The first process of a namespace may exit between the listing of its descriptors and the reading
    /// of the namespace's tables (many short-lived runs of the executable, as the end-to-end tests
    /// start): the tables are read through another of its processes.
    @Test func readsTheTablesThroughAProcessStillThereWhenTheFirstIsGone() throws {
        let listener = try StubListener(accepting: false)
        defer { listener.close() }
        let inodes = try #require(ListeningSockets.socketInodes(of: getpid(), until: Self.later))
        // No process has the number pid_max: the kernel hands out numbers below it.
        let text = String(decoding: try RegularFile.read("/proc/sys/kernel/pid_max", limit: 64), as: UTF8.self)
        let maximum = try #require(Int32(text.filter(\.isNumber)))
        let found = try #require(
            ListeningSockets.listening(readingFrom: [maximum, getpid()], among: inodes, until: Self.later, limit: .max))
        #expect(found.addresses.contains(ListenAddress(host: "127.0.0.1", port: listener.port)), "\(found)")
        #expect(ListeningSockets.listening(readingFrom: [maximum], among: inodes, until: Self.later)?.addresses == [])
    }

    /// A table row as the kernel prints it: `local` as HEX:PORT, LISTEN (0A) unless `state` says otherwise.
    static func row(_ number: Int, local: String, state: String = "0A", inode: UInt64) -> String {
        "    \(number): \(local) 00000000:0000 \(state) 00000000:00000000 00:00000000 00000000"
            + "     0        0 \(inode) 1 0000000000000000 100 0 0 10 0"
    }

    static let header =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
        + "inode"

    /// Issue 38: a table of 60,000 listening rows naming one of the exporter's inodes made the check run
    /// 14.4 s past a 1 s timeout (each address compared with every one before it) and print 4.4 MB.
    /// Each row is read once now, and at most `maxAddresses` are kept.
    @Test func aTableOfSixtyThousandRowsIsReadOnceAndKeepsAFew() throws {
        let directory = BackfillTests.temporaryDirectory()
        var table = Self.header + "\n"
        // The same row 60,000 times is one address, and every row is still read.
        var same = Self.header + "\n"
        var tenth = Self.header + "\n"
        for number in 0..<60_000 {
            let host = String(UInt32(0x7F00_0000 + number).bigEndian, radix: 16, uppercase: true).leftPadded(8)
            table += Self.row(number, local: "\(host):2623", inode: 4242) + "\n"
            same += Self.row(number, local: "0100007F:2623", inode: 4242) + "\n"
            if number < 6_000 { tenth += Self.row(number, local: "0100007F:2623", inode: 4242) + "\n" }
        }
        // Another listening socket of the exporter's; a connection (01) is not one.
        for rows in [60_000, 6_000] {
            let end =
                Self.row(rows, local: "0200007F:2623", inode: 4243) + "\n"
                + Self.row(rows + 1, local: "0300007F:2623", state: "01", inode: 4242) + "\n"
            if rows == 6_000 { tenth += end } else { same += end }
        }
        try writeFile(directory + "/tcp", table)
        try writeFile(directory + "/same", same)
        try writeFile(directory + "/tenth", tenth)
        func read(_ table: String, among inodes: Set<UInt64>) -> ListeningSockets.Tables {
            ListeningSockets.listening(
                inTables: directory + "/" + table, directory + "/none", among: inodes, until: Self.later, limit: 8)
        }
        let found = read("tcp", among: [4242])
        // Linear: ten times the rows cost about ten times the time. Comparing each address with those before
        // it took 14.4 s for 60,000 rows (release build). A ratio, not a bound in seconds: the same pass
        // takes seven seconds of CPU in a debug build under the address sanitizer.
        var started = threadCPUSeconds()
        let small = read("tenth", among: [4242, 4243])
        let smallSeconds = threadCPUSeconds() - started
        started = threadCPUSeconds()
        let once = read("same", among: [4242, 4243])
        let largeSeconds = threadCPUSeconds() - started
        #expect(largeSeconds < max(30 * smallSeconds, 0.2))
        #expect(small == once)
        guard case .found(let addresses, let more) = found else {
            Issue.record("\(found)")
            return
        }
        #expect(addresses.count == 8 && more)
        #expect(addresses.first == ListenAddress(host: "127.0.0.0", port: 0x2623))
        let two = [ListenAddress(host: "127.0.0.1", port: 0x2623), ListenAddress(host: "127.0.0.2", port: 0x2623)]
        #expect(once == .found(two, more: false))
        #expect(read("none", among: [4242]) == .unreadable)
    }

    /// The look through /proc is part of the check's timeout: past the deadline it stops and says where it was.
    @Test func theScanStopsAtTheDeadline() throws {
        let listener = try StubListener(accepting: false)
        defer { listener.close() }
        let past = ContinuousClock.now - .seconds(1)
        #expect(ListeningSockets.scan(until: past).unfinished == "looking through /proc for the exporter's processes")
        #expect(ListeningSockets.socketInodes(of: getpid(), until: past) == nil)
        #expect(ListeningSockets.listening(readingFrom: [getpid()], among: [1], until: past) == nil)
        // A timeout of 1 ns has passed before the scan reads its first /proc entry (a stat of
        // /proc/self/exe comes first), so the check's own deadline must stop the scan; a longer one
        // is a race: an idle machine scans a small /proc within a millisecond.
        let check = HealthCheck(addresses: [], tls: nil, timeout: .nanoseconds(1))
        let started = monotonicSeconds()
        let (status, line) = check.run()
        #expect(status == 1)
        #expect(line.contains("timeout passed while looking through /proc"), "\(line)")
        // The words above say the deadline stopped it; this only guards against a hang, with room
        // for a machine so busy that a thread waits seconds for a core.
        #expect(monotonicSeconds() - started < 20)
    }

    /// The decision of where to ask, from what a scan found.
    @Test func exportersInAnotherNetworkNamespaceAreAskedThereOwnFirst() {
        let own = ListeningSockets.NamespaceID(device: 4, inode: 4_026_531_840)
        let other = ListeningSockets.NamespaceID(device: 4, inode: 4_026_532_999)
        let here = ListenAddress(host: "127.0.0.1", port: 9755)
        let there = ListenAddress(host: "127.0.0.1", port: 9800)
        let away = ListeningSockets.Namespace(id: other, pids: [20, 21], addresses: [there])
        var scan = ListeningSockets.Scan(own: own, processes: [10, 20, 21])
        scan.namespaces = [away, ListeningSockets.Namespace(id: own, pids: [10], addresses: [here])]
        let (groups, note) = HealthCheck.plan(scan)
        #expect(groups == [.init(addresses: [here]), .init(namespace: away, addresses: [there])])
        #expect(note == "")
        // Its own namespace unknown, no address is taken for one here.
        scan.own = nil
        #expect(HealthCheck.plan(scan).groups.allSatisfy { $0.namespace != nil })
        scan.truncated = true
        #expect(HealthCheck.plan(scan).note == " (more than 8 listening sockets in /proc: the first 8 asked)")
        // None listening: the default address, here, saying why.
        let idle = ListeningSockets.Scan(own: own, processes: Array(1...20))
        #expect(HealthCheck.plan(idle).groups == [.init(addresses: [ListenAddress(host: "127.0.0.1", port: 9755)])])
        #expect(
            HealthCheck.plan(idle).note
                == " (process 1, 2, 3, 4, 5, 6, 7, 8 and 12 more listens on no TCP port in /proc, "
                + "so the default address)"
        )
        #expect(
            HealthCheck.plan(ListeningSockets.Scan(own: own)).note
                == " (no other openweather-exporter process in /proc, so the default address)")
    }

    @Test func theLineIsCutToWhatDockerKeeps() {
        let failure = "GET http://127.0.0.1:1/-/healthy: refused ü; "
        let cut = HealthCheck.bounded("healthcheck: unhealthy: " + String(repeating: failure, count: 200))
        #expect(cut.utf8.count <= HealthCheck.maxLineBytes && cut.utf8.count > HealthCheck.maxLineBytes - 64)
        #expect(cut.hasSuffix(" ... (cut)") && cut.hasPrefix("healthcheck: unhealthy: GET"))
        #expect(HealthCheck.bounded("short") == "short")
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
    /// `port` 0: any free one.
    init(accepting: Bool, answer: [UInt8] = [], port: UInt16 = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
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
        self.port = UInt16(bigEndian: address.sin_port)
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
            addresses: [ListenAddress(host: "127.0.0.1", port: running.port)], tls: nil, timeout: .seconds(4)
        ).run()
        #expect(status == 0)
        #expect(line == "healthcheck: GET http://127.0.0.1:\(running.port)/-/healthy answered 200")
        // The wildcard host, as --web.listen-address=:PORT gives it, is asked on the loopback.
        #expect(
            HealthCheck(addresses: [ListenAddress(host: "", port: running.port)], tls: false, timeout: .seconds(4))
                .run()
                .status == 0)
    }

    /// Of an exporter on two addresses, the one not answering is passed over for the next.
    @Test func anyOfTheAddressesGivenWillDo() throws {
        let running = try ExporterWebTests.Running(extra: ["--web.listen-address=127.0.0.1:0"])
        defer { running.stop() }
        let listener = try StubListener(accepting: false)
        let refused = listener.port
        listener.close()
        let ports = running.exporter.addresses.compactMap { $0.split(separator: ":").last.flatMap { UInt16($0) } }
        #expect(ports.count == 2)
        for port in ports {
            let (status, line) = HealthCheck(
                addresses: [ListenAddress(host: "127.0.0.1", port: refused), ListenAddress(host: "", port: port)],
                tls: false, timeout: .seconds(4)
            ).run()
            #expect(status == 0, "\(line)")
            #expect(line == "healthcheck: GET http://127.0.0.1:\(port)/-/healthy answered 200")
        }
    }

    @Test func nothingListeningIsOneAndSaysRefused() throws {
        let listener = try StubListener(accepting: false)
        let port = listener.port
        listener.close()
        let (status, line) = HealthCheck(
            addresses: [ListenAddress(host: "127.0.0.1", port: port)], tls: nil, timeout: .seconds(4)
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
            addresses: [ListenAddress(host: "127.0.0.1", port: port)], tls: nil, timeout: .seconds(4)
        ).run()
        #expect(status == 1)
        #expect(line.contains("GET http://127.0.0.1:\(port)/-/healthy answered 404"), "\(line)")
    }

    @Test func hungServerIsOneWithinTheTimeout() throws {
        let listener = try StubListener(accepting: false)
        defer { listener.close() }
        let started = monotonicSeconds()
        let (status, line) = HealthCheck(
            addresses: [ListenAddress(host: "127.0.0.1", port: listener.port)], tls: nil, timeout: .milliseconds(500)
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
            addresses: [ListenAddress(host: "127.0.0.1", port: listener.port)], tls: nil, timeout: .seconds(4)
        ).run()
        #expect(status == 1)
        #expect(line.contains("GET http://127.0.0.1:\(listener.port)/-/healthy: malformed response"), "\(line)")
        // Not HTTP: perhaps TLS, so https was tried as well, and failed.
        #expect(line.contains("GET https://127.0.0.1:\(listener.port)/-/healthy: "), "\(line)")
        let plainOnly = HealthCheck(
            addresses: [ListenAddress(host: "127.0.0.1", port: listener.port)], tls: false, timeout: .seconds(4)
        ).run()
        #expect(plainOnly.status == 1 && !plainOnly.line.contains("https"), "\(plainOnly.line)")
    }

    static func answer(_ status: String) -> [UInt8] {
        Array("HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
    }

    /// Issue 38: the address an exporter in another network namespace listens on was asked in the
    /// check's own, where something else answered 200 for an exporter that was not healthy, and nothing
    /// answered for one that was. It is asked inside the exporter's namespace now.
    @Test(.enabled(if: NetworkNamespaceThread.available, "making and entering a network namespace needs CAP_SYS_ADMIN"))
    func anExporterInAnotherNetworkNamespaceIsAskedThere() throws {
        // Here, something else answers 200 on the port the sick exporter there listens on.
        let decoy = try StubListener(accepting: true, answer: Self.answer("200 OK"))
        defer { decoy.close() }
        let port = decoy.port
        let listeners = Locked<[StubListener]>([])
        let away = try #require(
            NetworkNamespaceThread {
                for (status, port) in [("503 Service Unavailable", port), ("200 OK", 0)] {
                    if let listener = try? StubListener(accepting: true, answer: Self.answer(status), port: port) {
                        listeners.withLock { $0.append(listener) }
                    }
                }
            })
        defer {
            away.release()
            listeners.withLock { all in
                for listener in all { listener.close() }
            }
        }
        let ports = listeners.withLock { $0.map(\.port) }
        try #require(ports.count == 2 && ports[0] == port)
        let id = try #require(ListeningSockets.NamespaceID(of: "/proc/\(away.tid)/ns/net"))
        #expect(id != ListeningSockets.NamespaceID.current())
        let check = HealthCheck(addresses: [], tls: false, timeout: .seconds(10))
        func ask(_ port: UInt16, through pids: [Int32]) -> (status: Int32, line: String) {
            let address = ListenAddress(host: "127.0.0.1", port: port)
            let found = ListeningSockets.Namespace(id: id, pids: pids, addresses: [address])
            let groups = HealthCheck.plan(ListeningSockets.Scan(processes: pids, namespaces: [found])).groups
            return check.ask(groups, until: .now + .seconds(10), note: "")
        }
        let sick = ask(port, through: [away.tid])
        #expect(sick.status == 1, "\(sick.line)")
        let within = "(in the network namespace of process \(away.tid))"
        #expect(sick.line.contains("GET http://127.0.0.1:\(port)/-/healthy \(within) answered 503"), "\(sick.line)")
        let well = ask(ports[1], through: [away.tid])
        #expect(well.status == 0, "\(well.line)")
        #expect(well.line == "healthcheck: GET http://127.0.0.1:\(ports[1])/-/healthy \(within) answered 200")
        // The number now names a process in another namespace (this one): not entered, and not asked here.
        let gone = ask(port, through: [getpid()])
        #expect(gone.status == 1, "\(gone.line)")
        let refused = "listens in another network namespace (net:[\(id.inode)]), which this check cannot enter"
        #expect(gone.line.contains(refused), "\(gone.line)")
    }

    /// A namespace the check cannot enter is never asked in its own instead: it refuses to judge, saying why.
    @Test func aNamespaceThatCannotBeEnteredIsNotAskedHere() throws {
        let decoy = try StubListener(accepting: true, answer: Self.answer("200 OK"))
        defer { decoy.close() }
        let elsewhere = ListeningSockets.Namespace(
            id: ListeningSockets.NamespaceID(device: 0, inode: 1), pids: [getpid()],
            addresses: [ListenAddress(host: "127.0.0.1", port: decoy.port)])
        let groups = HealthCheck.plan(ListeningSockets.Scan(processes: [getpid()], namespaces: [elsewhere])).groups
        let check = HealthCheck(addresses: [], tls: nil, timeout: .seconds(10))
        let (status, line) = check.ask(groups, until: .now + .seconds(10), note: "")
        #expect(status == 1)
        #expect(
            line == "healthcheck: unhealthy: process \(getpid()) listens in another network namespace (net:[1]), "
                + "which this check cannot enter (its processes have exited): run the check in it (docker exec, "
                + "nsenter --net --target \(getpid()), ip netns exec) or give it --web.listen-address")
    }

    @Test func tlsAndBasicAuthThroughTheWebConfig() throws {
        let serving = try WebConfigServingTests()
        let hash = WebConfigTests.hash
        let dir = serving.directory(
            web:
                """
                tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n\
                  alice: \(hash)\n
                """
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
        let guessed = HealthCheck(addresses: [address], tls: nil, timeout: .seconds(4)).run()
        #expect(guessed.status == 0, "\(guessed.line)")
        #expect(guessed.line.contains("https://"))
        // Told wrong: plain only, which the TLS port refuses.
        #expect(HealthCheck(addresses: [address], tls: false, timeout: .seconds(4)).run().status == 1)
        // Basic auth still guards everything else.
        #expect(serving.curl(exporter.port, "") == "401")
        #expect(serving.curl(exporter.port, "", path: "/-/ready") == "401")
        #expect(serving.curl(exporter.port, "", path: "/-/healthy") == "200")
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
