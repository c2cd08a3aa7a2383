import Glibc
import TestSupport
import Testing

@testable import HTTPServer

/// Bodies kept in a sealed memfd and sent with sendfile (plain sockets) after the head and any chunks.
@Suite("HTTPServer kept bodies", .blocking)
struct KeptBodyTests {
    /// Bytes that differ at every offset within a page and from page to page, so a misplaced range shows.
    static func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                buffer[index] = UInt8(truncatingIfNeeded: (index &+ seed) &* 31 &+ (index &+ seed) >> 12)
            }
            initialized = count
        }
    }

    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    @Test func holdsTheChunksInOrderSealedAgainstWrites() throws {
        let chunks = [Self.pattern(70_001), [], Self.pattern(3, seed: 9), Self.pattern(200_000, seed: 5)]
        let kept = try #require(KeptBody(chunks))
        #expect(kept.count == 270_004)
        let holds = Self.same(kept.contents, chunks.flatMap { $0 })
        #expect(holds)
        // Pages still being sent must never change: the memfd refuses writes and resizes.
        var byte: UInt8 = 0
        #expect(pwrite(kept.fd, &byte, 1, 0) == -1 && errno == EPERM)
        #expect(ftruncate(kept.fd, 10) == -1 && errno == EPERM)
        let empty = try #require(KeptBody([]))
        #expect(empty.count == 0 && empty.contents.isEmpty)
    }

    /// A head chunk, the kept body behind it; the client reads slowly through a small receive buffer,
    /// so sendfile stops mid-body many times and resumes on EPOLLOUT. Three requests pipelined.
    @Test func aSlowReaderGetsEveryByteOfPipelinedKeptBodies() throws {
        let prefix = Array("prefix:".utf8)
        let kept = try #require(KeptBody([Self.pattern(6_000_000)]))
        let small = try #require(KeptBody([Self.pattern(300, seed: 7)]))
        let server = try startServer(handler: { request, responder in
            if request.path == "/small" {
                responder.respond(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], kept: small))
            } else {
                var response = HTTPResponse(status: 200, body: [prefix])
                response.kept = kept
                responder.respond(response)
            }
        })
        defer { server.shutdown() }
        let client = try TestClient(port: server.port, timeout: 20)
        // Small enough that 6 MB cannot fit in flight, large enough that loopback does not crawl.
        var window: Int32 = 64 * 1024
        setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &window, socklen_t(MemoryLayout<Int32>.size))
        client.send(request("/big") + request("/small") + request("/big"))
        usleep(100_000)  // the socket fills while nobody reads: the server's writes stop part way
        let expected = prefix + kept.contents
        for path in ["/big", "/small", "/big"] {
            let response = try #require(client.readResponse(), "no response to \(path)")
            #expect(response.status == 200)
            if path == "/small" {
                #expect(response.body == small.contents)
                #expect(response.header("content-type") == "text/plain")
            } else {
                #expect(response.header("content-length") == String(expected.count))
                let equal = Self.same(response.body, expected)
                #expect(equal, "the body of \(path) differs")
            }
        }
        #expect(!client.hasBufferedBytes)
    }

    @Test func headAnnouncesTheKeptLengthAndSendsNothing() throws {
        let kept = try #require(KeptBody([Self.pattern(100_000)]))
        let server = try startServer(handler: { _, responder in
            responder.respond(HTTPResponse(status: 200, kept: kept))
        })
        defer { server.shutdown() }
        let client = try TestClient(port: server.port)
        client.send(request("/", method: "HEAD"))
        let head = try #require(client.readResponse(head: true))
        #expect(head.header("content-length") == "100000")
        // Had the body been sent, it would be read here as the start of this response.
        client.send(request("/"))
        let get = try #require(client.readResponse())
        let equal = Self.same(get.body, kept.contents)
        #expect(equal)
    }

    /// sendfile cannot be told MSG_NOSIGNAL: a client gone mid-body must cost its connection, not the
    /// process (a SIGPIPE would end this test run), and the next client is served.
    @Test func aClientGoneMidBodyIsClosedAndOthersAreServed() throws {
        let kept = try #require(KeptBody([Self.pattern(8_000_000)]))
        let server = try startServer(
            { $0.eventLoops = 1 },
            handler: { _, responder in
                responder.respond(HTTPResponse(status: 200, kept: kept))
            })
        defer { server.shutdown() }
        for _ in 0..<3 {
            let gone = try TestClient(port: server.port)
            var tiny: Int32 = 4096
            setsockopt(gone.fd, SOL_SOCKET, SO_RCVBUF, &tiny, socklen_t(MemoryLayout<Int32>.size))
            gone.send(request("/"))
            var byte: UInt8 = 0
            #expect(recv(gone.fd, &byte, 1, 0) == 1)
            gone.abort()
        }
        let client = try TestClient(port: server.port, timeout: 20)
        client.send(request("/"))
        let response = try #require(client.readResponse())
        let equal = Self.same(response.body, kept.contents)
        #expect(equal)
    }

    @Test func aClientThatStopsReadingAKeptBodyIsClosedAtTheWriteTimeout() throws {
        let kept = try #require(KeptBody([Self.pattern(16 * 1024 * 1024)]))
        try HTTPServerLimitTests.checkClosedAtTheWriteTimeout { HTTPResponse(status: 200, kept: kept) }
    }
}
