import Glibc
import TestSupport
import Testing

/// Starts the real executable, as a user would, and talks to it over TCP.
@Suite(.endToEnd) struct DemoModeTests {
    /// The executable sits beside the test bundle in the build directory.
    static let executable: String = {
        var parts = CommandLine.arguments[0].split(separator: "/", omittingEmptySubsequences: false)
        while let last = parts.last, !last.hasSuffix(".xctest") && parts.count > 1 { parts.removeLast() }
        parts.removeLast()
        return parts.joined(separator: "/") + "/openweather-exporter"
    }()

    static let cities = ["London", "New York", "Tokyo", "Sydney", "La Rinconada"]

    static let weatherMetrics = [
        "temperature_celsius", "feels_like_celsius", "temperature_min_celsius", "temperature_max_celsius",
        "humidity_ratio",
        "pressure_pascals", "ground_level_pressure_pascals", "wind_speed_meters_per_second",
        "wind_gust_meters_per_second",
        "wind_direction_degrees", "cloudiness_ratio", "visibility_meters", "rain_1h_meters", "snow_1h_meters",
        "sunrise_timestamp_seconds", "sunset_timestamp_seconds", "observation_timestamp_seconds",
        "timezone_offset_seconds",
        "condition_id", "condition_info", "location_info", "up", "last_success_timestamp_seconds",
        "poll_duration_seconds",
        "air_quality_index", "air_pollutant_grams_per_cubic_meter", "air_pollution_observation_timestamp_seconds",
    ]

    /// Starts `--demo` on an ephemeral port and returns the process and its port. The request budget
    /// is given as a real flag, as a paying user would, unless `budget` is nil (the demo's own default,
    /// `Settings.demoMaxRequestsPerMinute`, the same 6000).
    static func startDemo(
        _ extra: [String] = [], environment: [String: String] = [:], budget: Int? = 6000
    ) async throws -> (ChildProcess, UInt16) {
        let arguments =
            ["--demo", "--web.listen-address=127.0.0.1:0"]
            + (budget.map { ["--openweather.max-requests-per-minute=\($0)"] } ?? []) + extra
        let process = try ChildProcess(executable, arguments, environment: environment)
        guard let port = await process.port(after: "address=127.0.0.1:") else {
            throw TestFailure("no startup line: \(process.standardError)")
        }
        return (process, port)
    }

