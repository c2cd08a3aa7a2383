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
        #expect(harness.counts == ["dns": 1])
        #expect(harness.state().up == false)
        #expect(harness.state().lastError?.contains("DNS lookup of \(Self.unresolvableHost) failed") == true)
    }

    @Test func tlsFailureAgainstAPlainHTTPPort() throws {
        let harness = try Harness(scheme: "https")
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.counts == ["tls": 1])
        #expect(harness.state().lastError?.contains("TLS") == true)
    }

    /// Every way one location's answer can be bad: that location is down with a reason and a
    /// counted failure; the other one is fetched and stored as usual.
    @Test(arguments: [
        "500", "502", "503", "timeout", "trickle", "huge", "close",
        "truncated", "notJSON", "wrongTypes", "missingFields", "absurdNumbers", "nan", "empty",
    ])
    func aBrokenAnswerForOneLocationLeavesTheOtherAlone(kind: String) throws {
        var fault = Fault(latitude: Self.tokyo.coordinates!.latitude)
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
        let counts = harness.counts
        #expect(counts["200"] == 1 && counts.values.reduce(0, +) == 2, "\(counts)")
        #expect(harness.state("London").up == true && harness.reading("London") != nil)
        #expect(harness.state("Tokyo").up == false)
        #expect(harness.state("Tokyo").lastError?.isEmpty == false)
        // The poller stores a result before it logs it: wait for the line rather than race it.
        #expect(waitUntil { harness.logs.all.contains { $0.contains("level=warn") && $0.contains("location=Tokyo") } })
        #expect(!harness.logs.all.contains { $0.contains("poll failed") && $0.contains("location=London") })
    }

    @Test(arguments: [400, 404])
    func aRefusedLocationIsLoggedWithOpenWeathersMessage(status: Int) throws {
        let harness = try Harness(
            locations: [Self.london, Self.tokyo],
            faults: [Fault(response: .status(status), latitude: Self.tokyo.coordinates!.latitude)])
        defer { harness.stop() }
        #expect(harness.waitForAttempts(2))
        #expect(harness.state("London").up == true)
        #expect(harness.state("Tokyo").up == false)
        let message = status == 400 ? "wrong latitude" : "city not found"
        #expect(
            waitUntil {
                harness.logs.all.contains {
                    $0.contains("level=warn") && $0.contains("location=Tokyo") && $0.contains(message)
                        && $0.contains("code=\(status)")
                }
            })
    }
}
