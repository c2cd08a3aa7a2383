import Glibc
import TestSupport
import Testing

/// Starts the real executable, as a user would, and talks to it over TCP.
@Suite(.serialized) struct DemoModeTests {
    /// The executable sits beside the test bundle in the build directory.
    static let executable: String = {
        var parts = CommandLine.arguments[0].split(separator: "/", omittingEmptySubsequences: false)
        while let last = parts.last, !last.hasSuffix(".xctest") && parts.count > 1 { parts.removeLast() }
        parts.removeLast()
        return parts.joined(separator: "/") + "/openweather-exporter"
    }()

    static let cities = ["London", "New York", "Tokyo", "Sydney"]

    static let weatherMetrics = [
        "temperature_celsius", "feels_like_celsius", "temperature_min_celsius", "temperature_max_celsius", "humidity_ratio",
        "pressure_pascals", "ground_level_pressure_pascals", "wind_speed_meters_per_second", "wind_gust_meters_per_second",
        "wind_direction_degrees", "cloudiness_ratio", "visibility_meters", "rain_1h_meters", "snow_1h_meters",
        "sunrise_timestamp_seconds", "sunset_timestamp_seconds", "observation_timestamp_seconds", "timezone_offset_seconds",
        "condition_id", "condition_info", "location_info", "up", "last_success_timestamp_seconds", "poll_duration_seconds",
        "air_quality_index", "air_pollutant_grams_per_cubic_meter", "air_pollution_observation_timestamp_seconds",
    ]

    /// Starts `--demo` on an ephemeral port and returns the process and its port.
    static func startDemo(_ extra: [String] = []) throws -> (ChildProcess, UInt16) {
        let process = try ChildProcess(executable, ["--demo", "--web.listen-address=127.0.0.1:0"] + extra)
        var port: UInt16?
        _ = waitUntil(seconds: 10) {
            let marker = "address=127.0.0.1:"
            guard let line = process.standardError.split(separator: "\n").first(where: { $0.contains(marker) }),
                  let start = line.firstRange(of: marker)?.upperBound
            else { return false }
            port = UInt16(line[start...].prefix { $0.isNumber })
            return port != nil
        }
        guard let port else { throw LoopbackHTTP.Failure(description: "no startup line: \(process.standardError)") }
        return (process, port)
    }

    /// Places by name and postal code resolve through the simulator's geocoder; a made-up one is down
    /// with a reason, and the rest run.
    @Test func demoResolvesPlacesByName() throws {
        let (process, port) = try Self.startDemo([
            "--location", "Paris", "--location", "Office=zip:94040,US", "--location", "Nowhere=Xyzzyville,above=30",
        ])
        defer { process.signal(SIGKILL); _ = process.wait(seconds: 5) }
        #expect(waitUntil(seconds: 20) { (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200 })
        let text = try LoopbackHTTP.request(port: port, path: "/metrics").text
        #expect(text.contains(#"openweather_location_info{location="Paris",city="Paris",country="FR",latitude="48.8566",longitude="2.3522",state="Ile-de-France"} 1"#), "\(text)")
        #expect(text.contains(#"openweather_location_info{location="Office",city="Mountain View",country="US","#))
        #expect(text.contains(#"openweather_up{location="Nowhere",source="geocoding"} 0"#))
        #expect(text.contains(#"openweather_up{location="Paris",source="weather"} 1"#))
        #expect(text.contains(#"openweather_temperature_alert_threshold_celsius{location="Nowhere",bound="above"} 30"#))
        #expect(!text.contains(#"openweather_temperature_celsius{location="Nowhere"}"#))
        #expect(process.standardError.contains("no place matches \\\"Xyzzyville\\\""), "\(process.standardError)")
        let landing = try LoopbackHTTP.request(port: port, path: "/").text
        #expect(landing.contains("no place matches"))
    }

    @Test func demoServesEveryMetricForEveryCity() throws {
        let (process, port) = try Self.startDemo()
        #expect(waitUntil(seconds: 20) {
            (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200
        })
        let response = try LoopbackHTTP.request(port: port, path: "/metrics")
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(response.header("content-length") == String(response.body.count))
        for city in Self.cities {
            for metric in Self.weatherMetrics {
                #expect(response.text.contains("openweather_\(metric){location=\"\(city)\""), "\(metric) for \(city)")
            }
            #expect(response.text.contains("openweather_up{location=\"\(city)\",source=\"weather\"} 1"))
            #expect(response.text.contains("openweather_up{location=\"\(city)\",source=\"air-pollution\"} 1"))
        }
        for metric in ["openweather_api_requests_total{code=\"200\",source=\"weather\"}", "openweather_exporter_build_info{", "process_cpu_seconds_total ",
                       "process_resident_memory_bytes ", "process_open_fds ", "process_max_fds ", "process_start_time_seconds ",
                       "process_virtual_memory_bytes "] {
            #expect(response.text.contains(metric), "\(metric)")
        }
        let log = process.standardError
        #expect(log.contains("SIMULATED"))
        let landing = try LoopbackHTTP.request(port: port, path: "/")
        #expect(landing.text.contains("simulated"))
        #expect(landing.text.contains("New York"))

        process.signal(SIGTERM)
        #expect(process.wait(seconds: 2.5) == 0)
    }

    @Test func sigintStopsPromptlyToo() throws {
        let (process, _) = try Self.startDemo()
        process.signal(SIGINT)
        #expect(process.wait(seconds: 2.5) == 0)
    }

    @Test func badFlagsExitWithAClearMessage() throws {
        let process = try ChildProcess(Self.executable, ["--demo", "--poll.intervl=5m"])
        #expect(process.wait(seconds: 5) == 2)
        #expect(process.standardError.contains("unknown flag --poll.intervl (did you mean --poll.interval?)"))
    }

    @Test func missingKeySuggestsDemo() throws {
        let process = try ChildProcess(Self.executable, ["--location", "A=1,2"])
        #expect(process.wait(seconds: 5) == 2)
        #expect(process.standardError.contains("--demo"))
    }

    @Test func addressInUseIsAClearError() throws {
        let (first, port) = try Self.startDemo()
        let second = try ChildProcess(Self.executable, ["--demo", "--web.listen-address=127.0.0.1:\(port)"])
        #expect(second.wait(seconds: 5) == 1)
        #expect(second.standardError.lowercased().contains("in use"))
        first.signal(SIGTERM)
        #expect(first.wait(seconds: 2.5) == 0)
    }

    @Test func helpListsTheFlags() throws {
        let process = try ChildProcess(Self.executable, ["--help"])
        #expect(process.wait(seconds: 5) == 0)
    }
}
