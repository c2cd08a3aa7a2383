import Glibc
import Gzip
import HTTPServer
import Simulator
import TestSupport
import Testing

@testable import Exporter

/// The exporter in-process against the simulator, spoken to over TCP. Each test has its own
/// simulator and ports, so they run in parallel.
@Suite(.endToEnd) struct ExporterWebTests {
    struct Running {
        let simulator: Simulator
        let exporter: Exporter
        let logs = LogCapture()
        var port: UInt16 { exporter.port }

        init(
            locations: [String] = ["London=51.5074,-0.1278", "Tokyo=35.6762,139.6503"], extra: [String] = [],
            configFile: String? = nil, faults: [Fault] = [], demo: Bool = false, gzipAbove: Int? = nil,
            alsoGzipAbove: Int? = nil,
            url makeURL: (Simulator) -> String = { $0.baseURL }, time: any TimeSource = SystemTime()
        ) throws {
            simulator = try Simulator()
            for fault in faults { simulator.addFault(fault) }
            let url = makeURL(simulator)
            // The weather alone unless a test asks for more: request counts and failures are the weather's.
            var arguments =
                [
                    "--web.listen-address=127.0.0.1:0", "--openweather.url=\(url)", "--collector.weather.interval=1m",
                    "--no-collector.forecast", "--openweather.max-requests-per-minute=6000",
                ] + extra
            arguments += locations.flatMap { ["--location", $0] }
            if let configFile { arguments += ["--config.file", configFile] }
            if demo { arguments.append("--demo") }
            let loader = ConfigurationLoader(
                arguments: arguments, environment: ["OPENWEATHER_API_KEY": "SECRET-KEY-42"])
            guard case .run(var configuration) = try loader.load() else { throw ConfigError("no run") }
            configuration.openWeatherURL = url
            if let gzipAbove { configuration.gzipAbove = gzipAbove }
            if let alsoGzipAbove { configuration.alsoGzipAbove = alsoGzipAbove }
            let logs = self.logs
            let reloader: Exporter.Reloader = { () throws(ConfigError) -> Configuration in
                guard case .run(var next) = try loader.load() else { throw ConfigError("no run") }
                next.openWeatherURL = url
                return next
            }
            exporter = try Exporter(
                configuration: configuration, logger: Logger(level: .debug, secrets: [], sink: { logs.append($0) }),
                reloader: reloader, time: time)
            exporter.start()
        }

        /// The exporter answers from this process, which under a sanitizer beside busy neighbours can
        /// wait more than the usual 5 s for a core (`theKeyAppearsNowhereWhateverFails` once did).
        func get(_ path: String, method: String = "GET") throws -> LoopbackResponse {
            try LoopbackHTTP.request(port: port, method: method, path: path, timeoutSeconds: 30)
        }

        func metrics() throws -> String { try get("/metrics").text }

        /// `/metrics` with `Accept-Encoding: acceptEncoding` and `Accept: accept` (each left out when nil).
        func scrape(acceptEncoding: String?, accept: String? = nil, method: String = "GET") throws -> LoopbackResponse {
            let headers = [acceptEncoding.map { "Accept-Encoding: \($0)" }, accept.map { "Accept: \($0)" }].compactMap {
                $0
            }
            return try LoopbackHTTP.request(
                port: port, method: method, path: "/metrics", headers: headers, timeoutSeconds: 30)
        }

        func stop() {
            exporter.shutdown()
            simulator.stop()
        }
    }

    @Test func servesTheExpositionWithItsHeaders() async throws {
        let running = try Running()
        defer { running.stop() }
        // Both polls run at once and either may finish first.
        #expect(
            await waitUntil {
                let metrics = (try? running.metrics()) ?? ""
                return ["London", "Tokyo"].allSatisfy {
                    metrics.contains("openweather_temperature_celsius{location=\"\($0)\"}")
                }
            })
        let response = try running.get("/metrics")
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(response.header("vary") == "Accept")
        #expect(Int(response.header("content-length") ?? "") == response.body.count)
        #expect(response.text.contains("openweather_temperature_celsius{location=\"London\"}"))
        #expect(response.text.contains("process_resident_memory_bytes "))

