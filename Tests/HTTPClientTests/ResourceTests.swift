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
            // Warm up once so lazily created process-wide state is not counted as a leak.
            _ = failure(of: HTTPClientRequest(url: try url(refusedPort, scheme: "https"), timeout: .seconds(2)))
            let before = openDescriptorCount()

            let garbage = try ScriptedServer([.readRequest, .send("garbage\r\n\r\n")], connections: rounds)
            let truncated = try ScriptedServer([.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc")], connections: rounds)
            let plain = try ScriptedServer([.readAny, .send("HTTP/1.1 400 Bad Request\r\n\r\n")], connections: rounds)
            let huge = try ScriptedServer([.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 99999\r\n\r\n")], connections: rounds)
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
            // Other suites run in parallel in this process and open sockets of their own, so the
            // count may move by some; a leak here would add one per failing request (320).
            let after = openDescriptorCount()
            #expect(abs(after - before) <= 40, "before \(before), after \(after)")
        }

        private func openDescriptorCount() -> Int {
            guard let directory = opendir("/proc/self/fd") else { return -1 }
            defer { closedir(directory) }
            var count = 0
            while readdir(directory) != nil { count += 1 }
            return count
        }
    }
}
