import Dispatch
import Glibc
import OpenWeather
import Simulator
import Synchronization
import TestSupport
import Testing

@testable import Exporter

/// Upstream failure modes that PollerTests does not cover: resolver and TLS failures, a 429
/// that must pause every location, the key's state changes, and per-location refusals.
extension PollerTests {
    static let london = Location(name: "London", latitude: 51.5074, longitude: -0.1278)
    static let tokyo = Location(name: "Tokyo", latitude: 35.6762, longitude: 139.6503)
    static let sydney = Location(name: "Sydney", latitude: -33.8688, longitude: 151.2093)

    /// A 64-character label is refused by glibc's resolver before any query is sent, so this
    /// fails like an unknown name without a packet leaving loopback (a plain `.invalid` name
    /// would be asked of the configured nameserver).
    static let unresolvableHost = String(repeating: "a", count: 64) + ".invalid"

    @Test func dnsFailure() throws {
        let harness = try Harness(baseURL: "http://\(Self.unresolvableHost):8080")
        defer { harness.stop() }
        #expect(harness.waitForAttempts(seconds: 30))
        #expect(harness.store.snapshot().requestCounts == ["dns": 1])
        #expect(harness.state().up == false)
        #expect(harness.state().lastError?.contains("DNS lookup of \(Self.unresolvableHost) failed") == true)
    }

    @Test func tlsFailureAgainstAPlainHTTPPort() throws {
        let harness = try Harness(scheme: "https")
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.store.snapshot().requestCounts == ["tls": 1])
        #expect(harness.state().lastError?.contains("TLS") == true)
    }

    /// Every way one location's answer can be bad: that location is down with a reason and a
    /// counted failure; the other one is fetched and stored as usual.
    @Test(arguments: [
        "500", "502", "503", "timeout", "trickle", "huge", "close",
        "truncated", "notJSON", "wrongTypes", "missingFields", "absurdNumbers", "nan", "empty",
    ])
    func aBrokenAnswerForOneLocationLeavesTheOtherAlone(kind: String) throws {
        var fault = Fault(latitude: Self.tokyo.latitude)
        switch kind {
        case "timeout": fault.delay = .seconds(3)
        case "trickle": fault.response = .trickle(interval: .milliseconds(100))
        case "huge": fault.response = .huge(bytes: 20_000_000)
        case "close": fault.response = .close
        default:
            if let status = Int(kind) {
                fault.response = .status(status)
            } else {
                fault.response = .malformed(try #require(Fault.Malformation(rawValue: kind)))
            }
        }
        let harness = try Harness(locations: [Self.london, Self.tokyo], timeout: .milliseconds(500), faults: [fault])
        defer { harness.stop() }
        #expect(harness.waitForAttempts(2))
        let counts = harness.store.snapshot().requestCounts
        #expect(counts["200"] == 1 && counts.values.reduce(0, +) == 2, "\(counts)")
        #expect(harness.state("London").up == true && harness.state("London").reading != nil)
        #expect(harness.state("Tokyo").up == false)
        #expect(harness.state("Tokyo").lastError?.isEmpty == false)
        // The poller stores a result before it logs it: wait for the line rather than race it.
        #expect(waitUntil { harness.logs.all.contains { $0.contains("level=warn") && $0.contains("location=Tokyo") } })
        #expect(!harness.logs.all.contains { $0.contains("poll failed") && $0.contains("location=London") })
    }

    /// A transient failure backs the location off (interval, doubling, with jitter): in 2 s at a
    /// 300 ms interval a steady location is fetched about 7 times, a failing one 3 or 4 times.
    @Test(arguments: ["503", "refused"])
    func transientFailuresBackOff(kind: String) throws {
        let harness = try Harness(
            interval: .milliseconds(300), baseURL: kind == "refused" ? "http://127.0.0.1:1" : nil,
            faults: kind == "503" ? [Fault(response: .status(503))] : [])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        usleep(2_000_000)
        let attempts = harness.store.snapshot().requestCounts.values.reduce(0, +)
        #expect(attempts >= 2 && attempts <= 5, "\(attempts) attempts in 2 s")
    }

    @Test(arguments: [400, 404])
    func aRefusedLocationIsLoggedWithOpenWeathersMessage(status: Int) throws {
        let harness = try Harness(
            locations: [Self.london, Self.tokyo], faults: [Fault(response: .status(status), latitude: Self.tokyo.latitude)])
        defer { harness.stop() }
        #expect(harness.waitForAttempts(2))
        #expect(harness.state("London").up == true)
        #expect(harness.state("Tokyo").up == false)
        let message = status == 400 ? "wrong latitude" : "city not found"
        #expect(harness.logs.all.contains {
            $0.contains("level=warn") && $0.contains("location=Tokyo") && $0.contains(message) && $0.contains("code=\(status)")
        })
    }

    /// OpenWeather blocks the key, not the place: after one 429 nothing at all is requested
    /// until Retry-After has passed, then every location is fetched again without help.
    @Test func rateLimitPausesEveryLocationForRetryAfterThenResumes() throws {
        let harness = try Harness(locations: [Self.london, Self.tokyo, Self.sydney], interval: .seconds(1))
        defer { harness.stop() }
        #expect(harness.waitForAttempts(3))
        harness.simulator.setFault(Fault(response: .status(429, retryAfterSeconds: 2)))
        var firstHit: Double?
        #expect(waitUntil {
            firstHit = harness.simulator.requests.first { $0.status == 429 }?.time
            return firstHit != nil
        })
        harness.simulator.clearFaults()
        let hit = try #require(firstHit)
        #expect(waitUntil(seconds: 15) {
            Set(harness.simulator.requests.filter { $0.time > hit + 1.9 && $0.status == 200 }.map(\.latitude)).count == 3
        }, "every location resumes after the pause")
        let requests = harness.simulator.requests
        // Requests already on their way when the 429 arrived may land just after it.
        let during = requests.filter { $0.time > hit + 0.3 && $0.time < hit + 1.9 }
        #expect(during.isEmpty, "requests during the pause: \(during.map { $0.time - hit })")
        #expect(harness.logs.all.contains { $0.contains("pausing all requests") && $0.contains("pause=2s") })
        #expect(harness.store.snapshot().locations.allSatisfy { $0.up == true })
    }

    /// 401 is logged as an error when it starts and once more when the key works again, never
    /// on every poll; meanwhile polling keeps its normal pace, since a new key may start working.
    @Test func keyRejectionIsLoggedOncePerChangeAndPollingKeepsItsPace() throws {
        let a = Location(name: "A", latitude: 1, longitude: 1)
        let b = Location(name: "B", latitude: 2, longitude: 2)
        let harness = try Harness(locations: [a, b], interval: .milliseconds(300), key: "new-key")
        defer { harness.stop() }
        #expect(harness.waitForAttempts(2))
        usleep(3_000_000)
        // Polling goes on while the key is rejected. That it keeps the normal pace (no backoff) is
        // proven on a virtual clock (PollScheduleTests.unauthorizedKeepsTheNormalInterval): in real
        // time a busy CI machine delays fetches too much to tell pace from backoff reliably.
        let rejected = harness.simulator.requests.filter { $0.status == 401 }.count
        #expect(rejected >= 4, "\(rejected) polls while the key was rejected")
        #expect(harness.store.snapshot().locations.allSatisfy { $0.up == false })

        harness.simulator.setAcceptedKeys(["new-key"])
        #expect(waitUntil { harness.store.snapshot().locations.allSatisfy { $0.up == true } })
        harness.simulator.setAcceptedKeys(["another-key"])
        #expect(waitUntil { harness.store.snapshot().locations.allSatisfy { $0.up == false } })
        usleep(1_500_000)

        let logs = harness.logs.all
        let rejections = logs.filter { $0.contains("rejects the API key") }
        #expect(rejections.count == 2, "\(rejections)")
        #expect(rejections.allSatisfy { $0.contains("level=error") && $0.contains("couple of hours") })
        #expect(logs.filter { $0.contains("accepts the API key again") }.count == 1)
        #expect(logs.filter { $0.contains("code=401") }.allSatisfy { $0.contains("level=debug") || $0.contains("rejects") })
        #expect(!logs.joined().contains("new-key"))
    }
}

