import Glibc
import HTTPClient
import TestSupport
import Testing

extension HTTPClientTests {
    @Suite struct Resources {
        @Test func failingRequestsLeaveNoDescriptorsBehind() throws {
            let rounds = 40
            let refusedPort = try LoopbackHTTP.closedPort()
            let (silent, silentPort) = try LoopbackHTTP.listen(backlog: Int32(rounds + 8))
            defer { _ = close(silent) }
            // Each server waits for its next connection while the client makes the 7 other requests
            // of a round, which on a busy machine under a sanitizer can take longer than the default
            // wait: a server that stopped early would turn its failures into refused connections.
            let wait = Duration.seconds(120)
            let garbage = try ScriptedServer(
                [.readRequest, .send("garbage\r\n\r\n")], connections: rounds, acceptWait: wait)
            let truncated = try ScriptedServer(
                [.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc")], connections: rounds,
                acceptWait: wait)
            let plain = try ScriptedServer(
                [.readAny, .send("HTTP/1.1 400 Bad Request\r\n\r\n")], connections: rounds, acceptWait: wait)
            let huge = try ScriptedServer(
                [.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 99999\r\n\r\n")], connections: rounds,
                acceptWait: wait)
            let ports: Set<UInt16> = [refusedPort, silentPort, garbage.port, truncated.port, plain.port, huge.port]
            // Warm up once so lazily created process-wide state is not counted as a leak.
            _ = failure(of: HTTPClientRequest(url: try url(refusedPort, scheme: "https"), timeout: .seconds(2)))
            let before = socketCount(ports: ports)
            var kinds: [String: Int] = [:]
            // 8 kinds of failure x 40 rounds = 320 failing requests.
            for _ in 0..<rounds {
                let requests = [
                    HTTPClientRequest(url: try url(refusedPort), headers: [("X-Key", "a\r\nInjected: \(secret)")]),
                    HTTPClientRequest(url: try url(refusedPort), timeout: .seconds(2)),
                    HTTPClientRequest(url: try url(silentPort), timeout: .milliseconds(10)),
                    HTTPClientRequest(url: try url(garbage.port), timeout: .seconds(2)),
                    HTTPClientRequest(url: try url(truncated.port), timeout: .seconds(2)),
                    HTTPClientRequest(url: try url(plain.port, scheme: "https"), timeout: .seconds(2)),
                    HTTPClientRequest(url: try url(huge.port), timeout: .seconds(2), maxBodyBytes: 10),
                    HTTPClientRequest(url: try url(refusedPort, scheme: "https"), timeout: .seconds(2)),
                ]
                for request in requests {
                    if let error = failure(of: request) { kinds[error.kind, default: 0] += 1 }
                }
            }
            for server in [garbage, truncated, plain, huge] { server.finish() }

            #expect(kinds.values.reduce(0, +) == rounds * 8)
            #expect(Set(kinds.keys) == ["invalid_url", "connect", "timeout", "decode", "tls"])
            // A leak here would add one socket per failing request (320). Other suites run in
            // parallel in this process with sockets of their own (43 more than before, once, under
            // ThreadSanitizer): only the sockets that can be this test's are counted.
            let after = socketCount(ports: ports)
            #expect(abs(after - before) <= 40, "before \(before), after \(after)")
        }

        /// This process's sockets that can be this test's (the client only opens TCP sockets): those
        /// with a local or remote port in `ports`, and those in no TCP table at all (never connected,
        /// or refused: what a failed connect leaves behind).
        private func socketCount(ports: Set<UInt16>) -> Int {
            var others = Set<String>()
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
                guard let file = fopen(table, "r") else { continue }
                defer { fclose(file) }
                var line = [CChar](repeating: 0, count: 512)
                while fgets(&line, Int32(line.count), file) != nil {
                    let fields = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                        .split(separator: " ")
                    guard fields.count > 9,
                        let local = fields[1].split(separator: ":").last.flatMap({ UInt16($0, radix: 16) }),
                        let remote = fields[2].split(separator: ":").last.flatMap({ UInt16($0, radix: 16) })
                    else { continue }
                    if !ports.contains(local) && !ports.contains(remote) { others.insert(String(fields[9])) }
                }
            }
            guard let directory = opendir("/proc/self/fd") else { return -1 }
            defer { closedir(directory) }
            var count = 0
            var target = [CChar](repeating: 0, count: 256)
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                let length = readlink("/proc/self/fd/" + name, &target, target.count - 1)
                guard length > 0 else { continue }
                let link = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                guard link.hasPrefix("socket:["), link.hasSuffix("]") else { continue }
                if !others.contains(String(link.dropFirst(8).dropLast())) { count += 1 }
            }
            return count
        }
    }
}
