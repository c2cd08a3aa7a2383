import Dispatch
import Encoding
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import Exporter
@testable import HTTPServer

/// Basic auth under a flood of wrong passwords: a password seen before is answered at once, bcrypt work
/// is bounded, and nothing is checked for a client that has left. Through a real server and web config.
@Suite(.blocking) struct AuthFloodTests {
    struct Routes: HTTPHandler {
        func handle(_ request: HTTPRequest, responder: HTTPResponder) {
            responder.respond(HTTPResponse(status: 200, headers: [], body: [Array("ok".utf8)]))
        }
    }

    static let hash = shell("htpasswd -nbBC 4 '' right | tr -d ':\\n'").output

    /// A web config at a fresh path, the security built from it, and a server in front of `Routes`.
    func serve(
        _ web: String, checks: BcryptQueue = BcryptQueue(limit: 16, perPeer: 2)
    ) throws -> (HTTPServer, WebSecurity, String) {
        let path = "/tmp/owe-auth-\(UInt64.random(in: 0...UInt64.max)).yml"
        write(web, to: path)
        let security = try WebSecurity(path: path, logger: Logger(level: .error, secrets: [], sink: { _ in }))
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.eventLoops = 1
        let server = try HTTPServer(
            configuration: configuration,
            handler: AuthenticatingHandler(routes: Routes(), web: security, checks: checks))
        server.start()
        return (server, security, path)
    }

    func write(_ text: String, to path: String) {
        let handle = fopen(path + ".new", "w")!
        fputs(text, handle)
        fclose(handle)
        rename(path + ".new", path)
    }