    /// Places by name and postal code resolve through the simulator's geocoder; a made-up one is down
    /// with a reason, and the rest run.
    @Test func demoResolvesPlacesByName() async throws {
        let (process, port) = try await Self.startDemo([
            "--location", "Paris", "--location", "Office=zip:94040,US", "--location", "Nowhere=Xyzzyville,above=30",
            "--location", "Quiet=1,2,alerts=off",
        ])
        defer {
            process.signal(SIGKILL)
            _ = process.wait(seconds: 5)
        }
        #expect(
            await waitUntil(seconds: 30) { (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200 })
        let text = try LoopbackHTTP.request(port: port, path: "/metrics").text
        #expect(
            text.contains(
                #"openweather_location_info{location="Paris",city="Paris",country="FR",latitude="48.8566",longitude="2.3522",state="Ile-de-France"} 1"#
            ), "\(text)")
        #expect(text.contains(#"openweather_location_info{location="Office",city="Mountain View",country="US","#))
        #expect(text.contains(#"openweather_up{location="Nowhere",source="geocoding"} 0"#))
        #expect(text.contains(#"openweather_up{location="Paris",source="weather"} 1"#))
        #expect(text.contains(#"openweather_temperature_alert_threshold_celsius{location="Nowhere",bound="above"} 30"#))
        #expect(!text.contains(#"openweather_temperature_celsius{location="Nowhere"}"#))
        #expect(
            await waitUntil { process.standardError.contains("no place matches \\\"Xyzzyville\\\"") },
            "\(process.standardError)")
        let landing = try LoopbackHTTP.request(port: port, path: "/").text
        #expect(landing.contains("no place matches"))
        // The place with its alerts off is named at start; the demo of one's own places has no showcase spell.
        let log = process.standardError
        #expect(
            log.contains(
                "msg=\"weather alerts are off (alerts=off) for 1 of 4 locations: no weather alert fires there\" locations=Quiet"
            ), "\(log)")
        #expect(!log.contains("demo showcase"))
    }

    /// deploy/docs/operations.md's promise: SIGTERM or SIGINT ends the process with status 0 within 2 s.
    static func stopsWithinTwoSeconds(
        _ process: ChildProcess, signal: Int32 = SIGTERM, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let start = monotonicSeconds()
        process.signal(signal)
        let status = process.wait(seconds: 2)
        #expect(
            status == 0,
            "exit status \(status.map(String.init) ?? "none: still running after 2 s"); the log's end: \(process.standardError.suffix(3000))",
            sourceLocation: sourceLocation)
        #expect(monotonicSeconds() - start <= 2, sourceLocation: sourceLocation)
    }

    @Test func demoServesEveryMetricForEveryCity() async throws {
        let (process, port) = try await Self.startDemo()
        #expect(
            await waitUntil(seconds: 20) {
                (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200
            })
        let response = try LoopbackHTTP.request(port: port, path: "/metrics")
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(response.header("content-length") == String(response.body.count))
        // Every source the demo polls, as the exporter says (one openweather_api_requests_today per source
        // of its configuration), is answered by the simulator: a source without its endpoint there is 0.
        let today = "openweather_api_requests_today{source=\""
        let polled = response.text.split(separator: "\n").filter { $0.hasPrefix(today) }
            .map { $0.dropFirst(today.count).prefix { $0 != "\"" } }
        #expect(polled.contains("weather") && polled.contains("air_pollution"), "\(polled)")
        for city in Self.cities {
            for metric in Self.weatherMetrics {
                #expect(response.text.contains("openweather_\(metric){location=\"\(city)\""), "\(metric) for \(city)")
            }
            for source in polled {
                let up = response.text.hasLine("openweather_up{location=\"\(city)\",source=\"\(source)\"} 1")
                #expect(up, "\(source) is not up at \(city): does the simulator answer its endpoint?")
            }
        }
        for metric in [
            "openweather_api_requests_total{code=\"200\",source=\"weather\"}", "openweather_exporter_build_info{",
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ", "process_open_fds ", "process_max_fds ", "process_start_time_seconds ",
            "process_virtual_memory_bytes ",
        ] {
            #expect(response.text.contains(metric), "\(metric)")
        }
        let log = process.standardError
        #expect(log.contains("SIMULATED"))
        let landing = try LoopbackHTTP.request(port: port, path: "/")
        #expect(landing.text.contains("simulated"))
        #expect(landing.text.contains("New York"))

        // Issue 29 §3: every demo place has thresholds, and La Rinconada's forecast is below its 0 °C.
        for city in Self.cities {
            #expect(
                response.text.contains(
                    "openweather_temperature_alert_threshold_celsius{location=\"\(city)\",bound=\"below\"} "), "\(city)"
            )
            #expect(
                response.text.contains(
                    "openweather_temperature_alert_threshold_celsius{location=\"\(city)\",bound=\"above\"} "), "\(city)"
            )
        }
        #expect(
            response.text.hasLine(
                "openweather_temperature_alert_threshold_celsius{location=\"La Rinconada\",bound=\"below\"} 0"))
        let low = response.text.split(separator: "\n").first {
            $0.hasPrefix("openweather_forecast_temperature_min_celsius{location=\"La Rinconada\",window_hours=\"24\"} ")
        }
        let lowValue = try #require(
            low.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }, "\(response.text)")
        #expect(lowValue < 0, "La Rinconada's 24-hour forecast minimum \(lowValue) °C crosses its below=0")
        // Issue 40: the showcase, Tokyo, whose forecast alone (the cold spell plain --demo gives the
        // simulator) is below its -2 °C, so its forecast alert is the one no current alert mutes.
        func value(_ prefix: String) -> Double? {
            response.text.split(separator: "\n").first { $0.hasPrefix(prefix) }
                .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        }
        let tokyoLow = try #require(
            value("openweather_forecast_temperature_min_celsius{location=\"Tokyo\",window_hours=\"24\"} "))
        let tokyoNow = try #require(value("openweather_temperature_celsius{location=\"Tokyo\"} "))
        #expect(tokyoLow < -2 && tokyoNow > -2, "Tokyo: \(tokyoNow) °C now, \(tokyoLow) °C in the forecast")
        #expect(log.contains("demo showcase: the simulator forecasts Tokyo a cold spell that never comes"), "\(log)")
        // The commands fit the 60em column (80 characters of monospace) and wrap on a phone; they say
        // that shifts add up.
        #expect(landing.text.contains("<pre class=\"demo\">"))
        #expect(landing.text.contains("pre.demo{white-space:pre-wrap;overflow-wrap:anywhere}"))
        #expect(landing.text.contains("Shifts add up"))
        #expect(Self.longestLine(inside: "pre", of: landing.text) <= 80, "\(landing.text)")
        // Issue 50: phones get a viewport, and the table has no unbreakable text wider than their column:
        // a place's cells as a block each, air_pollution_forecast breakable after an underscore.
        #expect(landing.text.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
        #expect(landing.text.contains("@media (max-width:40em){table,tbody,tr,td{display:block}"), "\(landing.text)")
        #expect(Self.longestWord(inside: "table", of: landing.text) <= 16, "\(landing.text)")
        // Every threshold a demo place has, the indices' too, each in the unit it was written in.
        #expect(landing.text.contains("heat index above 86\u{A0}°F"), "\(landing.text)")
        #expect(landing.text.contains("wind chill below -15\u{A0}°C"), "\(landing.text)")
        // The simulator's address and controls: logged plainly and shown on the landing page.
        let simulator = try #require(
            log.firstRange(of: "simulator=http://127.0.0.1:").map {
                String(log[$0.lowerBound...].dropFirst("simulator=".count).prefix { $0 != " " && $0 != "\n" })
            })
        #expect(log.contains("demo simulator: make a place hot, cold or failing"))
        #expect(landing.text.contains("\(simulator)/_simulator/weather?lat=51.51&amp;shift=35"), "\(landing.text)")
        #expect(landing.text.contains("<a href=\"\(simulator)/_simulator/\">"))
        let simulatorPort = try #require(UInt16(simulator.split(separator: ":").last!))
        #expect(
            try LoopbackHTTP.request(port: simulatorPort, path: "/_simulator/").text.contains(
                "/_simulator/fault?lat=51.51&status=500"))

        Self.stopsWithinTwoSeconds(process)
    }

    /// The longest line of the first `element` of a page, in characters, as shown (`&amp;` as one).
    static func longestLine(inside element: String, of page: String) -> Int {
        guard let start = page.firstRange(of: "<\(element)"), let end = page.firstRange(of: "</\(element)>") else {
            return Int.max
        }
        let text = page[start.upperBound..<end.lowerBound].replacing("&amp;", with: "&")
        return text.split(separator: "\n").map(\.count).max() ?? 0
    }

    /// The longest run a browser cannot break in the first `element` of a page: spaces, tag and cell
    /// boundaries and `<wbr>` break, a no-break space does not.
    static func longestWord(inside element: String, of page: String) -> Int {
        guard let start = page.firstRange(of: "<\(element)"), let end = page.firstRange(of: "</\(element)>") else {
            return Int.max
        }
        var text = ""
        var inTag = false
        for character in page[start.lowerBound..<end.upperBound] {
            if character == "<" { inTag = true }
            if !inTag { text.append(character) }
            if character == ">" {
                inTag = false
                text.append(" ")
            }
        }
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(\.count).max() ?? 0
    }

    @Test func sigintStopsPromptlyToo() async throws {
        let (process, _) = try await Self.startDemo()
        Self.stopsWithinTwoSeconds(process, signal: SIGINT)
    }

    @Test func badFlagsExitWithAClearMessage() async throws {
        let process = try ChildProcess(Self.executable, ["--demo", "--web.listen-adress=:0"])
        #expect(await process.wait(seconds: 5) == 2)
        #expect(process.standardError.contains("unknown flag --web.listen-adress (did you mean --web.listen-address?)"))
    }

    @Test func missingKeySuggestsDemo() async throws {
        let process = try ChildProcess(Self.executable, ["--location", "A=1,2"])
        #expect(await process.wait(seconds: 5) == 2)
        #expect(process.standardError.contains("--demo"))
    }

    @Test func addressInUseIsAClearError() async throws {
        let (first, port) = try await Self.startDemo()
        let second = try ChildProcess(Self.executable, ["--demo", "--web.listen-address=127.0.0.1:\(port)"])
        #expect(await second.wait(seconds: 5) == 1)
        #expect(second.standardError.lowercased().contains("in use"))
        Self.stopsWithinTwoSeconds(first)
    }

    /// deploy/docs/operations.md's row for running out of descriptors: a warning, no exit, and accepting again once
    /// descriptors are free. (That the pause does not spin is measured by Tests/reliability.)
    @Test(.enabled(if: executablePath("prlimit") != nil, "prlimit (util-linux) is not installed"))
    func outOfDescriptorsItWarnsStaysUpAndRecovers() async throws {
        let process = try ChildProcess(
            "prlimit", ["--nofile=48:48", Self.executable, "--demo", "--web.listen-address=127.0.0.1:0"])
        let port = try #require(process.port(after: "address=127.0.0.1:"), "\(process.standardError)")
        #expect(
            await waitUntil(seconds: 20) { (try? LoopbackHTTP.request(port: port, path: "/-/healthy").status) == 200 })
        // Half requests keep the accepted connections open; the kernel's backlog takes the rest.
        var held: [Int32] = []
        for _ in 0..<80 {
            guard let fd = try? LoopbackHTTP.connect(port: port, timeoutSeconds: 1) else { break }
            try? LoopbackHTTP.send(fd, "GET /-/healthy HTTP/1.1\r\nHost: x\r\n")
            held.append(fd)
        }
        #expect(
            await waitUntil(seconds: 10) {
                process.standardError.contains("cannot accept connections: too many open files")
            },
            "no warning: \(process.standardError.suffix(500))")
        #expect(await process.wait(seconds: 0) == nil, "the exporter exited when out of descriptors")
        // Paused, not spinning: the event-loop threads use almost no CPU while accepting is paused,
        // however long the window turns out (an async wait may resume late on a busy machine); a
        // loop retrying accept at once uses whatever CPU it gets, over 10 ticks a second even at
        // a load of 16 on 2 cores. (Their scheduler states, sampled before, read "runnable" for a
        // sleeping loop woken by its timers on a loaded machine: 24 of 40 samples once.)
        let startTicks = Self.eventLoopTicks(process.pid)
        let start = monotonicSeconds()
        var used = 0
        _ = await waitUntil(seconds: 1) {
            used = (Self.eventLoopTicks(process.pid) ?? 0) - (startTicks ?? 0)
            return used > 20
        }
        let rate = Double(used) / max(monotonicSeconds() - start, 0.001)
        #expect(
            startTicks != nil && rate < 5,
            "the accept loop spins while out of descriptors: \(used) ticks of CPU (1/100 s) in \(monotonicSeconds() - start) s"
        )
        for fd in held { close(fd) }
        // The exporter (sanitized in those runs) must close its ends of 80 connections and take what
        // waits in the backlog, at most 1 s of pause after the last refused accept; 10 s was missed
        // once by the whole suite under ThreadSanitizer beside two CPU hogs (1 of 6 runs; the test
        // alone passed 7 of 7 there). The bound guards against never accepting again.
        #expect(
            await waitUntil(seconds: 30) {
                (try? LoopbackHTTP.request(port: port, path: "/-/healthy", timeoutSeconds: 1).status) == 200
            },
            "not accepting again once the descriptors were free")
        Self.stopsWithinTwoSeconds(process)
    }

    /// The CPU time (user + system, in clock ticks of 1/100 s) of `pid`'s HTTP event-loop threads,
    /// from /proc; nil when there are none.
    static func eventLoopTicks(_ pid: pid_t) -> Int? {
        guard let directory = opendir("/proc/\(pid)/task") else { return nil }
        defer { closedir(directory) }
        var ticks: Int?
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.first?.isNumber == true,
                let comm = try? readFile("/proc/\(pid)/task/\(name)/comm"),
                String(decoding: comm, as: UTF8.self).hasPrefix("http-loop"),
                let stat = try? readFile("/proc/\(pid)/task/\(name)/stat"),
                let end = stat.lastIndex(of: UInt8(ascii: ")")), end + 2 < stat.count
            else { continue }
            // After "comm) ": state, ppid, ... utime is the 12th field and stime the 13th.
            let fields = String(decoding: stat[(end + 2)...], as: UTF8.self).split(separator: " ")
            guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { continue }
            ticks = (ticks ?? 0) + user + system
        }
        return ticks
    }

    /// Every flag of the deploy reference's tables is in `--help`, with its default where it gives one.
    @Test func helpListsTheFlags() async throws {
        let process = try ChildProcess(Self.executable, ["--help"])
        #expect(await process.wait(seconds: 5) == 0)
        let help = process.standardOutput
        let readme = try deployReference()
        var rows = 0
        for row in readme.split(separator: "\n") where row.hasPrefix("| `--") {
            let cells = row.split(separator: "|").map {
                String($0.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
            }
            for flag in cells[0].split(separator: "`").filter({ $0.hasPrefix("--") }) {
                let name = String(flag.prefix { $0 != " " && $0 != "=" })
                rows += 1
                guard let start = help.firstRange(of: "  " + name)?.lowerBound else {
                    Issue.record("--help does not list \(name)")
                    continue
                }
                // The flag's block runs to the next flag.
                let block = help[start...].dropFirst(2).split(separator: "\n  --", maxSplits: 1).first ?? ""
                let defaultCell = cells.count > 1 ? cells[1] : ""
                if defaultCell.hasPrefix("`"), defaultCell.hasSuffix("`"), defaultCell.filter({ $0 == "`" }).count == 2
                {
                    let value = defaultCell.dropFirst().dropLast()
                    #expect(
                        block.contains("(default: \(value))"),
                        "\(name): deploy reference default \(value), --help: \(block)")
                }
            }
        }
        #expect(rows >= 20, "the deploy reference's flag tables were not found (\(rows) rows)")
    }
}
