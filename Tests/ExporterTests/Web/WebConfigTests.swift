import Glibc
import HTTPServer
import Locking
import Simulator
import TestSupport
import Testing

@testable import Exporter

/// `--web.config.file`: exporter-toolkit's format, checks and messages.
@Suite struct WebConfigTests {
    func parse(_ text: String) throws(ConfigError) -> WebConfig {
        try WebConfig.parse(Array(text.utf8), directory: "/etc/exporter", origin: "web.yml")
    }

    func failure(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    static let hash = "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"

    @Test func readsEveryKeyWithTheToolkitsDefaults() throws {
        let config = try parse(
            """
            tls_server_config:
              cert_file: server.crt
              key_file: /abs/server.key
              client_auth_type: RequireAndVerifyClientCert
              client_ca_file: ca.pem
              min_version: TLS13
              cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
              curve_preferences: [X25519, CurveP256]
              prefer_server_cipher_suites: false
            http_server_config:
              http2: false
              headers:
                Strict-Transport-Security: max-age=31536000
                X-Frame-Options: deny
                X-XSS-Protection: ""
            basic_auth_users:
              alice: \(Self.hash)
            """)
        let tls = try #require(config.tls)
        #expect(tls.certFile == "/etc/exporter/server.crt")
        #expect(tls.keyFile == "/abs/server.key")
        #expect(tls.clientCAFile == "/etc/exporter/ca.pem")
        #expect(tls.clientAuth == .requireAndVerifyClientCert)
        #expect(tls.minVersion == .tls13 && tls.maxVersion == .tls13)
        #expect(tls.cipherSuites == ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"])
        #expect(tls.curves == ["X25519", "P-256"])
        #expect(!tls.preferServerCipherSuites)
        #expect(config.headers.map(\.name) == ["Strict-Transport-Security", "X-Frame-Options"])
        #expect(config.users == ["alice": Self.hash])

        let defaults = try #require(try parse("tls_server_config:\n  cert_file: a\n  key_file: b\n").tls)
        #expect(defaults.minVersion == .tls12 && defaults.maxVersion == .tls13 && defaults.clientAuth == .noClientCert)
        #expect(try parse("").tls == nil)
        #expect(try parse("tls_server_config: {}\nbasic_auth_users:\n").tls == nil)
        #expect(
            try parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireClientCert\n").tls?
                .clientAuth == .requireAnyClientCert)
    }