    /// A connection with one request sent; reads give up after `timeout` seconds.
    func send(
        _ port: UInt16, user: String, password: String, from source: String = "127.0.0.1", timeout: Double = 1
    ) throws -> Int32 {
        let fd = try LoopbackHTTP.connect(port: port, source: source, timeoutSeconds: timeout)
        let credentials = Array("\(user):\(password)".utf8)
        try LoopbackHTTP.send(
            fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(Base64.encoded(credentials))\r\n\r\n")
        return fd
    }

    /// The status of the answer on `fd`, or nil when none came before its timeout.
    func status(_ fd: Int32) -> Int? {
        var buffer: [UInt8] = []
        while LoopbackHTTP.receive(fd, into: &buffer) {
            if let response = try? LoopbackResponse.take(from: &buffer) { return response.status }
        }
        return nil
    }

    /// The statuses of the answers on `fds` once `count` of them have answered (10 s at most), nil for
    /// those still waiting. Their reads should give up quickly: one that waits holds the others up.
    func statuses(_ fds: [Int32], count: Int) -> [Int?] {
        var buffers = [[UInt8]](repeating: [], count: fds.count)
        var statuses = [Int?](repeating: nil, count: fds.count)
        _ = waitUntil(seconds: 10) {
            for index in fds.indices where statuses[index] == nil {
                guard LoopbackHTTP.receive(fds[index], into: &buffers[index]) else { continue }
                statuses[index] = (try? LoopbackResponse.take(from: &buffers[index]))?.status
            }
            return statuses.count { $0 != nil } >= count
        }
        return statuses
    }

    /// 127.0.0.1 as the server names it.
    static let loopback = PeerAddress(high: 0, low: 0xffff_7f00_0001)
    /// An address no test connects from.
    static let elsewhere = PeerAddress(high: 0, low: 0xffff_0a00_0001)

    @Test func aKnownPasswordIsAnsweredAtOnceWhileWrongOnesQueueOrAreRefused() throws {
        let checks = BcryptQueue(limit: 3, perPeer: 3)
        let (server, web, path) = try serve("basic_auth_users:\n  prom: \"\(Self.hash)\"\n", checks: checks)
        defer {
            server.shutdown(gracePeriod: .zero)
            unlink(path)
        }
        let first = try send(server.port, user: "prom", password: "right", timeout: 10)
        #expect(status(first) == 200)
        close(first)

        // bcrypt busy: one check holds the queue, so two more fill it and the rest are refused at once.
        // It starts once the first check has left the queue (one at a time), so that one holds no place.
        let gate = DispatchSemaphore(value: 0)
        let busy = DispatchSemaphore(value: 0)
        #expect(
            checks.submit(from: Self.elsewhere) {
                busy.signal()
                gate.wait()
            })
        #expect(busy.wait(timeout: .now() + 10) == .success)
        // The two queued wait for bcrypt, which the gate holds: they cannot be answered before it opens.
        let wrong = try (0..<4).map { try send(server.port, user: "prom", password: "wrong\($0)", timeout: 0.1) }
        let answers = statuses(wrong, count: 2)
        try #require(answers.count { $0 == 401 } == 2 && answers.count { $0 == nil } == 2, "\(answers)")

        // Answered while bcrypt is still held: it did not wait behind the wrong ones.
        let known = try send(server.port, user: "prom", password: "right", timeout: 10)
        #expect(status(known) == 200, "a known password waited behind wrong ones")
        close(known)

        // One waiting client leaves: its check is skipped; the other's runs once bcrypt is free.
        let waiting = answers.indices.filter { answers[$0] == nil }
        let (leaver, stayer) = (waiting[0], waiting[1])
        Glibc.shutdown(wrong[leaver], Int32(SHUT_WR))
        // The server closes it while bcrypt is still held: an end of stream, not an answer.
        var read = -1
        let ended = waitUntil(seconds: 10) {
            var byte: UInt8 = 0
            read = recv(wrong[leaver], &byte, 1, 0)
            return read >= 0
        }
        #expect(ended && read == 0, "the server kept the connection of a client that left")
        gate.signal()
        var stayerBuffer: [UInt8] = []
        var stayerStatus: Int?
        _ = waitUntil(seconds: 10) {
            if LoopbackHTTP.receive(wrong[stayer], into: &stayerBuffer) {
                stayerStatus = (try? LoopbackResponse.take(from: &stayerBuffer))?.status
            }
            return stayerStatus != nil
        }
        #expect(stayerStatus == 401)
        #expect(web.auth().cached(user: "prom", password: "wrong\(stayer)") == false)
        #expect(
            web.auth().cached(user: "prom", password: "wrong\(leaver)") == nil, "a check ran for a client that had left"
        )
        for fd in wrong { close(fd) }
    }

    @Test func successesSurviveAFloodOfWrongPasswords() {
        let auth = BasicAuth(users: ["prom": Self.hash])
        #expect(auth.verify(user: "prom", password: "right"))
        for k in 0..<600 { _ = auth.verify(user: "prom", password: "wrong\(k)") }
        #expect(auth.cached(user: "prom", password: "right") == true, "wrong passwords pushed the right one out")
        #expect((0..<600).count { auth.cached(user: "prom", password: "wrong\($0)") != nil } <= BasicAuth.cacheSize)

        // A changed file keeps what it verified for users whose hash is the same, and only for them.
        let other = shell("htpasswd -nbBC 4 '' other | tr -d ':\\n'").output
        #expect(BasicAuth(users: ["prom": Self.hash], previous: auth).cached(user: "prom", password: "right") == true)
        #expect(BasicAuth(users: ["prom": other], previous: auth).cached(user: "prom", password: "right") == nil)
    }

    @Test func aFullQueueRefusesAtOnceAndTakesWorkAgainWhenItDrains() {
        let checks = BcryptQueue(limit: 3, perPeer: 2)
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        #expect(checks.submit(from: Self.loopback) { gate.wait() })
        #expect(checks.submit(from: Self.loopback) { done.signal() })
        #expect(!checks.submit(from: Self.loopback) {}, "one address held more than its share")
        #expect(checks.submit(from: Self.elsewhere) {})
        #expect(
            !checks.submit(from: PeerAddress(high: 0x2001_0db8_0000_0000, low: 1)) {},
            "the queue took more than its limit")
        gate.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(waitUntil(seconds: 5) { checks.submit(from: Self.loopback) {} })
    }

    /// A flood of wrong passwords from one address holds at most two places in the queue, so a scraper at
    /// another address whose password has not been seen yet (after a restart, or a changed hash) gets a
    /// place and its answer while the flood goes on, instead of 401 for as long as it lasts.
    @Test func aFloodFromOneAddressLeavesAPlaceForAScraperAtAnother() throws {
        let checks = BcryptQueue(limit: 16, perPeer: 2)
        let (server, _, path) = try serve("basic_auth_users:\n  prom: \"\(Self.hash)\"\n", checks: checks)
        defer {
            server.shutdown(gracePeriod: .zero)
            unlink(path)
        }
        // bcrypt busy with the flood's first check until the scraper has asked.
        let gate = DispatchSemaphore(value: 0)
        var released = false
        defer { if !released { gate.signal() } }
        #expect(checks.submit(from: Self.loopback) { gate.wait() })

        let port = server.port
        let stop = Atomic<Bool>(false)
        let sent = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        let flood = DispatchGroup()
        for _ in 0..<8 {
            DispatchQueue.global().async(group: flood) {
                while !stop.load(ordering: .relaxed) {
                    let n = sent.wrappingAdd(1, ordering: .relaxed).newValue
                    guard let fd = try? send(port, user: "prom", password: "wrong\(n)", timeout: 0.3) else { continue }
                    if status(fd) == 401 { refused.wrappingAdd(1, ordering: .relaxed) }
                    close(fd)
                }
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            flood.wait()
        }
        // Refusals come once the flood holds all it can: the whole queue without a share per address.
        try #require(waitUntil(seconds: 20) { refused.load(ordering: .relaxed) >= 40 })

        let refusedBefore = refused.load(ordering: .relaxed)
        let scraper = try send(port, user: "prom", password: "right", from: "127.0.0.2", timeout: 0.5)
        defer { close(scraper) }
        // More of the flood refused after the scraper asked; the scraper meanwhile waits for bcrypt.
        #expect(waitUntil(seconds: 20) { refused.load(ordering: .relaxed) > refusedBefore + 8 }, "the flood stopped")
        #expect(status(scraper) == nil, "refused: the flood from 127.0.0.1 held every place in the queue")
        var patience = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(scraper, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        gate.signal()
        released = true
        #expect(status(scraper) == 200)
    }

    /// exporter-toolkit's `rate_limit`: one bucket for the server, 429 past it; an unchanged reload keeps
    /// the bucket (a fresh one would hand out a new burst), removing it lifts the limit.
    @Test func rateLimitAnswers429AndKeepsItsBucketOverAReload() throws {
        let limited = "rate_limit:\n  interval: 1h\n  burst: 1\n"
        let (server, web, path) = try serve(limited)
        defer {
            server.shutdown(gracePeriod: .zero)
            unlink(path)
        }
        func get() throws -> Int { try LoopbackHTTP.request(port: server.port, path: "/metrics").status }
        #expect(try get() == 200)
        #expect(try get() == 429)
        #expect(web.reload() == nil)
        #expect(try get() == 429, "an unchanged reload handed out a new burst")
        write("http_server_config:\n  http2: true\n", to: path)
        #expect(web.reload() == nil)
        #expect(try get() == 200)
        #expect(try get() == 200)
    }

    @Test func theBucketIsFullAtStartAndRefillsOnePerInterval() throws {
        let limiter = try #require(RateLimiter(RateLimitConfiguration(interval: 1_000_000_000, burst: 3)))
        let t0: Int64 = 50_000_000_000
        #expect((0..<4).map { _ in limiter.allow(now: t0) } == [true, true, true, false])
        #expect(!limiter.allow(now: t0 + 999_999_999))
        #expect(limiter.allow(now: t0 + 1_000_000_000))
        #expect(!limiter.allow(now: t0 + 1_000_000_000))
        // A long quiet spell fills the bucket to its burst, no more.
        #expect((0..<4).map { _ in limiter.allow(now: t0 + 100_000_000_000) } == [true, true, true, false])
        #expect(RateLimiter(nil) == nil)
        #expect(RateLimiter(RateLimitConfiguration(interval: Int64.max, burst: Int.max))?.allow(now: t0) == true)
    }
}