        let head = try running.get("/metrics", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("content-length") != nil)
    }

    /// The `openweather_*` lines: the process part changes every second.
    static func weatherPart(_ text: [UInt8]) -> [Substring] {
        String(decoding: text, as: UTF8.self).split(separator: "\n").filter { !$0.contains("process_") }
    }

    /// Kept gzipped (a threshold of 0 makes two locations enough): gzip to those who take it,
    /// plain text to the others, the same text either way, and HEAD announcing what GET sends.
    @Test func aGzippedExpositionIsNegotiated() async throws {
        let running = try Running(gzipAbove: 0)
        defer { running.stop() }
        try await Self.checkNegotiation(running)
    }

    /// Kept plain and also gzipped (a threshold of 0 makes two locations enough): the same
    /// negotiation, the plain text sent from its kept copy (sendfile).
    @Test func aPlainExpositionIsAlsoKeptGzipped() async throws {
        let running = try Running(alsoGzipAbove: 0)
        defer { running.stop() }
        try await Self.checkNegotiation(running)
    }

    /// What a scrape gets, whichever way the exposition is kept (gzipped only, or plain and gzipped):
    /// gzip (one member, the same text) to those who take it, in the text format and in OpenMetrics
    /// (ending in `# EOF`), plain text to those who refuse it or do not ask, and HEAD announcing
    /// GET's type, encoding and length.
    static func checkNegotiation(_ running: Running) async throws {
        #expect(await waitUntil { (try? running.get("/-/ready").status) == 200 })
        let plain = try running.scrape(acceptEncoding: nil)
        #expect(plain.status == 200)
        #expect(plain.header("content-encoding") == nil)
        #expect(plain.header("vary") == "Accept, Accept-Encoding")
        #expect(plain.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(Int(plain.header("content-length") ?? "") == plain.body.count)
        #expect(plain.text.contains("openweather_temperature_celsius{location=\"London\"}"))
        #expect(plain.text.contains("process_resident_memory_bytes "))

        let openMetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8"
        for accept in [nil, prometheusAccept] as [String?] {
            // The same format uncompressed, to compare with (OpenMetrics' text is not the text format's).
            let uncompressed = accept == nil ? plain : try running.scrape(acceptEncoding: nil, accept: accept)
            let contentType = accept == nil ? plain.header("content-type") : openMetrics
            #expect(uncompressed.header("content-type") == contentType)
            #expect(uncompressed.header("content-encoding") == nil)
            #expect(accept == nil || uncompressed.text.hasSuffix("\n# EOF\n"))
            for encoding in [
                "gzip", "gzip, deflate, br", "deflate;q=1, GZIP;q=0.5", "*", "identity, *;q=0.1", "x-gzip",
            ] {
                let gzipped = try running.scrape(acceptEncoding: encoding, accept: accept)
                let asked = "Accept-Encoding: \(encoding), Accept: \(accept ?? "none")"
                #expect(gzipped.status == 200)
                #expect(gzipped.header("content-encoding") == "gzip", "\(asked)")
                #expect(gzipped.header("content-type") == contentType, "\(asked)")
                #expect(gzipped.header("vary") == "Accept, Accept-Encoding")
                #expect(Int(gzipped.header("content-length") ?? "") == gzipped.body.count)
                let inflated = try #require(Gzip.inflate([gzipped.body]))
                #expect(accept == nil || String(decoding: inflated, as: UTF8.self).hasSuffix("\n# EOF\n"), "\(asked)")
                #expect(weatherPart(inflated) == weatherPart(uncompressed.body), "\(asked)")
                // One member: curl and browsers stop after the first.
                #expect(Gzip.memberCount([gzipped.body]) == 1)
                #expect(inflated.count > 1000)
            }
        }
        // An explicit gzip;q=0 wins over "*".
        for encoding in [
            "gzip;q=0", "identity", "deflate, br", "gzip;q=0.000, identity", "*;q=0", "", "gzip ; q=0 , *",
        ] {
            let response = try running.scrape(acceptEncoding: encoding)
            #expect(response.status == 200)
            #expect(response.header("content-encoding") == nil, "Accept-Encoding: \(encoding)")
            #expect(weatherPart(response.body) == weatherPart(plain.body))
        }

        // HEAD gives GET's type, encoding and length for the same Accept and Accept-Encoding; the
        // process part may change between the requests (once a second), so one of a few tries must
        // see the three agree.
        for (accept, encoding) in [(nil, nil), (nil, "gzip"), (prometheusAccept, "gzip")] as [(String?, String?)] {
            var agreed = false
            for _ in 0..<10 where !agreed {
                let before = try running.scrape(acceptEncoding: encoding, accept: accept, method: "HEAD")
                let get = try running.scrape(acceptEncoding: encoding, accept: accept)
                let after = try running.scrape(acceptEncoding: encoding, accept: accept, method: "HEAD")
                #expect(before.status == 200 && before.body.isEmpty)
                #expect(before.header("content-encoding") == (encoding == nil ? nil : "gzip"))
                #expect(before.header("content-encoding") == get.header("content-encoding"))
                #expect(before.header("content-type") == get.header("content-type"))
                #expect(before.header("vary") == "Accept, Accept-Encoding")
                agreed = [before, after].allSatisfy { Int($0.header("content-length") ?? "") == get.body.count }
            }
            #expect(agreed, "HEAD and GET lengths, Accept-Encoding: \(encoding ?? "none"), Accept: \(accept ?? "none")")
        }
    }

    static let prometheusAccept =
        """
        application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,\
        text/plain;version=0.0.4;q=0.5,*/*;q=0.1
        """

    /// OpenMetrics for those who ask for it (Prometheus does), the text format for everyone else;
    /// the same series either way.
    @Test func openMetricsIsNegotiatedOnAccept() async throws {
        let running = try Running()
        defer { running.stop() }
        #expect(await waitUntil { (try? running.get("/-/ready").status) == 200 })
        let text = try running.scrape(acceptEncoding: nil)
        for accept in [
            Self.prometheusAccept, "application/openmetrics-text; version=1.0.0", "application/openmetrics-text",
        ] {
            let response = try running.scrape(acceptEncoding: nil, accept: accept)
            #expect(response.status == 200)
            #expect(
                response.header("content-type") == "application/openmetrics-text; version=1.0.0; charset=utf-8",
                "Accept: \(accept)")
            #expect(response.header("vary") == "Accept")
            #expect(Int(response.header("content-length") ?? "") == response.body.count)
            #expect(response.text.hasSuffix("\n# EOF\n"))
            #expect(response.text.contains("\n# TYPE openweather_api_requests counter\n"))
            #expect(response.text.contains("\n# UNIT process_cpu_seconds seconds\n"))
            #expect(response.text.contains("\nprocess_cpu_seconds_created "))
            let (series, plain) = seriesAsText(openMetrics: response.body, text: text.body)
            #expect(series.filter { !$0.hasPrefix("process_") } == plain.filter { !$0.hasPrefix("process_") })
        }
        for accept in ["*/*", "text/plain", "application/openmetrics-text;q=0", "application/json", "garbage;;=", ""] {
            let response = try running.scrape(acceptEncoding: nil, accept: accept)
            #expect(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8", "Accept: \(accept)")
            #expect(!response.text.contains("# EOF"))
        }
    }

    /// The handler alone: which Accept-Encoding values take gzip.
    @Test func acceptEncodingNegotiation() {
        func accepts(_ values: [String]) -> Bool {
            WebHandler.acceptsGzip(
                HTTPRequest(
                    method: "GET", target: "/metrics", path: "/metrics", query: "", version: .http11,
                    headers: values.map { (name: "accept-encoding", value: $0) }, body: []))
        }
        #expect(accepts(["gzip"]))
        #expect(accepts(["deflate", "gzip;q=0.2"]))
        #expect(accepts(["br;q=1.0,gzip;q=1.0"]))
        #expect(!accepts([]))
        #expect(!accepts(["gzip;q=0"]))
        #expect(!accepts(["gzip; q=0.0"]))
        #expect(!accepts(["identity"]))
        #expect(!accepts(["gzipped"]))
        #expect(!accepts(["*;q=0"]))
        #expect(!accepts(["gzip;q=0, *"]))
        #expect(accepts(["*"]))
    }

    static let promtool = executablePath("promtool")

    /// A plain scrape of a gzipped exposition passes promtool once inflated, like the plain scrapes CI lints.
    @Test(.enabled(if: promtool != nil, "promtool is not installed (apt-get install prometheus; CI installs it)"))
    func inflatedScrapePassesPromtool() async throws {
        let promtool = try #require(Self.promtool)
        let running = try Running(gzipAbove: 0)
        defer { running.stop() }
        #expect(await waitUntil { (try? running.get("/-/ready").status) == 200 })
        let gzipped = try running.scrape(acceptEncoding: "gzip")
        #expect(gzipped.header("content-encoding") == "gzip")
        let inflated = try #require(Gzip.inflate([gzipped.body]))
        let path = temporaryFile(suffix: ".prom")
        defer { unlink(path) }
        try writeFile(path, inflated)
        let child = try ChildProcess("/bin/sh", ["-c", "\(promtool) check metrics < \(path) 1>&2"])
        #expect(await child.wait(seconds: 30) == 0)
        #expect(child.standardError.isEmpty, "promtool: \(child.standardError)")
    }

    @Test func scrapesNeverCallTheAPI() async throws {
        let running = try Running()
        defer { running.stop() }
        #expect(await waitUntil { running.simulator.requests.count == 2 })
        for _ in 0..<50 { _ = try running.get("/metrics") }
        #expect(running.simulator.requests.count == 2)
    }

    @Test func readinessWaitsForEveryLocation() async throws {
        // Tokyo's first answer 5 s away: far longer than starting and asking takes on a busy machine
        // (with 800 ms, readiness was asked after Tokyo had answered, beside two CPU hogs).
        let running = try Running(faults: [Fault(delay: .seconds(5), latitude: 35.6762)])
        defer { running.stop() }
        #expect(try running.get("/-/ready").status == 503)
        #expect(try running.get("/-/healthy").status == 200)
        #expect(await waitUntil(seconds: 30) { (try? running.get("/-/ready").status) == 200 })
    }

    @Test func readyEvenWhenTheFirstPollFailed() async throws {
        let running = try Running(faults: [Fault(response: .status(500))])
        defer { running.stop() }
        #expect(await waitUntil { (try? running.get("/-/ready").status) == 200 })
        let metrics = try running.metrics()
        #expect(metrics.hasLine("openweather_up{location=\"London\",source=\"weather\"} 0"))
        #expect(metrics.hasLine("openweather_api_requests_total{code=\"500\",source=\"weather\"} 2"))
        #expect(!metrics.contains("openweather_temperature_celsius{"))
    }

    @Test func landingPageNotFoundAndMethodNotAllowed() async throws {
        let running = try Running(locations: ["<script>=1,2"])
        defer { running.stop() }
        let landing = try running.get("/")
        #expect(landing.status == 200)
        #expect(landing.header("content-type")?.hasPrefix("text/html") == true)
        #expect(landing.text.contains("&lt;script&gt;"))
        #expect(landing.text.contains("href=\"/metrics\""))
        #expect(!landing.text.contains("SECRET-KEY-42"))

        #expect(try running.get("/nope").status == 404)
        let post = try running.get("/metrics", method: "POST")
        #expect(post.status == 405)
        #expect(post.header("allow") == "GET, HEAD")
        #expect(try running.get("/-/reload", method: "GET").header("allow") == "POST, PUT")
    }

    /// As Prometheus: reloading over HTTP only with --web.enable-lifecycle.
    @Test func reloadOverHTTPNeedsTheLifecycleFlag() throws {
        let running = try Running()
        defer { running.stop() }
        let refused = try running.get("/-/reload", method: "POST")
        #expect(refused.status == 403)
        #expect(
            refused.text
                == """
                Lifecycle API is not enabled: start the exporter with --web.enable-lifecycle to reload over HTTP, \
                or send it SIGHUP\n
                """
        )
        #expect(running.exporter.reload() == nil)
    }

    @Test func demoBannerOnTheLandingPage() async throws {
        let running = try Running(demo: true)
        defer { running.stop() }
        #expect(try running.get("/").text.contains("simulated"))
    }

    @Test func thresholdsAreExposed() async throws {
        let running = try Running(
            locations: ["Hot=38,23.7,above=40", "Cold=60,10,below=-20", "Off=1,1,alerts=off", "Default=2,2"],
            extra: ["--alerts.temperature-above-celsius=35"])
        defer { running.stop() }
        let metrics = try running.metrics()
        #expect(metrics.hasLine("openweather_temperature_alert_threshold_celsius{location=\"Hot\",bound=\"above\"} 40"))
        #expect(
            metrics.hasLine("openweather_temperature_alert_threshold_celsius{location=\"Cold\",bound=\"below\"} -20"))
        #expect(
            metrics.hasLine("openweather_temperature_alert_threshold_celsius{location=\"Cold\",bound=\"above\"} 35"))
        #expect(
            metrics.hasLine("openweather_temperature_alert_threshold_celsius{location=\"Default\",bound=\"above\"} 35"))
        #expect(!metrics.contains("openweather_temperature_alert_threshold_celsius{location=\"Off\""))
        // Every place says whether its alerts are on: the rules without a threshold to join read it.
        #expect(metrics.hasLine("openweather_location_alerts_enabled{location=\"Off\"} 0"))
        for place in ["Hot", "Cold", "Default"] {
            #expect(metrics.hasLine("openweather_location_alerts_enabled{location=\"\(place)\"} 1"))
        }
    }

    /// The landing page shows each place's thresholds in the unit they were written in, and which
    /// places have their alerts off.
    @Test func landingPageShowsThresholdsAndAlertsOff() async throws {
        let running = try Running(
            locations: [
                "Phoenix=33.45,-112.07,above=100F,below=32.5F,gust=25,rain=1.1", "Off=1,1,alerts=off", "Default=2,2",
            ],
            extra: ["--alerts.temperature-above-celsius=35"])
        defer { running.stop() }
        let landing = try running.get("/").text
        #expect(landing.contains("<th>Alert thresholds</th>"), "\(landing)")
        #expect(
            landing.contains(
                "<td>above 100\u{A0}°F, below 32.5\u{A0}°F, gusts 25\u{A0}m/s, rain 1.1\u{A0}mm</td>"),
            "\(landing)")
        #expect(landing.contains("<td>above 35\u{A0}°C, rain 20\u{A0}mm</td>"), "\(landing)")
        #expect(landing.contains("<td>off</td>"), "\(landing)")
        #expect(
            landing.contains(
                "<p>Weather alerts are off (<code>alerts=off</code>) for Off: no weather alert fires there.</p>"),
            "\(landing)")
    }

    /// Issue 41: the heat and cold indices' thresholds are read again on reload, defaults and a place's own.
    @Test func indexThresholdsAreReadAgainOnReload() async throws {
        let file = temporaryFile(
            """
            alerts: {heat_index_above_celsius: 40}
            locations: [{name: London, latitude: 51.5074, longitude: -0.1278}]
            """)
        defer { unlink(file) }
        let running = try Running(locations: [], extra: ["--web.enable-lifecycle"], configFile: file)
        defer { running.stop() }
        #expect(
            await waitUntil {
                (try? running.metrics())?.hasLine(
                    "openweather_heat_index_alert_threshold_celsius{location=\"London\"} 40") == true
            })
        let handle = fopen(file, "w")!
        fputs(
            """
            alerts: {wind_chill_below_celsius: -22F}
            locations: [{name: London, latitude: 51.5074, longitude: -0.1278, alerts: {wet_bulb_above_celsius: 30}}]
            """, handle)
        fclose(handle)
        #expect(try running.get("/-/reload", method: "POST").status == 200)
        #expect(
            await waitUntil {
                (try? running.metrics())?.hasLine(
                    "openweather_wind_chill_alert_threshold_celsius{location=\"London\"} -30") == true
            })
        let metrics = try running.metrics()
        #expect(metrics.hasLine("openweather_wet_bulb_alert_threshold_celsius{location=\"London\"} 30"))
        #expect(
            metrics.hasLine(
                """
                openweather_thermal_alert_threshold_info{location="London",index="wind_chill",unit="fahrenheit"} 1
                """
            ))
        #expect(!metrics.contains("openweather_heat_index_alert_threshold_celsius{"), "the default is gone")
    }

    @Test func reloadAddsAndRemovesLocationsAndRefusesABadFile() async throws {
        let file = temporaryFile(#"{"locations": [{"name": "London", "latitude": 51.5074, "longitude": -0.1278}]}"#)
        defer { unlink(file) }
        let running = try Running(locations: [], extra: ["--web.enable-lifecycle"], configFile: file)
        defer { running.stop() }
        #expect(
            await waitUntil {
                (try? running.metrics())?.hasLine("openweather_up{location=\"London\",source=\"weather\"} 1") == true
            })

        let rewrite = { (text: String) in
            let handle = fopen(file, "w")!
            fputs(text, handle)
            fclose(handle)
        }
        rewrite(#"{"locations": [{"name": "Tokyo", "latitude": 35.6762, "longitude": 139.6503}]}"#)
        let reload = try running.get("/-/reload", method: "POST")
        #expect(reload.status == 200, "\(reload.text)")
        #expect(
            await waitUntil {
                (try? running.metrics())?.hasLine("openweather_up{location=\"Tokyo\",source=\"weather\"} 1") == true
            })
        #expect(try !running.metrics().contains("location=\"London\""))
        #expect(try running.metrics().hasLine("openweather_exporter_config_last_reload_successful 1"))

        rewrite(#"{"locations": [{"name": "Tokyo", "latitude": 135, "longitude": 139.6503}]}"#)
        let refused = try running.get("/-/reload", method: "POST")
        #expect(refused.status == 500)
        #expect(refused.text.contains("latitude"))
        let metrics = try running.metrics()
        #expect(metrics.hasLine("openweather_exporter_config_last_reload_successful 0"))
        #expect(metrics.hasLine("openweather_up{location=\"Tokyo\",source=\"weather\"} 1"))
        #expect(running.logs.all.contains { $0.contains("reload refused") })
    }

    /// A city name and a description carrying NUL, ESC and 40 KB (the simulator takes up to 64 KB) reach /metrics as
    /// short printable labels.
    @Test func upstreamLabelsArePrintableAndBounded() async throws {
        let barcelona = String(decoding: Fixture.bytes("current-barcelona-clouds.json"), as: UTF8.self)
            .replacing(#""name":"Barcelona""#, with: #""name":"Bar\u0000ce\u001b[2Jlona""#)
            .replacing(
                #""description":"algo de nubes""#,
                with: #""description":"\#(String(repeating: "x", count: 40_000))\u001b""#)
        let running = try Running(
            locations: ["London=51.5074,-0.1278"],
            faults: [Fault(response: .body(barcelona), path: "/data/2.5/weather")])
        defer { running.stop() }
        #expect(
            await waitUntil {
                (try? running.metrics())?.hasLine("openweather_up{location=\"London\",source=\"weather\"} 1") == true
            })
        let metrics = try running.metrics()
        #expect(metrics.contains(#"city="Barce[2Jlona""#), "\(metrics.prefix(2000))")
        #expect(metrics.contains("description=\"\(String(repeating: "x", count: 256))\""))
        #expect(!metrics.contains(String(repeating: "x", count: 257)))
        #expect(!metrics.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    }

    @Test func theKeyAppearsNowhere() async throws {
        let running = try Running(faults: [Fault(response: .status(401))])
        defer { running.stop() }
        #expect(await waitUntil { (try? running.get("/-/ready").status) == 200 })
        let everything = [try running.metrics(), try running.get("/").text, running.logs.all.joined(separator: "\n")]
        for text in everything { #expect(!text.contains("SECRET-KEY-42")) }
    }
}
