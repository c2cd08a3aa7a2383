import Glibc
import TestSupport
import Testing

/// Signals to the real executable: reload, shutdown in the middle of work, and a crash.
extension DemoModeTests {
    static func writeFile(_ path: String, _ text: String) {
        let handle = fopen(path, "w")!
        fputs(text, handle)
        fclose(handle)
    }

    static func temporaryPath(_ name: String) -> String {
        "/tmp/owe-e2e-\(getpid())-\(name)"
    }

    /// The demo simulator's port, from the `simulator=` field of the startup log.
    static func simulatorPort(_ process: ChildProcess) -> UInt16? {
        var port: UInt16?
        _ = waitUntil(seconds: 10) {
            let log = process.standardError
            guard let start = log.firstRange(of: "simulator=http://127.0.0.1:")?.upperBound else { return false }
            port = UInt16(log[start...].prefix { $0.isNumber })
            return port != nil
        }
        return port
    }

    static func metrics(_ port: UInt16) -> String {
        (try? LoopbackHTTP.request(port: port, path: "/metrics").text) ?? ""
    }

    @Test func sighupReloadsTheConfigFileAndRefusesABadOne() throws {
        let file = Self.temporaryPath("reload.json")
        defer { unlink(file) }
        Self.writeFile(file, #"{"locations": [{"name": "Alpha", "latitude": 10, "longitude": 10}]}"#)
        let (process, port) = try Self.startDemo(["--config.file=\(file)"])
        #expect(waitUntil { Self.metrics(port).contains("openweather_up{location=\"Alpha\",source=\"weather\"} 1") })

        Self.writeFile(file, #"{"locations": [{"name": "Beta", "latitude": 20, "longitude": 20}]}"#)
        process.signal(SIGHUP)
        #expect(waitUntil { Self.metrics(port).contains("openweather_up{location=\"Beta\",source=\"weather\"} 1") })
        var metrics = Self.metrics(port)
        #expect(!metrics.contains("location=\"Alpha\""))
        #expect(metrics.contains("openweather_exporter_config_last_reload_successful 1"))
        let loaded = metrics.split(separator: "\n").first { $0.hasPrefix("openweather_exporter_config_last_reload_success_timestamp_seconds ") }
        #expect(process.standardError.contains("configuration reloaded"))

        Self.writeFile(file, #"{"locations": [{"name": "Beta", "latitude": 200, "longitude": 20}]}"#)
        process.signal(SIGHUP)
        #expect(waitUntil { Self.metrics(port).contains("openweather_exporter_config_last_reload_successful 0") })
        metrics = Self.metrics(port)
        #expect(metrics.contains("openweather_up{location=\"Beta\",source=\"weather\"} 1"), "the old configuration keeps running")
        let stillLoaded = metrics.split(separator: "\n").first { $0.hasPrefix("openweather_exporter_config_last_reload_success_timestamp_seconds ") }
        #expect(loaded != nil && stillLoaded == loaded, "the timestamp is of the last successful load")
        #expect(process.standardError.split(separator: "\n").contains {
            $0.contains("level=error") && $0.contains("reload refused") && $0.contains("latitude")
        })

        process.signal(SIGTERM)
        #expect(process.wait(seconds: 2.5) == 0)
    }

    /// Polls hang on the simulator's 30 s delay; shutdown does not wait for them.
    @Test func sigtermDuringASlowPollExitsAtOnce() throws {
        let (process, port) = try Self.startDemo(["--poll.interval=1s"])
        let simulator = try #require(Self.simulatorPort(process))
        // Every demo source's first round at the budget's pace (12 requests, one a second).
        #expect(waitUntil(seconds: 30) { (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200 })
        #expect(try LoopbackHTTP.request(port: simulator, method: "POST", path: "/_simulator/fault?delay=30s").status == 200)
        usleep(1_500_000)  // the next round of polls is now waiting on the simulator
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        process.signal(SIGTERM)
        #expect(process.wait(seconds: 2.5) == 0)
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        #expect(end.tv_sec - start.tv_sec <= 2)
    }

    /// A scrape in flight when SIGTERM arrives: a client that keeps reading gets the whole
    /// exposition; one that stalls gets a response shorter than its Content-Length, which
    /// Prometheus reports as a failed scrape. Neither sees a cut response that looks complete.
    @Test func sigtermDuringScrapesNeverPassesOffACutResponseAsComplete() throws {
        let file = Self.temporaryPath("big.json")
        defer { unlink(file) }
        // 30 locations with long names: an exposition of about 130 kB (each poll re-renders it,
        // which a debug build does slowly, so not more).
        let locations = (0..<30).map { i in
            #"{"name": "\#(String(repeating: "long-name-", count: 12))\#(i)", "latitude": \#(i % 140 - 70), "longitude": \#(i - 150)}"#
        }
        Self.writeFile(file, #"{"locations": ["# + locations.joined(separator: ",") + "]}")
        let (process, port) = try Self.startDemo([
            "--config.file=\(file)", "--poll.interval=1m", "--openweather.max-requests-per-minute=100000",
        ])
        #expect(waitUntil(seconds: 20) { (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200 })
        let full = try LoopbackHTTP.request(port: port, path: "/metrics", timeoutSeconds: 10)
        #expect(full.body.count > 100_000, "the exposition should be large: \(full.body.count) bytes")

        let reader = try LoopbackHTTP.connect(port: port, timeoutSeconds: 5)
        defer { close(reader) }
        let staller = try LoopbackHTTP.connect(port: port, timeoutSeconds: 5)
        defer { close(staller) }
        var small: Int32 = 4096
        setsockopt(staller, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        try LoopbackHTTP.send(reader, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        try LoopbackHTTP.send(staller, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        var first = [UInt8](repeating: 0, count: 1000)
        let got = first.withUnsafeMutableBytes { recv(reader, $0.baseAddress, $0.count, 0) }
        process.signal(SIGTERM)
        let rest = LoopbackHTTP.readAll(reader)
        #expect(process.wait(seconds: 2.5) == 0)
        let whole = try LoopbackHTTP.parse(Array(first.prefix(max(got, 0))) + rest)
        #expect(Int(whole.header("content-length") ?? "") == whole.body.count, "a reading client gets it all")

        // The stalled client: whatever arrived (possibly nothing, if the close was a reset) is
        // never more than declared, and less means the stream ended early, which clients detect.
        let stalled = LoopbackHTTP.readAll(staller)
        let separator: [UInt8] = [13, 10, 13, 10]
        if let headEnd = stalled.indices.first(where: { stalled[$0...].starts(with: separator) }) {
            let response = try LoopbackHTTP.parse(stalled)
            let declared = try #require(Int(response.header("content-length") ?? ""))
            #expect(stalled.count - headEnd - 4 <= declared)
            #expect(declared > 100_000)
        }
    }

    /// The key in every place the process writes, at debug level, through upstream failures, a
    /// refused reload and a crash report (whose register dumps main.swift switches off).
    @Test func theKeyIsInNoLogLineNorCrashReport() throws {
        let key = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
        let file = Self.temporaryPath("secrets.json")
        defer { unlink(file) }
        Self.writeFile(file, #"{"locations": [{"name": "Alpha", "latitude": 10, "longitude": 10}]}"#)
        let process = try ChildProcess(
            Self.executable,
            ["--demo", "--web.listen-address=127.0.0.1:0", "--log.level=debug", "--poll.interval=1s", "--config.file=\(file)"],
            environment: ["OPENWEATHER_API_KEY": key])
        let simulator = try #require(Self.simulatorPort(process))
        for fault in ["status=401", "status=500", "malformed=truncated", "status=429&retry_after=1", "close=1"] {
            _ = try LoopbackHTTP.request(port: simulator, method: "DELETE", path: "/_simulator/fault")
            _ = try LoopbackHTTP.request(port: simulator, method: "POST", path: "/_simulator/fault?\(fault)")
            usleep(1_200_000)
        }
        Self.writeFile(file, #"{"locations": [{"name": "Alpha", "latitude": 100, "longitude": 10}]}"#)
        process.signal(SIGHUP)
        #expect(waitUntil { process.standardError.contains("reload refused") })
        #expect(process.standardError.contains("rejects the API key") && process.standardError.contains("code=500"))

        process.signal(SIGSEGV)
        #expect(waitUntil(seconds: 20) { process.standardError.contains("Backtrace took") }, "no crash report")
        let output = process.standardError
        #expect(output.contains("Program crashed"))
        #expect(!output.contains("Registers:") && !output.contains("rip 0x"), "registers are dumped")
        #expect(!output.contains(key))
    }
}
