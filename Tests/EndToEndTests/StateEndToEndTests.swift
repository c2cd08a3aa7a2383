import Glibc
import Simulator
import TestSupport
import Testing

/// `--storage.path` with the real executable against a simulator that outlives it, so its request
/// log counts every request of every run.
@Suite(.serialized) struct StateEndToEndTests {
    static let locations = (0..<10).flatMap { ["--location", "City\($0)=\(10 + $0),\(20 + $0)"] }

    static func start(_ simulator: Simulator, directory: String, _ extra: [String] = []) throws -> (ChildProcess, UInt16) {
        let process = try ChildProcess(
            DemoModeTests.executable,
            ["--web.listen-address=127.0.0.1:0", "--openweather.url=\(simulator.baseURL)", "--storage.path=\(directory)"] + extra,
            environment: ["OPENWEATHER_API_KEY": "state-test-key"])
        let port = process.port(after: "address=127.0.0.1:")
        guard let port else { throw LoopbackHTTP.Failure(description: "no startup line: \(process.standardError)") }
        return (process, port)
    }

    static func temporaryDirectory() -> String {
        var template = Array("/tmp/owe-e2e-state-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func removeAll(_ directory: String) {
        _ = try? ChildProcess("/bin/rm", ["-rf", directory]).wait(seconds: 10)
    }

    static func sleep(_ seconds: Double) { usleep(UInt32(seconds * 1e6)) }

    /// A restart loop (`systemctl restart` in a hurry): 20 restarts within a minute, 10 locations
    /// polled every 10 minutes, cost 10 requests in all, and the last run serves all 10 at once.
    @Test func twentyRestartsInAMinuteCostOneRoundOfRequests() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let directory = Self.temporaryDirectory()
        defer { Self.removeAll(directory) }
        let arguments = Self.locations + ["--collector.weather.interval=10m"]
        var random = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let (process, _) = try Self.start(simulator, directory: directory, arguments)
            Self.sleep(Double.random(in: 0.3...1.5, using: &random))
            process.signal(SIGTERM)
            #expect(process.wait(seconds: 10) == 0, "round \(round): \(process.standardError)")
            #expect(!process.standardError.contains("level=warn"), "round \(round): \(process.standardError)")
        }
        let polled = simulator.requests.filter { $0.path == "/data/2.5/weather" }
        #expect(polled.count <= 10, "\(polled.map { ($0.latitude, $0.time) })")
        let (process, port) = try Self.start(simulator, directory: directory, arguments)
        defer { process.signal(SIGKILL); _ = process.wait(seconds: 5) }
        #expect(waitUntil(seconds: 20) { (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200 })
        let text = (try? LoopbackHTTP.request(port: port, path: "/metrics").text) ?? ""
        #expect(text.split(separator: "\n").count { $0.hasPrefix("openweather_temperature_celsius{") } == 10, "\(text)")
        #expect(simulator.requests.filter { $0.path == "/data/2.5/weather" }.count == 10)
    }

    /// OpenWeather blocks the key for an hour: a restart does not send a request before it is over.
    @Test func anHourOf429PauseSurvivesARestart() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        simulator.setFault(Fault(response: .status(429, retryAfterSeconds: 3600)))
        let directory = Self.temporaryDirectory()
        defer { Self.removeAll(directory) }
        let arguments = ["--location", "Zocca=44.34,10.99"]
        let (first, _) = try Self.start(simulator, directory: directory, arguments)
        #expect(waitUntil(seconds: 10) { first.standardError.contains("rate limit hit (429)") })
        first.signal(SIGTERM)
        #expect(first.wait(seconds: 10) == 0)
        #expect(simulator.requests.count == 1)
        simulator.clearFaults()

        let (second, port) = try Self.start(simulator, directory: directory, arguments)
        defer { second.signal(SIGKILL); _ = second.wait(seconds: 5) }
        #expect(second.standardError.contains("state restored"))
        #expect(second.standardError.contains("rate_limit_pause=59m") || second.standardError.contains("rate_limit_pause=1h"), "\(second.standardError)")
        // The 429 is the last word on the key: until the pause ends, /-/ready says so and nothing is asked.
        #expect(waitUntil(seconds: 5) { (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200 })
        Self.sleep(3)
        #expect(simulator.requests.count == 1, "no request during the pause: \(simulator.requests.map(\.time))")
    }

    /// `kill -9` of the real exporter while it polls and writes: every start finds a usable state.
    @Test func killNineNeverLeavesAnUnusableState() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let directory = Self.temporaryDirectory()
        defer { Self.removeAll(directory) }
        let arguments = Self.locations + ["--openweather.max-requests-per-minute=6000"]
        var random = SystemRandomNumberGenerator()
        for round in 0..<10 {
            let (process, _) = try Self.start(simulator, directory: directory, arguments)
            Self.sleep(Double.random(in: 0.05...1.5, using: &random))
            process.signal(SIGKILL)
            _ = process.wait(seconds: 10)
            #expect(!process.standardError.contains("the state file cannot be used"), "round \(round): \(process.standardError)")
            #expect(!process.standardError.contains("cannot read the state file"), "round \(round): \(process.standardError)")
            if round > 0 { #expect(process.standardError.contains("state restored"), "round \(round): \(process.standardError)") }
        }
    }

    @Test func aStateDirectoryThatCannotBeWrittenStopsTheStart() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let process = try ChildProcess(
            DemoModeTests.executable, ["--location", "Zocca=44.34,10.99", "--storage.path=/proc/self/state"],
            environment: ["OPENWEATHER_API_KEY": "state-test-key"])
        #expect(process.wait(seconds: 10) == 2)
        #expect(process.standardError.contains("--storage.path \"/proc/self/state\": cannot create the state directory"), "\(process.standardError)")
    }
}
