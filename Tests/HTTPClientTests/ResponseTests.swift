import HTTPClient
import Testing

extension HTTPClientTests {
    @Suite struct Responses {
        @Test func contentLengthBodyAndRequestHead() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"),
                .holdOpen,
            ])
            let response = try HTTPClient().get(
                HTTPClientRequest(
                    url: try url(server.port, path: "/data/2.5/weather?lat=1&lon=2&appid=\(secret)#fragment"),
                    timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 200)
            #expect(response.body == Array("{\"ok\":true}".utf8))
            #expect(response.header("content-type") == "application/json")

            let head = try #require(server.receivedRequests.first)
            #expect(head.hasPrefix("GET /data/2.5/weather?lat=1&lon=2&appid=\(secret) HTTP/1.1\r\n"))
            #expect(head.contains("\r\nHost: 127.0.0.1:\(server.port)\r\n"))
            #expect(head.contains("\r\nUser-Agent: openweather-exporter\r\n"))
            #expect(head.contains("\r\nAccept-Encoding: identity\r\n"))
            // HTTP/1.1 keeps the connection by default: no Connection header at all.
            #expect(!head.lowercased().contains("\r\nconnection:"))
            #expect(head.hasSuffix("\r\n\r\n"))
        }

        @Test func callerHeadersAreSentAndUserAgentReplaced() throws {
            let server = try ScriptedServer([.readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")])
            let request = HTTPClientRequest(
                url: try url(server.port),
                headers: [("User-Agent", "probe/2"), ("X-Trace", "abc"), ("Connection", "keep-alive")],
                timeout: .seconds(5)
            )
            _ = try HTTPClient(userAgent: "default/1").get(request)
            server.finish()
            let head = try #require(server.receivedRequests.first)
            #expect(head.contains("\r\nUser-Agent: probe/2\r\n"))
            #expect(!head.contains("default/1"))
            #expect(head.contains("\r\nX-Trace: abc\r\n"))
            #expect(!head.contains("keep-alive"))
        }

        @Test func chunkedBodyWithExtensionsAndTrailers() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhel"),
                .pause(.milliseconds(20)),
                .send("lo\r\n7 ; other\r\n, world\r\nA\r\n0123456789\r\n"),
                .pause(.milliseconds(20)),
                .send("0\r\nX-Trailer: yes\r\nX-Other: 1\r\n\r\n"),
                .holdOpen,
            ])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "hello, world0123456789")
        }

        /// Leading zeros, upper-case digits and whitespace before `;` are inside the grammar.
        @Test func chunkSizesInsideTheGrammar() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000000003\r\nabc\r\n"
                        + "B\t;ext=\"x y\"\r\n0123456789A\r\n000;last\r\n\r\n"),
                .holdOpen,
            ])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(String(decoding: response.body, as: UTF8.self) == "abc0123456789A")
        }

        @Test func bodyUntilCloseWithoutFraming() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part, "),
                .pause(.milliseconds(20)),
                .send("second part"),
            ])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(String(decoding: response.body, as: UTF8.self) == "first part, second part")
        }

        @Test func headerNamesLowercasedValuesKept() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send(
                    """
                    HTTP/1.1 200 OK\r\nX-Custom-Header:   Mixed Case Value  \r\nSET-COOKIE: a=1\r\nset-cookie: b=2\r\n\
                    Content-Length: 0\r\n\r\n
                    """
                ),
            ])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(response.header("x-custom-header") == "Mixed Case Value")
            #expect(response.headers.filter { $0.name == "set-cookie" }.map(\.value) == ["a=1", "b=2"])
            #expect(response.headers.allSatisfy { $0.name == $0.name.lowercased() })
        }

        @Test func interimResponsesSkipped() throws {
            let server = try ScriptedServer([
                .readRequest,
                .send("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n"),
                .send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
            ])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 200)
            #expect(response.header("link") == nil)
            #expect(response.body == Array("ok".utf8))
        }

        @Test func errorStatusIsAResponse() throws {
            let json = #"{"cod":"404","message":"city not found"}"#
            let server = try ScriptedServer([
                .readRequest,
                .send(
                    """
                    HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\
                    \r\n\(json)
                    """
                ),
            ])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 404)
            #expect(String(decoding: response.body, as: UTF8.self) == json)
        }

        @Test func noContentHasNoBodyEvenIfTheServerStaysOpen() throws {
            let server = try ScriptedServer([.readRequest, .send("HTTP/1.1 204 No Content\r\n\r\n"), .holdOpen])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 204)
            #expect(response.body.isEmpty)
        }

        @Test func bareLineFeedsAndHTTP10Accepted() throws {
            let server = try ScriptedServer([.readRequest, .send("HTTP/1.0 200\nContent-Length: 3\n\nabc")])
            let response = try HTTPClient().get(HTTPClientRequest(url: try url(server.port), timeout: .seconds(5)))
            server.finish()
            #expect(response.status == 200)
            #expect(response.body == Array("abc".utf8))
        }

        @Test func bodyExactlyAtTheLimitIsAccepted() throws {
            let body = String(repeating: "x", count: 100)
            let server = try ScriptedServer([
                .readRequest, .send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n\(body)"),
            ])
            let response = try HTTPClient().get(
                HTTPClientRequest(url: try url(server.port), timeout: .seconds(5), maxBodyBytes: 100))
            server.finish()
            #expect(response.body.count == 100)
        }
    }
}
