import Dispatch
import Locking
import Platform
import Synchronization
import Testing

@testable import HTTPClient

extension HTTPClientTests {
    /// The resolver with a lookup that hangs on cue: getaddrinfo stuck on a dead DNS server behaves
    /// the same way (blocks, cannot be interrupted). The real getaddrinfo is hung in the end-to-end
    /// test with an LD_PRELOAD shim.
    @Suite struct Resolution {
        /// Names under `hang.test` block until the gate opens; others resolve to 127.0.0.1.
        final class FakeDNS: Sendable {
            let gate = DispatchSemaphore(value: 0)
            let calls = Locked<[String]>([])
            let hanging = Locked<Set<String>>([])

            var lookup: Resolver.Lookup {
                { [self] host in
                    calls.withLock { $0.append(host) }
                    if hanging.withLock({ $0.contains(host) }) || host.hasSuffix("hang.test") {
                        gate.wait()
                        gate.signal()
                    }
                    return .success([Resolver.literal("127.0.0.1")!])
                }
            }

            func release() { gate.signal() }
        }

        @Test func hungLookupEndsAtTheDeadlineAsDNS() throws {
            let dns = FakeDNS()
            defer { dns.release() }
            let resolver = Resolver(lookup: dns.lookup)
            let start = ContinuousClock.now
            #expect(throws: HTTPClientError.dns(host: "api.hang.test", "no answer before the request's deadline")) {
                try resolver.resolve("api.hang.test", deadline: Deadline(after: .milliseconds(200)))
            }
            let took = ContinuousClock.now - start
            // At the deadline, not before; the ceiling only says it does not hang (a busy machine's room).
            #expect(took >= .milliseconds(190) && took < .seconds(10), "\(took)")
        }

        @Test func manyRequestsForAHungNameCostOneThreadAndOneLookup() throws {
            let dns = FakeDNS()
            defer { dns.release() }
            let resolver = Resolver(lookup: dns.lookup, maxThreads: 4)
            let group = DispatchGroup()
            let failures = Atomic<Int>(0)
            // Threads of their own: Dispatch would run the 64 waits a few at a time.
            for _ in 0..<64 {
                group.enter()
                Threads.spawn(name: "test client") {
                    do throws(HTTPClientError) {
                        _ = try resolver.resolve("api.hang.test", deadline: Deadline(after: .milliseconds(300)))
                    } catch {
                        if error.kind == "dns" { failures.add(1, ordering: .relaxed) }
                    }
                    group.leave()
                }
            }
            #expect(group.wait(timeout: .now() + .seconds(20)) == .success)
            #expect(failures.load(ordering: .relaxed) == 64)
            #expect(dns.calls.withLock { $0 } == ["api.hang.test"])
            #expect(resolver.threadCount == 1)
        }

        @Test func otherNamesResolveWhileOneHangsAndThreadsStayBounded() throws {
            let dns = FakeDNS()
            defer { dns.release() }
            let resolver = Resolver(lookup: dns.lookup, maxThreads: 3)
            // Five hung names: three fill every lookup thread, two wait in the queue.
            for n in 0..<5 {
                #expect(throws: HTTPClientError.self) {
                    try resolver.resolve("n\(n).hang.test", deadline: Deadline(after: .milliseconds(20)))
                }
            }
            #expect(resolver.threadCount == 3)
            // All threads stuck: a new name waits, and fails at its deadline, never hangs.
            #expect(throws: HTTPClientError.self) {
                try resolver.resolve("fresh.example", deadline: Deadline(after: .milliseconds(50)))
            }
            #expect(resolver.threadCount == 3)
        }

        @Test func resolvedNamesKeepWorkingWhenTheResolverHangs() throws {
            let dns = FakeDNS()
            defer { dns.release() }
            // Answers go stale at once here, so every call after the first asks for a refresh.
            let resolver = Resolver(lookup: dns.lookup, ttl: .zero, staleFor: .seconds(600))
            #expect(
                try resolver.resolve("api.example", deadline: Deadline(after: .seconds(5))) == [
                    Resolver.literal("127.0.0.1")!
                ])
            dns.hanging.withLock { _ = $0.insert("api.example") }
            // The stale answer at once, never a wait for the hung refresh: well under the 30 s deadline
            // whatever the machine's load.
            for _ in 0..<20 {
                let start = ContinuousClock.now
                #expect(try resolver.resolve("api.example", deadline: Deadline(after: .seconds(30))).count == 1)
                #expect(ContinuousClock.now - start < .seconds(10))
            }
            #expect(resolver.threadCount == 1)
        }

        @Test func cachedAnswersAreNotAskedAgain() throws {
            let dns = FakeDNS()
            let resolver = Resolver(lookup: dns.lookup)
            for _ in 0..<10 { _ = try resolver.resolve("api.example", deadline: Deadline(after: .seconds(5))) }
            #expect(dns.calls.withLock { $0 } == ["api.example"])
        }

        @Test func clientRequestToAHungNameFailsAsDNSWithinItsTimeout() throws {
            let dns = FakeDNS()
            defer { dns.release() }
            let server = try KeepAliveServer()
            defer { server.stop() }
            let client = HTTPClient(configuration: .init(), resolver: Resolver(lookup: dns.lookup))
            let start = ContinuousClock.now
            let error = failure(
                of: HTTPClientRequest(url: try url(server.port, host: "api.hang.test"), timeout: .milliseconds(300)),
                client: client)
            #expect(error?.kind == "dns")
            #expect(ContinuousClock.now - start < .seconds(10))
            // The same client reaches a name that resolves.
            #expect(
                try client.get(HTTPClientRequest(url: try url(server.port, host: "api.example"), timeout: .seconds(5)))
                    .status == 200)
        }
    }
}