/// A fetcher whose key works or not at the flip of a switch, and which can hold one location's
/// request in flight: for races between requests and a change of key.
final class SwitchableKeyFetcher: WeatherFetching, @unchecked Sendable {
    private struct State {
        var keyWorks = false
        var holdLatitude: Double?
        var holding = false
    }

    private let state = Mutex(State())
    private let release = DispatchSemaphore(value: 0)
    let reading: CurrentWeather

    init(reading: CurrentWeather) { self.reading = reading }

    func setKeyWorks(_ works: Bool) { state.withLock { $0.keyWorks = works } }
    /// The next request for this latitude waits in flight until `releaseHeld()`.
    func hold(latitude: Double) { state.withLock { $0.holdLatitude = latitude } }
    var isHolding: Bool { state.withLock { $0.holding } }
    func releaseHeld() { release.signal() }

    func currentWeather(latitude: Double, longitude: Double) throws(OpenWeatherError) -> CurrentWeather {
        // Whether the key works is decided when the request arrives, as OpenWeather would.
        let (works, held) = state.withLock { state in
            let held = state.holdLatitude == latitude
            if held {
                state.holdLatitude = nil
                state.holding = true
            }
            return (state.keyWorks, held)
        }
        if held {
            release.wait()
            state.withLock { $0.holding = false }
        }
        guard works else { throw .http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil) }
        return reading
    }
}

extension PollerTests {
    /// A 401 answering a request sent before the key started working is old news: the change of
    /// key is logged once each way, even when another location's request was in flight meanwhile.
    @Test func aRejectionSentBeforeTheKeyWorkedDoesNotFlipItBack() throws {
        let fetcher = SwitchableKeyFetcher(reading: try ExpositionGoldenTests.fixture("current-zocca-rain.json"))
        let a = Location(name: "A", latitude: 1, longitude: 1)
        let b = Location(name: "B", latitude: 2, longitude: 2)
        let store = WeatherStore(locations: [a, b], thresholds: { _ in TemperatureThresholds() }, now: Clock.wallSeconds())
        let logs = LogCapture()
        let poller = Poller(
            plan: .init(locations: [a, b], interval: .milliseconds(200), requestsPerMinute: 6000, fetcher: fetcher),
            store: store, logger: Logger(level: .debug, sink: { logs.append($0) }), onChange: {})
        poller.start()
        defer {
            fetcher.releaseHeld()
            poller.stop()
        }
        #expect(waitUntil { logs.all.contains { $0.contains("rejects the API key") } })
        fetcher.hold(latitude: 2)
        #expect(waitUntil { fetcher.isHolding }, "B's request is in flight")
        fetcher.setKeyWorks(true)
        #expect(waitUntil { logs.all.contains { $0.contains("accepts the API key again") } })
        fetcher.releaseHeld()  // B's old request now answers 401
        #expect(waitUntil { store.snapshot().locations.allSatisfy { $0.up == true } })
        usleep(500_000)
        let logged = logs.all
        #expect(logged.filter { $0.contains("rejects the API key") }.count == 1, "\(logged)")
        #expect(logged.filter { $0.contains("accepts the API key again") }.count == 1, "\(logged)")
    }
}