    @Test func refusesWhatTheToolkitRefuses() {
        let cases: [(String, String)] = [
            (
                "tls_server_config:\n  key_file: k\n",
                "web.yml: line 2, column 3: missing one of cert or cert_file in tls_server_config"
            ),
            ("tls_server_config:\n  cert_file: c\n", "missing one of key or key_file"),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: Sometimes\n",
                "line 4, column 21: invalid ClientAuth: Sometimes; use one of NoClientCert, RequestClientCert"
            ),
            (
                "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n",
                "client CA's have been configured without a Client Auth Policy"
            ),
            ("tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS14\n", "unknown TLS version: TLS14"),
            ("tls_server_config:\n  cert_file: c\n  key_file: k\n  curve_preferences: [P256]\n", "unknown curve: P256"),
            (
                "tls_server_config:\n  cert_fil: c\n",
                "line 2, column 3: unknown key \"cert_fil\" in tls_server_config; did you mean \"cert_file\"?"
            ),
            ("tls_server_config:\n  cert: |\n    -----BEGIN\n", "inline PEM (cert) is not supported"),
            (
                "http_server_config:\n  headers:\n    Server: nginx\n",
                "line 3, column 5: HTTP header \"Server\" can not be configured"
            ),
            (
                "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
                "invalid value for X-Frame-Options. Expected one of: \"deny\" \"sameorigin\", but got: \"allow\""
            ),
            ("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n", "Expected one of: \"nosniff\""),
            ("http_server_config:\n  http2: maybe\n", "http2 must be true or false"),
            (
                "basic_auth_users:\n  alice: secret\n",
                "line 2, column 10: the password of user \"alice\" is not a bcrypt hash"
            ),
            ("basic_auth_users:\n  - alice\n", "basic_auth_users must map user names to bcrypt hashes"),
            (
                "basic_auth_user:\n  alice: x\n",
                "unknown key \"basic_auth_user\" in the web config; did you mean \"basic_auth_users\"?"
            ),
            ("tls_server_config:\n  cert_file: [a]\n", "cert_file must be a single value, not a sequence"),
            ("tls_server_config:\n\tcert_file: a\n", "line 2, column 2: a tab in the indentation"),
            (
                "rate_limit:\n  interval: 1d\n  burst: 1\n",
                """
                line 2, column 13: interval must be a duration such as 1s, 100ms or 1m30s (0 switches the limit off), \
                not "1d"
                """
            ),
            ("rate_limit:\n  interval: -1s\n", "interval must be a duration"),
            (
                "rate_limit:\n  interval: 1s\n  burst: many\n",
                "line 3, column 10: burst must be a whole number of requests, such as 10, not \"many\""
            ),
            (
                "rate_limit:\n  interval: 1s\n",
                """
                line 2, column 3: rate_limit needs a burst of at least 1 (with 0 every request would be refused with \
                429); add burst: 10
                """
            ),
            ("rate_limit:\n  interval: 1s\n  burst: 0\n", "line 3, column 10: rate_limit needs a burst of at least 1"),
            ("rate_limit:\n  intervall: 1s\n", "unknown key \"intervall\" in rate_limit; did you mean \"interval\"?"),
            ("rate_limit: 10\n", "rate_limit must be a mapping"),
        ]
        for (text, expected) in cases {
            let message = failure(text)
            #expect(message?.contains(expected) == true, "\(text.debugDescription) -> \(message ?? "accepted")")
        }
    }

    /// `rate_limit` with Go's durations, as the toolkit reads it; an interval of 0 (or none) is no limit.
    @Test func readsTheRateLimit() throws {
        #expect(
            try parse("rate_limit:\n  interval: 1s\n  burst: 10\n").rateLimit
                == RateLimitConfiguration(interval: 1_000_000_000, burst: 10))
        #expect(try parse("rate_limit:\n  interval: 1m30.5s\n  burst: 1\n").rateLimit?.interval == 90_500_000_000)
        #expect(try parse("rate_limit:\n  interval: 250ms\n  burst: 1\n").rateLimit?.interval == 250_000_000)
        #expect(try parse("rate_limit:\n  interval: 100us\n  burst: 1\n").rateLimit?.interval == 100_000)
        #expect(try parse("rate_limit:\n  interval: 0\n  burst: 0\n").rateLimit == nil)
        #expect(try parse("rate_limit:\n  burst: 5\n").rateLimit == nil)
        #expect(try parse("rate_limit:\n").rateLimit == nil)
        #expect(RateLimitConfiguration.goDuration("1h") == 3_600_000_000_000)
        #expect(RateLimitConfiguration.goDuration("300h") == 1_080_000_000_000_000)
        for bad in ["", "1", "s", "1.s2", "1..5s", "1e3s", "3000000h", " 1s"] {
            #expect(RateLimitConfiguration.goDuration(bad) == nil, "\(bad)")
        }
    }

    /// The example shipped in deploy/ is read by the exporter's own reader, as users will feed it.
    @Test func theDeployExampleLoads() throws {
        let root = repositoryDirectory()
        let config = try WebConfig.load(path: root + "/deploy/config/web-config.yml")
        #expect(config.tls?.certFile == root + "/deploy/config/server.crt")
        #expect(config.tls?.minVersion == .tls12)
        #expect(config.headers.map(\.name) == ["Strict-Transport-Security"])
        let auth = BasicAuth(users: config.users)
        #expect(auth.verify(user: "prometheus", password: "change-me"))
    }

    /// The toolkit takes TLS 1.3 names in cipher_suites (Go's tls.CipherSuites() lists them) and Go ignores
    /// them; TLS10 and TLS11 work, with a warning each time the file loads.
    @Test func tls13SuitesAreIgnoredAndOldVersionsNoted() throws {
        let config = try parse(
            """
            tls_server_config:
              cert_file: a
              key_file: b
              min_version: TLS10
              cipher_suites: [TLS_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256]
            """)
        #expect(config.tls?.cipherSuites == ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"])
        #expect(config.tls?.minVersion == .tls10)
        #expect(config.notes.count == 2, "\(config.notes)")
        #expect(
            config.notes.contains {
                $0.hasPrefix(
                    """
                    web.yml: line 5, column 18: cipher_suites lists TLS 1.3 suites (TLS_AES_128_GCM_SHA256, \
                    TLS_CHACHA20_POLY1305_SHA256), which are ignored
                    """
                )
            }, "\(config.notes)")
        #expect(
            config.notes.contains {
                $0.contains("min_version TLS10 allows TLS 1.0/1.1, deprecated by RFC 8996")
                    && $0.contains("security level 0")
            })
        let only13 = try parse(
            "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_256_GCM_SHA384]\n")
        #expect(only13.tls?.cipherSuites == [])
        #expect(only13.notes.count == 1 && only13.notes[0].contains("TLS 1.2 keeps its default suites"))
        #expect(try parse("tls_server_config:\n  cert_file: a\n  key_file: b\n").notes.isEmpty)
    }

    @Test func bcryptHashShapes() {
        #expect(BasicAuth.isBcryptHash(Self.hash))
        #expect(BasicAuth.isBcryptHash("$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay"))
        #expect(!BasicAuth.isBcryptHash("$2y$03$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"))
        #expect(!BasicAuth.isBcryptHash("$1$abc$def"))
        #expect(!BasicAuth.isBcryptHash(String(Self.hash.dropLast())))
    }

    @Test func basicCredentials() {
        #expect(BasicAuth.credentials("Basic YWRtaW46dGVzdA==").map { "\($0.user)|\($0.password)" } == "admin|test")
        #expect(BasicAuth.credentials("basic YTpiOmM=").map { "\($0.user)|\($0.password)" } == "a|b:c")
        #expect(BasicAuth.credentials("Basic YWRtaW46dGVzdA") == nil)
        #expect(BasicAuth.credentials("Bearer abc") == nil)
        #expect(BasicAuth.credentials("Basic bm9jb2xvbg==") == nil)
        #expect(BasicAuth.credentials(nil) == nil)
    }

    @Test func verifiesWithLibcryptAndCachesOutcomes() throws {
        let result = shell("htpasswd -nbBC 4 '' 'pa:ss wörd' | tr -d ':\\n'")
        #expect(result.status == 0, "\(result.output)")
        let auth = BasicAuth(users: ["bob": result.output])
        #expect(auth.cached(user: "bob", password: "pa:ss wörd") == nil)
        #expect(auth.verify(user: "bob", password: "pa:ss wörd"))
        #expect(auth.cached(user: "bob", password: "pa:ss wörd") == true)
        #expect(!auth.verify(user: "bob", password: "pa:ss word"))
        #expect(auth.cached(user: "bob", password: "pa:ss word") == false)
        #expect(!auth.verify(user: "eve", password: "pa:ss wörd"))
        #expect(!auth.verify(user: "bob", password: "pa:ss wörd\u{0}x"))
        // Filled past its 100 entries through bob's cost-4 hash (an unknown user costs the decoy's 10,
        // 0.15 s a check in a debug build): the latest outcome is kept and at most 100 are.
        for k in 0..<300 { _ = auth.verify(user: "bob", password: "x\(k)") }
        #expect(auth.cached(user: "bob", password: "x299") == false)
        #expect(
            (0..<300).count { auth.cached(user: "bob", password: "x\($0)") != nil } <= 100,
            "the deploy reference's 100 entries")
    }
}

