import Glibc
import Locking
import Simulator
import TestSupport
import Testing

@testable import Exporter

/// The system's clocks, moved forward by the test at once (both together) while they keep running.
final class ShiftedTime: TimeSource {
    private let offset = Locked(0.0)
    func monotonic() -> Double { SystemTime().monotonic() + offset.withLock { $0 } }
    func wall() -> Double { SystemTime().wall() + offset.withLock { $0 } }
    func advance(_ seconds: Double) { offset.withLock { $0 += seconds } }
}

/// Staleness and secrets, through the whole exporter over TCP.
extension ExporterWebTests {
    /// After --openweather.max-staleness without success the weather series leave /metrics
    /// (Prometheus then marks them stale); the health series stay and say why. The exporter runs on
    /// the system's clocks shifted by the test: a minute of staleness passes at once, and "down but
    /// not yet stale" holds however slow the machine is.
    @Test func staleWeatherLeavesTheExpositionAndHealthStays() async throws {
        let time = ShiftedTime()
        let running = try Running(
            locations: ["London=51.5074,-0.1278"],
            extra: ["--collector.weather.interval=1s", "--openweather.max-staleness=1m"], time: time)
        defer { running.stop() }
        let temperature = "openweather_temperature_celsius{location=\"London\"}"
        #expect(await waitUntil { (try? running.metrics().contains(temperature)) == true })
        running.simulator.setFault(Fault(response: .status(503)))
        let failingSince = monotonicSeconds()
        #expect(
            await waitUntil {
                (try? running.metrics())?.hasLine("openweather_up{location=\"London\",source=\"weather\"} 0") == true
            })
        // Down but not yet stale: the last reading is still served.
        #expect(try running.metrics().contains(temperature))
        time.advance(60)
        #expect(
            await waitUntil { (try? running.metrics().contains(temperature)) == false },
            "still served a minute after the last success")
        let metrics = try running.metrics()
        #expect(!metrics.contains("openweather_humidity_ratio{location=\"London\"}"))
        #expect(metrics.hasLine("openweather_up{location=\"London\",source=\"weather\"} 0"))
        #expect(metrics.contains("openweather_last_success_timestamp_seconds{location=\"London\",source=\"weather\"}"))
        #expect(metrics.contains("openweather_poll_duration_seconds{location=\"London\",source=\"weather\"}"))
        #expect(metrics.contains("openweather_api_requests_total{code=\"503\",source=\"weather\"}"))

        // The next attempt comes at the backoff's real time (1 s doubling, +20 % jitter): at most about
        // as long after the last failure as the job has been failing, however slow the machine was.
        running.simulator.clearFaults()
        let failed = monotonicSeconds() - failingSince
        #expect(
            await waitUntil(seconds: 1.5 * failed + 10) { (try? running.metrics().contains(temperature)) == true },
            "back once it succeeds")
    }

    /// Every upstream failure mode, with the logger's redaction switched off (so this checks what
    /// the messages carry, not the safety net) at debug level: the key is in no log line, no page,
    /// no metric and no error answer.
    @Test(arguments: [
        "400", "401", "404", "429", "500", "timeout", "trickle", "huge", "close", "truncated", "notJSON",
        "wrongTypes", "missingFields", "absurdNumbers", "nan", "empty", "refused", "dns", "tls",
    ])
    func theKeyAppearsNowhereWhateverFails(kind: String) async throws {
        var faults: [Fault] = []
        var url: (Simulator) -> String = { $0.baseURL }
        switch kind {
        case "timeout": faults = [Fault(delay: .seconds(3))]
        case "trickle": faults = [Fault(response: .trickle(interval: .milliseconds(100)))]
        case "huge": faults = [Fault(response: .huge(bytes: 20_000_000))]
        case "close": faults = [Fault(response: .close)]
        case "refused": url = { _ in "http://127.0.0.1:1" }
        case "dns": url = { _ in "http://\(PollerTests.unresolvableHost)" }
        case "tls": url = { "https://127.0.0.1:\($0.port)" }
        default:
            if let status = Int(kind) {
                faults = [Fault(response: .status(status, retryAfter: status == 429 ? "30" : nil))]
            } else {
                faults = [Fault(response: .malformed(try #require(Fault.Malformation(rawValue: kind))))]
            }
        }
        let running = try Running(
            extra: ["--openweather.timeout=500ms", "--log.level=debug", "--web.enable-lifecycle"], faults: faults,
            url: url)
        defer { running.stop() }
        // A first poll has failed (the health lines exist from the start, with up 0 before any poll;
        // a poll's duration only once it ended; after a 429 the other location is not polled at all).
        #expect(
            await waitUntil {
                guard let metrics = try? running.metrics() else { return false }
                return ["London", "Tokyo"].contains {
                    metrics.sample("openweather_poll_duration_seconds{location=\"\($0)\",source=\"weather\"}") != nil
                }
            }, "\(kind): no poll ended")
        let afterPoll = try running.metrics()
        #expect(
            afterPoll.hasLine("openweather_up{location=\"London\",source=\"weather\"} 0")
                && afterPoll.hasLine("openweather_up{location=\"Tokyo\",source=\"weather\"} 0"))
        #expect(
            await waitUntil {
                running.logs.all.contains { $0.contains("poll failed") || $0.contains("rejects") || $0.contains("429") }
            })

        var everything = [try running.metrics(), try running.get("/").text, try running.get("/-/ready").text]
        everything.append(try running.get("/-/reload", method: "POST").text)
        everything.append(try running.get("/nope").text)
        everything.append(try running.get("/metrics", method: "DELETE").text)
        everything.append(running.logs.all.joined(separator: "\n"))
        for text in everything {
            #expect(!text.contains("SECRET-KEY-42"), "\(kind): \(text.prefix(2000))")
        }
    }
}
