import CTLS
import Glibc
import Locking
import TestSupport
import Testing

@testable import HTTPServer

/// TLS through the transport seam, driven by real clients (curl, openssl s_client).
@Suite("HTTPServer over TLS", .blocking)
struct TLSServerTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.shared.get()
    }

    func tlsServer(
        _ adjust: (inout TLSServerConfiguration) -> Void = { _ in },
        handler: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void = echo
    ) throws -> HTTPServer {
        var settings = TLSServerConfiguration(certFile: certificates.serverCert, keyFile: certificates.serverKey)
        adjust(&settings)
        let source = try TLSContextSource(settings)
        return try startServer({ $0.tls = source }, handler: handler)
    }

    func curl(_ port: UInt16, _ options: String = "", path: String = "/x") -> (status: Int32, output: String) {
        shell("curl -sS --max-time 10 --cacert '\(certificates.caFile)' \(options) https://127.0.0.1:\(port)\(path)")
    }

    @Test func servesRequestsOnOneKeptAliveConnection() throws {
        let server = try tlsServer()
        defer { server.shutdown() }
        let result = curl(server.port, "-w ' %{num_connects}\\n' https://127.0.0.1:\(server.port)/y?q=1")
        #expect(result.status == 0, "\(result.output)")
        // Two answers over a single connection (keep-alive), the second reusing it.
        #expect(result.output == "GET /y?q=1 0 1\nGET /x? 0 0\n", "\(result.output)")
    }

    @Test func largeResponsesAndRequestBodiesCrossManyRecords() throws {
        // Filled through a pointer and compared with memcmp: `map` and `==` over 12 MB took 2.5 s of
        // CPU in debug builds.
        let big = [UInt8](unsafeUninitializedCapacity: 12_000_000) { buffer, count in
            var index = 0
            while index < buffer.count {
                buffer[index] = UInt8(truncatingIfNeeded: index &* 7 &+ index >> 11)
                index += 1
            }
            count = buffer.count
        }
        func isBig(_ bytes: [UInt8]) -> Bool {
            bytes.count == big.count
                && bytes.withUnsafeBytes { a in
                    big.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
                }
        }
        let server = try tlsServer { settings in
            _ = settings
        } handler: { request, responder in
            if request.method == "POST" {
                responder.respond(HTTPResponse(status: 200, body: [Array(String(request.body.count).utf8)]))
            } else {
                // Several chunks of odd sizes: the head and small chunks coalesce, large ones go in 16 KiB records.
                responder.respond(
                    HTTPResponse(
                        status: 200, body: [Array(big[0..<7]), Array(big[7..<100_003]), Array(big[100_003...])]))
            }
        }
        defer { server.shutdown() }
        let file = certificates.directory + "/big.out"
        let result = curl(server.port, "-o '\(file)'")
        #expect(result.status == 0, "\(result.output)")
        #expect(isBig(try readFile(file)))
        // A client reading slowly fills the socket: writes stop on WANT_WRITE and resume, record by record.
        let slow = curl(server.port, "--limit-rate 6M -o '\(file)'")
        #expect(slow.status == 0, "\(slow.output)")
        #expect(isBig(try readFile(file)))
        let post = shell(
            """
            head -c 60000 /dev/zero | curl -sS --max-time 10 --cacert '\(certificates.caFile)' --data-binary @- \
            https://127.0.0.1:\(server.port)/p
            """
        )
        #expect(post.output == "60000", "\(post.output)")
    }

    /// TLS cannot sendfile: a kept body is read through its mapping, after the head and any chunks,
    /// in 16 KiB records, also when a slow reader stops the writes part way; HEAD sends no body.
    @Test func keptBodiesAreServedFromTheirMapping() throws {
        let bytes = KeptBodyTests.pattern(10_000_000)
        let kept = try #require(KeptBody([bytes]))
        let server = try tlsServer(handler: { _, responder in
            var response = HTTPResponse(status: 200, body: [Array("head".utf8)])
            response.kept = kept
            responder.respond(response)
        })
        defer { server.shutdown() }
        let file = certificates.directory + "/kept.out"
        let expected = Array("head".utf8) + bytes
        for options in ["", "--limit-rate 20M"] {
            let result = curl(server.port, "\(options) -o '\(file)'")
            #expect(result.status == 0, "\(result.output)")
            let equal = KeptBodyTests.same(try readFile(file), expected)
            #expect(equal, "the body differs (\(options))")
        }
        // HEAD, then GET on the same connection: a body sent after the HEAD would break the GET's framing.
        let ca = "--cacert '\(certificates.caFile)'"
        let both = shell(
            """
            curl -sS --max-time 10 \(ca) -I https://127.0.0.1:\(server.port)/h --next -sS --max-time 10 \(ca) -o \
            '\(file)' -w '%{num_connects}' https://127.0.0.1:\(server.port)/g
            """
        )
        #expect(both.status == 0, "\(both.output)")
        #expect(both.output.lowercased().contains("content-length: \(expected.count)"), "\(both.output)")
        #expect(both.output.hasSuffix("0"), "the GET did not reuse the HEAD's connection: \(both.output)")
        let equal = KeptBodyTests.same(try readFile(file), expected)
        #expect(equal, "the body after a HEAD differs")
    }

    @Test func refusesTLS11ByDefault() throws {
        let server = try tlsServer()
        defer { server.shutdown() }
        // The client allows TLS 1.1 (security level 0), so the refusal is the server's protocol_version alert.
        let old = shell(
            """
            echo | openssl s_client -connect 127.0.0.1:\(server.port) -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' -CAfile \
            '\(certificates.caFile)'
            """,
            timeout: 20)
        #expect(old.status != 0 && old.output.contains("alert protocol version"), "\(old.output)")
        // ...and still serves afterwards.
        #expect(curl(server.port).output == "GET /x? 0")
    }

    /// As Go's server: plain HTTP on the TLS port gets a plain 400 saying why, then the end of the stream.
    @Test func plainHTTPGetsGosAnswer() throws {
        let server = try tlsServer()
        defer { server.shutdown() }
        for method in ["GET", "POST", "HEAD", "PUT"] {
            let client = try TestClient(port: server.port)
            client.send(request("/metrics", method: method))
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 {
                    #expect(n == 0, "\(method): no end of stream, errno \(errno)")
                    break
                }
                received += chunk[..<n]
            }
            #expect(
                String(decoding: received, as: UTF8.self)
                    == "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n", "\(method)")
        }
        let plain = shell("curl -sS --max-time 5 -w ' %{http_code}' http://127.0.0.1:\(server.port)/x")
        #expect(plain.output == "Client sent an HTTP request to an HTTPS server.\n 400", "\(plain.output)")
        #expect(curl(server.port).output == "GET /x? 0")
    }

    /// Go serves TLS 1.0 and 1.1 when min_version asks for them; OpenSSL only below its security level 1.
    @Test func tls10And11WorkWhenAskedFor() throws {
        let server = try tlsServer { $0.minVersion = .tls10 }
        defer { server.shutdown() }
        for version in ["-tls1", "-tls1_1"] {
            let answer = shell(
                """
                printf 'GET /old HTTP/1.0\\r\\n\\r\\n' | openssl s_client -quiet -connect 127.0.0.1:\(server.port) \
                \(version) -cipher 'DEFAULT@SECLEVEL=0' -CAfile '\(certificates.caFile)' 2>/dev/null
                """,
                timeout: 20)
            #expect(answer.output.contains("GET /old? 0"), "\(version): \(answer.output)")
        }
        #expect(curl(server.port).output == "GET /x? 0")
    }

    /// Without cipher_suites TLS 1.2 offers Go's default suites: no CBC-SHA256/SHA384, no RSA key exchange.
    @Test func tls12DefaultSuitesAreGos() throws {
        let server = try tlsServer { $0.maxVersion = .tls12 }
        defer { server.shutdown() }
        func negotiates(_ suite: String) -> Bool {
            shell(
                """
                echo | openssl s_client -connect 127.0.0.1:\(server.port) -tls1_2 -cipher '\(suite)' -CAfile \
                '\(certificates.caFile)' 2>&1
                """,
                timeout: 20
            )
            .output.contains("Cipher is \(suite)")
        }
        for suite in [
            "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305",
            "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA",
        ] {
            #expect(negotiates(suite), "\(suite)")
        }
        for suite in ["ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384", "ECDHE-ECDSA-AES128-CCM"] {
            #expect(!negotiates(suite), "\(suite)")
        }
    }

    @Test func requireAndVerifyClientCertRefusesMissingAndUntrustedCertificates() throws {
        let server = try tlsServer { settings in
            settings.clientAuth = .requireAndVerifyClientCert
            settings.clientCAFile = certificates.caFile
        }
        defer { server.shutdown() }
        #expect(curl(server.port).status != 0)
        #expect(
            curl(server.port, "--cert '\(certificates.strangerCert)' --key '\(certificates.strangerKey)'").status != 0)
        let good = curl(server.port, "--cert '\(certificates.clientCert)' --key '\(certificates.clientKey)'")
        #expect(good.output == "GET /x? 0", "\(good.output)")
    }

    @Test func verifyIfGivenAndRequireAny() throws {
        let ifGiven = try tlsServer { settings in
            settings.clientAuth = .verifyClientCertIfGiven
            settings.clientCAFile = certificates.caFile
        }
        defer { ifGiven.shutdown() }
        #expect(curl(ifGiven.port).output == "GET /x? 0")
        #expect(
            curl(ifGiven.port, "--cert '\(certificates.strangerCert)' --key '\(certificates.strangerKey)'").status != 0)

        let any = try tlsServer { $0.clientAuth = .requireAnyClientCert }
        defer { any.shutdown() }
        #expect(curl(any.port).status != 0)
        #expect(
            curl(any.port, "--cert '\(certificates.strangerCert)' --key '\(certificates.strangerKey)'").output
                == "GET /x? 0")
    }

    @Test func garbageAndHalfHandshakesDoNotStopTheServer() throws {
        let server = try tlsServer { _ in }
        defer { server.shutdown() }
        var generator = SeededGenerator(seed: 11)
        var idle: [TestClient] = []
        for round in 0..<40 {
            let client = try TestClient(port: server.port)
            switch round % 4 {
            case 0: client.send((0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) })
            // A record header claiming 64 KiB.
            case 1: client.send([0x16, 0x03, 0x01, 0xFF, 0xFF] + [UInt8](repeating: 0x41, count: 100))
            // A truncated ClientHello.
            case 2: client.send([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00])
            default: idle.append(client)  // connects and says nothing
            }
        }
        #expect(curl(server.port).output == "GET /x? 0")
        _ = idle
    }

    @Test func rotatedCertificatesReachNewConnections() throws {
        let directory = certificates.directory + "/rotation"
        #expect(
            shell(
                """
                mkdir -p '\(directory)' && cp '\(certificates.serverCert)' '\(directory)/cert.pem' && cp \
                '\(certificates.serverKey)' '\(directory)/key.pem'
                """
            ).status == 0)
        let reports = ReportLog()
        let source = try TLSContextSource(
            TLSServerConfiguration(certFile: directory + "/cert.pem", keyFile: directory + "/key.pem"),
            onError: { reports.add($0) })
        let server = try startServer { $0.tls = source }
        defer { server.shutdown() }
        let subject =
            """
            echo | openssl s_client -connect 127.0.0.1:\(server.port) -CAfile '\(certificates.caFile)' 2>/dev/null | \
            grep -m1 '^subject='
            """
        #expect(shell(subject).output.contains("CN = server"))

        // A key that does not match (the certificate not yet replaced): the old context stays, reported once.
        #expect(
            shell(
                """
                cp '\(certificates.rotatedKey)' '\(directory)/key.pem.new' && mv '\(directory)/key.pem.new' \
                '\(directory)/key.pem'
                """
            ).status == 0)
        #expect(
            waitUntil(seconds: 10) { shell(subject).output.contains("CN = server") && reports.contains("do not load") },
            "\(reports.all)")

        #expect(
            shell(
                """
                cp '\(certificates.rotatedCert)' '\(directory)/cert.pem.new' && mv '\(directory)/cert.pem.new' \
                '\(directory)/cert.pem'
                """
            ).status == 0)
        #expect(waitUntil(seconds: 10) { shell(subject).output.contains("CN = rotated") })
        #expect(reports.contains("new connections use the reloaded certificate"))
    }

    /// Each failure also leaves this thread's OpenSSL error queue empty: a reason left there would be
    /// reported as the cause of the next TLS failure on the same thread.
    @Test func setupErrorsNameTheFileAndTheFix() {
        func failure(_ settings: TLSServerConfiguration, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
            do {
                _ = try TLSContextSource(settings)
                return nil
            } catch {
                #expect(ERR_peek_error() == 0, "\(error.description)", sourceLocation: sourceLocation)
                return error.description
            }
        }
        let missing = failure(
            TLSServerConfiguration(certFile: "/nonexistent/cert.pem", keyFile: certificates.serverKey))
        #expect(missing == "cannot read the certificate file /nonexistent/cert.pem: no such file or directory")
        let mismatched = failure(
            TLSServerConfiguration(certFile: certificates.serverCert, keyFile: certificates.rotatedKey))
        #expect(mismatched?.contains("does not belong to the certificate") == true)
        let notPEM = failure(TLSServerConfiguration(certFile: certificates.serverKey, keyFile: certificates.serverKey))
        #expect(notPEM?.contains("cannot load the certificate from") == true)
        var inverted = TLSServerConfiguration(certFile: certificates.serverCert, keyFile: certificates.serverKey)
        inverted.minVersion = .tls13
        inverted.maxVersion = .tls12
        #expect(failure(inverted)?.contains("min_version TLS13 is above max_version TLS12") == true)
        var ciphers = inverted
        ciphers.minVersion = .tls12
        ciphers.maxVersion = .tls13
        ciphers.cipherSuites = ["TLS_NOT_A_SUITE"]
        #expect(failure(ciphers)?.contains("unknown cipher suite TLS_NOT_A_SUITE") == true)
    }

    @Test func cipherSuitesAndCurvesApplyToTLS12() throws {
        let server = try tlsServer { settings in
            settings.maxVersion = .tls12
            settings.cipherSuites = ["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"]
            settings.curves = ["P-384"]
        }
        defer { server.shutdown() }
        let result = shell(
            """
            echo | openssl s_client -connect 127.0.0.1:\(server.port) -CAfile '\(certificates.caFile)' 2>&1 | grep -E \
            'Cipher is|Server Temp Key'
            """,
            timeout: 20)
        #expect(result.output.contains("ECDHE-ECDSA-AES256-GCM-SHA384"), "\(result.output)")
        #expect(result.output.contains("secp384r1"), "\(result.output)")
    }
}

final class ReportLog: Sendable {
    private let lines = Locked<[String]>([])

    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
}