/// The whole exporter behind a web config: TLS, basic auth, headers, hot changes, and the example files
/// from the Prometheus documentation, used as they are written there.
@Suite(.blocking) struct WebConfigServingTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates.shared.get()
    }

    /// A directory with server.crt / server.key (the names the toolkit's example uses) and `web` as web.yml.
    func directory(web: String) -> String {
        let dir = certificates.directory + "/web-\(UInt64.random(in: 0...UInt64.max))"
        let setup = shell(
            """
            mkdir -p '\(dir)' && cp '\(certificates.serverCert)' '\(dir)/server.crt' && cp '\(certificates.serverKey)' \
            '\(dir)/server.key'
            """
        )
        precondition(setup.status == 0, setup.output)
        write(web, to: dir + "/web.yml")
        return dir
    }

    func write(_ text: String, to path: String) {
        let temporary = path + ".new"
        let handle = fopen(temporary, "w")!
        fputs(text, handle)
        fclose(handle)
        rename(temporary, path)
    }

    func start(_ dir: String, extra: [String] = [], logs: LogCapture? = nil) throws -> (Exporter, Simulator) {
        let simulator = try Simulator()
        let loader = ConfigurationLoader(
            arguments: [
                "--web.listen-address=127.0.0.1:0", "--web.config.file=\(dir)/web.yml", "--location",
                "London=51.5,-0.12",
                "--openweather.url=\(simulator.baseURL)",
            ] + extra,
            environment: ["OPENWEATHER_API_KEY": "k"])
        guard case .run(let configuration) = try loader.load() else { throw ConfigError("no run") }
        let logger = Logger(level: logs == nil ? .error : .info, secrets: [], sink: { logs?.append($0) })
        let exporter = try Exporter(configuration: configuration, logger: logger) {
            () throws(ConfigError) -> Configuration in
            guard case .run(let next) = try loader.load() else { throw ConfigError("no run") }
            return next
        }
        exporter.start()
        return (exporter, simulator)
    }

    /// The ceilings (50 s, under shell's 60) only guard against a hang: a cost-12 bcrypt check (the guide's hash)
    /// and a TLS handshake took more than 10 s beside two CPU hogs on a loaded machine (curl: 000).
    func curl(_ port: UInt16, _ options: String, path: String = "/metrics", scheme: String = "https") -> String {
        shell(
            """
            curl -s --max-time 50 --cacert '\(certificates.caFile)' -o /dev/null -w '%{http_code}' \(options) \
            \(scheme)://127.0.0.1:\(port)\(path)
            """
        ).output
    }

    /// The sample of exporter-toolkit's docs/web-config.yml (alice and bob), as written there.
    @Test func theToolkitsSampleFileWorksAsIs() throws {
        let dir = directory(
            web: """
                # TLS and basic authentication configuration example.
                #
                # Additionally, a certificate and a key file are needed.
                tls_server_config:
                  cert_file: server.crt
                  key_file: server.key

                # Usernames and passwords required to connect.
                # Passwords are hashed with bcrypt: https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md#about-bcrypt.
                basic_auth_users:
                  alice: $2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze
                  bob: $2y$10$hLqFl9jSjoAAy95Z/zw8Ye8wkdMBM8c5Bn1ptYqP/AXyV0.oy0S8m

                """)
        let (exporter, simulator) = try start(dir)
        defer {
            exporter.shutdown()
            simulator.stop()
        }
        #expect(curl(exporter.port, "") == "401")
        #expect(curl(exporter.port, "-u alice:wrong") == "401")
        let headers = shell(
            """
            curl -s --max-time 50 --cacert '\(certificates.caFile)' -D - -o /dev/null \
            https://127.0.0.1:\(exporter.port)/
            """
        ).output
        #expect(headers.contains("WWW-Authenticate: Basic"), "\(headers)")
        // Plain HTTP on the TLS port is refused.
        #expect(
            shell("curl -s --max-time 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:\(exporter.port)/metrics")
                .output != "200")
    }

    /// The web.yml of the Prometheus guide "Securing Prometheus API and UI endpoints using basic auth"
    /// (user admin, password test), plus TLS.
    @Test func thePrometheusGuidesFileWorksAsIs() throws {
        let dir = directory(
            web: """
                tls_server_config:
                  cert_file: server.crt
                  key_file: server.key
                basic_auth_users:
                    admin: $2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay

                """)
        let (exporter, simulator) = try start(dir)
        defer {
            exporter.shutdown()
            simulator.stop()
        }
        #expect(curl(exporter.port, "-u admin:test") == "200")
        #expect(curl(exporter.port, "-u admin:test", path: "/-/healthy") == "200")
        #expect(curl(exporter.port, "-u admin:tset") == "401")
        #expect(curl(exporter.port, "-u nobody:test") == "401")
    }

    @Test func headersClientCertificatesAndChangesWithoutRestart() throws {
        let hash = shell("htpasswd -nbBC 4 '' first | tr -d ':\\n'").output
        let dir = directory(
            web: """
                tls_server_config:
                  cert_file: server.crt
                  key_file: server.key
                  client_auth_type: RequireAndVerifyClientCert
                  client_ca_file: \(certificates.caFile)
                http_server_config:
                  headers:
                    Strict-Transport-Security: max-age=31536000
                basic_auth_users:
                  prom: "\(hash)"
                """)
        let (exporter, simulator) = try start(dir)
        defer {
            exporter.shutdown()
            simulator.stop()
        }
        let client = "--cert '\(certificates.clientCert)' --key '\(certificates.clientKey)'"
        #expect(curl(exporter.port, "-u prom:first") == "000")  // no client certificate: no TLS session
        #expect(curl(exporter.port, "\(client) -u prom:first") == "200")
        let head = shell(
            """
            curl -s --max-time 50 --cacert '\(certificates.caFile)' \(client) -D - -o /dev/null \
            https://127.0.0.1:\(exporter.port)/
            """
        ).output
        #expect(head.contains("Strict-Transport-Security: max-age=31536000"), "\(head)")

        // A new password and no client certificate requirement take effect without a restart.
        let second = shell("htpasswd -nbBC 4 '' second | tr -d ':\\n'").output
        write(
            """
            tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n\
              prom: "\(second)"\n
            """,
            to: dir + "/web.yml")
        #expect(waitUntil(seconds: 10) { curl(exporter.port, "-u prom:second") == "200" })
        #expect(curl(exporter.port, "-u prom:first") == "401")
        #expect(
            !shell(
                """
                curl -s --max-time 50 --cacert '\(certificates.caFile)' -u prom:second -D - -o /dev/null \
                https://127.0.0.1:\(exporter.port)/
                """
            ).output.contains("Strict-Transport"))

        // A broken file keeps the settings in force; a reload says what is wrong.
        write("basic_auth_users:\n  prom: plaintext\n", to: dir + "/web.yml")
        #expect(exporter.reload()?.contains("is not a bcrypt hash") == true)
        #expect(curl(exporter.port, "-u prom:second") == "200")
    }

    /// A revocation that does not load must not look like one that worked: the reload fails as a broken
    /// config file's does (gauge 0, the reason logged) and the last good users keep serving.
    @Test func aBrokenWebConfigFailsTheReload() throws {
        let hash = shell("htpasswd -nbBC 4 '' first | tr -d ':\\n'").output
        let dir = directory(web: "basic_auth_users:\n  prom: \"\(hash)\"\n")
        let logs = LogCapture()
        let (exporter, simulator) = try start(dir, logs: logs)
        defer {
            exporter.shutdown()
            simulator.stop()
        }
        let scrape = "curl -s --max-time 50 -u prom:first http://127.0.0.1:\(exporter.port)/metrics"
        #expect(exporter.reload() == nil)
        #expect(shell(scrape).output.contains("openweather_exporter_config_last_reload_successful 1\n"))

        write("basic_auth_users:\n  prom: notahash\n", to: dir + "/web.yml")
        let problem = exporter.reload()
        #expect(problem?.contains("the password of user \"prom\" is not a bcrypt hash") == true, "\(problem ?? "nil")")
        let metrics = shell(scrape).output
        #expect(metrics.contains("openweather_exporter_config_last_reload_successful 0\n"), "\(metrics.prefix(300))")
        let lines = logs.all
        let refused = lines.filter { $0.contains("reload refused") }
        #expect(
            refused.count == 1 && refused[0].contains("level=error") && refused[0].contains("not a bcrypt hash"),
            "\(lines)")
        #expect(lines.count { $0.contains("configuration reloaded") } == 1, "\(lines)")

        // The file fixed: the next reload succeeds and applies it.
        let second = shell("htpasswd -nbBC 4 '' second | tr -d ':\\n'").output
        write("basic_auth_users:\n  prom: \"\(second)\"\n", to: dir + "/web.yml")
        #expect(exporter.reload() == nil)
        #expect(curl(exporter.port, "-u prom:first", scheme: "http") == "401")
        // A reload that works is published by the paced refresh (up to a second after a costly one,
        // as under ThreadSanitizer); only a refused one is rendered at once.
        #expect(
            waitUntil(seconds: 5) {
                shell("curl -s --max-time 50 -u prom:second http://127.0.0.1:\(exporter.port)/metrics").output
                    .contains("openweather_exporter_config_last_reload_successful 1\n")
            })
    }

    /// A web config replaced by a FIFO once hung the reload (SIGHUP), and then every scrape: the reload
    /// fails saying why, and the previous settings keep serving.
    @Test func aWebConfigReplacedByAFIFOFailsTheReload() throws {
        let hash = shell("htpasswd -nbBC 4 '' first | tr -d ':\\n'").output
        let dir = directory(web: "basic_auth_users:\n  prom: \"\(hash)\"\n")
        let (exporter, simulator) = try start(dir)
        let path = dir + "/web.yml"
        // Were a loop stuck opening the FIFO, shutting down would wait for it for ever.
        defer {
            _ = finishesInTime(0, releasing: path) {
                exporter.shutdown()
                simulator.stop()
            }
        }
        #expect(replaceWithFIFO(path))
        let problem = Locked<String?>(nil)
        #expect(
            finishesInTime(10, releasing: path) { problem.withLock { $0 = exporter.reload() } },
            "the reload blocked on the FIFO")
        let reason = problem.withLock { $0 } ?? "nil"
        #expect(
            reason.contains("\(path) is not a regular file (it is a FIFO): replace it with a regular file"), "\(reason)"
        )
        let status = Locked("")
        #expect(
            finishesInTime(15, releasing: path) {
                status.withLock { $0 = curl(exporter.port, "-u prom:first", scheme: "http") }
            })
        #expect(status.withLock { $0 } == "200", "the previous users keep working")
    }

    /// A certificate, key or client CA file replaced by a FIFO once hung every HTTPS request (the files
    /// are re-checked on accept): the previous certificate keeps serving and the log says why.
    @Test(arguments: ["server.crt", "server.key", "ca.pem"])
    func aTLSFileReplacedByAFIFOKeepsThePreviousContext(file: String) throws {
        let dir = directory(
            web: """
                tls_server_config:
                  cert_file: server.crt
                  key_file: server.key
                  client_ca_file: ca.pem
                  client_auth_type: VerifyClientCertIfGiven

                """)
        #expect(shell("cp '\(certificates.caFile)' '\(dir)/ca.pem'").status == 0)
        let logs = LogCapture()
        let (exporter, simulator) = try start(dir, logs: logs)
        let path = dir + "/" + file
        // Were a loop stuck opening the FIFO, shutting down would wait for it for ever.
        defer {
            _ = finishesInTime(0, releasing: path) {
                exporter.shutdown()
                simulator.stop()
            }
        }
        #expect(curl(exporter.port, "") == "200")
        #expect(replaceWithFIFO(path))
        let reported = Locked(false)
        let served = finishesInTime(8, releasing: path) {
            // The files are looked at once a second, on accept: a few requests reach the check.
            let seen = waitUntil(seconds: 5) {
                curl(exporter.port, "--max-time 3") == "200"
                    && logs.all.contains { $0.contains("is not a regular file (it is a FIFO)") }
            }
            reported.withLock { $0 = seen }
        }
        #expect(reported.withLock { $0 }, "\(logs.all)")
        #expect(served, "HTTPS requests hung on the FIFO")
        #expect(logs.all.contains { $0.contains("do not load") && $0.contains(path) }, "\(logs.all)")
    }

    /// A toolkit file with TLS 1.3 suite names and min_version TLS10 starts, serves, and says what it ignored.
    @Test func tls13SuiteNamesAndTLS10StartAndServe() throws {
        let dir = directory(
            web: """
                tls_server_config:
                  cert_file: server.crt
                  key_file: server.key
                  min_version: TLS10
                  cipher_suites: [TLS_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA]
                """)
        let logs = LogCapture()
        let (exporter, simulator) = try start(dir, logs: logs)
        defer {
            exporter.shutdown()
            simulator.stop()
        }
        #expect(curl(exporter.port, "", path: "/-/healthy") == "200")
        let old = shell(
            """
            printf 'GET /-/healthy HTTP/1.0\\r\\n\\r\\n' | openssl s_client -quiet -connect 127.0.0.1:\(exporter.port) \
            -tls1 -cipher 'DEFAULT@SECLEVEL=0' -CAfile '\(certificates.caFile)' 2>/dev/null
            """,
            timeout: 20)
        #expect(old.output.hasPrefix("HTTP/1.1 200") || old.output.hasPrefix("HTTP/1.0 200"), "\(old.output)")
        let warnings = logs.all.filter { $0.contains("level=warn") }
        #expect(
            warnings.contains { $0.contains("cipher_suites lists TLS 1.3 suites (TLS_AES_128_GCM_SHA256)") },
            "\(warnings)")
        #expect(warnings.contains { $0.contains("min_version TLS10 allows TLS 1.0/1.1") }, "\(warnings)")
    }

    @Test func startupErrorsSayWhatToFix() throws {
        let dir = directory(web: "tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n")
        do {
            _ = try start(dir)
            Issue.record("started with a missing certificate")
        } catch {
            #expect(
                "\(error)"
                    == """
                    --web.config.file \(dir)/web.yml: tls_server_config: cannot read the certificate file \
                    \(dir)/missing.crt: no such file or directory
                    """
            )
        }
        do {
            _ = try start(dir + "/nothing")
            Issue.record("started without a web config file")
        } catch {
            #expect("\(error)".hasPrefix("cannot read --web.config.file \(dir)/nothing/web.yml: "))
        }
    }
}
