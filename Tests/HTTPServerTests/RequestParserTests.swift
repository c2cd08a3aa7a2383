import Testing

@testable import HTTPServer

@Suite("RequestParser")
struct RequestParserTests {
    func parse(_ text: String, limits: ParserLimits = ParserLimits()) -> ParseResult {
        RequestParser.parse(Array(text.utf8), limits: limits)
    }

    func complete(_ text: String, limits: ParserLimits = ParserLimits()) -> ParsedRequest? {
        if case .complete(let parsed) = parse(text, limits: limits) { return parsed }
        return nil
    }

    func status(_ text: String, limits: ParserLimits = ParserLimits()) -> Int? {
        if case .invalid(let error) = parse(text, limits: limits) { return error.status }
        return nil
    }

    @Test func parsesRequestLineHeadersPathAndQuery() throws {
        let text = "GET /metrics?a=1&b=2 HTTP/1.1\r\nHost: example\r\nX-Name:  spaced value \t\r\n\r\n"
        let parsed = try #require(complete(text))
        #expect(parsed.request.method == "GET")
        #expect(parsed.request.target == "/metrics?a=1&b=2")
        #expect(parsed.request.path == "/metrics")
        #expect(parsed.request.query == "a=1&b=2")
        #expect(parsed.request.version == .http11)
        #expect(parsed.request.header("x-name") == "spaced value")
        #expect(parsed.request.headers.map(\.name) == ["host", "x-name"])
        #expect(parsed.consumed == text.utf8.count)
        #expect(parsed.keepAlive)
        #expect(!parsed.isHead)
    }

    @Test func acceptsBareLineFeeds() throws {
        let parsed = try #require(complete("GET / HTTP/1.1\nHost: x\n\n"))
        #expect(parsed.request.header("host") == "x")
    }

    @Test func skipsEmptyLinesBeforeTheRequestLine() throws {
        let parsed = try #require(complete("\r\n\r\nGET /a HTTP/1.1\r\n\r\n"))
        #expect(parsed.request.path == "/a")
    }

    @Test func reducesAbsoluteFormToItsPath() throws {
        let parsed = try #require(complete("GET http://example.com:8080/x/y?q=1 HTTP/1.1\r\n\r\n"))
        #expect(parsed.request.path == "/x/y")
        #expect(parsed.request.query == "q=1")
        #expect(parsed.request.target == "http://example.com:8080/x/y?q=1")
        let bare = try #require(complete("GET HTTPS://example.com HTTP/1.1\r\n\r\n"))
        #expect(bare.request.path == "/")
    }

    @Test func acceptsAsteriskOnlyForOptions() {
        #expect(complete("OPTIONS * HTTP/1.1\r\n\r\n")?.request.path == "*")
        #expect(status("GET * HTTP/1.1\r\n\r\n") == 400)
    }

    @Test func keepAliveFollowsVersionAndConnectionHeader() {
        #expect(complete("GET / HTTP/1.1\r\n\r\n")?.keepAlive == true)
        #expect(complete("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")?.keepAlive == false)
        #expect(complete("GET / HTTP/1.0\r\n\r\n")?.keepAlive == false)
        #expect(complete("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")?.keepAlive == true)
        #expect(complete("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n")?.keepAlive == false)
    }

    @Test func readsABodyOfContentLengthAlsoOnGet() throws {
        let parsed = try #require(complete("GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET"))
        #expect(parsed.request.body == Array("hello".utf8))
        #expect(parsed.consumed == "GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello".utf8.count)
    }

    @Test func waitsForTheRestOfTheHeadAndBody() {
        guard case .incomplete(_, let need) = parse("GET / HTTP/1.1\r\nHost: x\r\n") else {
            Issue.record("expected incomplete head")
            return
        }
        #expect(need > 0)
        let head = "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n"
        guard case .incomplete(_, let needBody) = parse(head + "12345") else {
            Issue.record("expected incomplete body")
            return
        }
        #expect(needBody == head.utf8.count + 10)
    }

    @Test func resumesTheHeadScanWhereItStopped() throws {
        let text = Array("GET /resume HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var scanned = 0
        for end in 1...text.count {
            let result = text[0..<end].withUnsafeBytes {
                RequestParser.parse($0, limits: ParserLimits(), scanFrom: scanned)
            }
            switch result {
            case .incomplete(let resumeAt, _):
                #expect(end < text.count)
                scanned = resumeAt
            case .complete(let parsed):
                #expect(end == text.count)
                #expect(parsed.request.path == "/resume")
            case .invalid(let error):
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test(
        "malformed request lines are 400",
        arguments: [
            "GET\r\n\r\n",
            "GET /\r\n\r\n",
            "GET  / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1 \r\n\r\n",
            " GET / HTTP/1.1\r\n\r\n",
            "G(T / HTTP/1.1\r\n\r\n",
            "GET / http/1.1\r\n\r\n",
            "GET / HTTP/1\r\n\r\n",
            "GET / HTTP/1.10\r\n\r\n",
            "GET foo HTTP/1.1\r\n\r\n",
            "GET http:// HTTP/1.1\r\n\r\n",
            "GET /a\rb HTTP/1.1\r\n\r\n",
        ])
    func malformedRequestLine(_ text: String) {
        #expect(status(text) == 400)
    }

    @Test(
        "bad header fields are 400",
        arguments: [
            "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
            "GET / HTTP/1.1\r\n: x\r\n\r\n",
            "GET / HTTP/1.1\r\nNo-Colon\r\n\r\n",
            "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n",
            "GET / HTTP/1.1\r\nBad(Name): x\r\n\r\n",
            "GET / HTTP/1.1\r\nA: b\u{0}c\r\n\r\n",
            "GET /\u{0} HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nA: \u{7F}\r\n\r\n",
        ])
    func badHeaders(_ text: String) {
        #expect(status(text) == 400)
    }

    @Test func rejectsInvalidUTF8InTheTarget() {
        var bytes = Array("GET /".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(" HTTP/1.1\r\n\r\n".utf8)
        guard case .invalid(let error) = RequestParser.parse(bytes) else {
            Issue.record("expected invalid")
            return
        }
        #expect(error.status == 400)
        #expect(complete("GET /caf\u{E9} HTTP/1.1\r\n\r\n")?.request.path == "/caf\u{E9}")
    }

    @Test func unsupportedVersionsAre505() {
        #expect(status("GET / HTTP/2.0\r\n\r\n") == 505)
        #expect(status("GET / HTTP/0.9\r\n\r\n") == 505)
    }

    @Test func framingAttacksAreRefused() {
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc") == 400)
        #expect(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 501)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n") == 413)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 65537\r\n\r\n") == 413)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n") == 400)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n") == 400)
        #expect(status("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n") == 400)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab") == 400)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\nab") == 400)
        #expect(
            complete("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nab")?.request.body.count == 2)
    }

    @Test func limitsOnHeadSizeAndHeaderCount() {
        let limits = ParserLimits(maxHeadBytes: 1024, maxHeaderCount: 5, maxBodyBytes: 100)
        let longTarget = "GET /" + String(repeating: "a", count: 2000) + " HTTP/1.1\r\n\r\n"
        #expect(status(longTarget, limits: limits) == 414)
        let bigHeader = "GET / HTTP/1.1\r\nX: " + String(repeating: "b", count: 2000) + "\r\n\r\n"
        #expect(status(bigHeader, limits: limits) == 431)
        // Rejected before the head is complete: the limit does not wait for the terminator.
        #expect(status("GET / HTTP/1.1\r\nX: " + String(repeating: "b", count: 2000), limits: limits) == 431)
        let many = "GET / HTTP/1.1\r\n" + (0..<6).map { "H\($0): v\r\n" }.joined() + "\r\n"
        #expect(status(many, limits: limits) == 431)
        let five = "GET / HTTP/1.1\r\n" + (0..<5).map { "H\($0): v\r\n" }.joined() + "\r\n"
        #expect(complete(five, limits: limits) != nil)
        #expect(status("POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", limits: limits) == 413)
    }

    @Test func detectsHeadRequests() {
        #expect(complete("HEAD / HTTP/1.1\r\n\r\n")?.isHead == true)
        #expect(complete("HEADX / HTTP/1.1\r\n\r\n")?.isHead == false)
    }
}
