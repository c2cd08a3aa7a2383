import Glibc
import OpenWeather
import Simulator
import Synchronization
import TestSupport
import Testing

@testable import Exporter

/// The poller against the loopback simulator: real HTTP, real decoding.
@Suite(.serialized) struct PollerTests {
    struct Harness {
        let simulator: Simulator
        let store: WeatherStore
        let poller: Poller
        let logs: LogCapture

        init(
            locations: [Location] = [Location(name: "London", latitude: 51.5074, longitude: -0.1278)],
            interval: Duration = .seconds(600), timeout: Duration = .seconds(2), baseURL: String? = nil,
            scheme: String = "http", key: String = "test-key-123", faults: [Fault] = []
        ) throws {
            simulator = try Simulator(acceptedKeys: ["test-key-123"])
            for fault in faults { simulator.addFault(fault) }
            store = WeatherStore(locations: locations, thresholds: { _ in TemperatureThresholds() }, now: Clock.wallSeconds())
            let logs = LogCapture()
            self.logs = logs
            let client = OpenWeatherClient(
                settings: .init(baseURL: baseURL ?? "\(scheme)://127.0.0.1:\(simulator.port)", apiKey: key, timeout: timeout),
                userAgent: "test")
            poller = Poller(
                plan: .init(locations: locations, interval: interval, requestsPerMinute: 6000, fetcher: client),
                store: store, logger: Logger(level: .debug, secrets: [key], sink: { logs.append($0) }), onChange: {})
            poller.start()
        }

        func state(_ name: String = "London") -> WeatherStore.LocationState {
            store.snapshot().locations.first { $0.location.name == name }!
        }

        func waitForAttempts(_ count: Double = 1, seconds: Double = 10) -> Bool {
            waitUntil(seconds: seconds) { store.snapshot().requestCounts.values.reduce(0, +) >= count }
        }

        func stop() {
            poller.stop()
            simulator.stop()
        }
    }

    @Test func successStoresTheReadingInBaseUnits() throws {
        let harness = try Harness()
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        let state = harness.state()
        #expect(state.up == true)
        let reading = try #require(state.reading)
        #expect(reading.cityName == "London")
        #expect((0...1).contains(reading.humidityRatio))
        #expect(reading.pressurePascals > 90_000 && reading.pressurePascals < 110_000)
        #expect(harness.store.snapshot().requestCounts == ["200": 1])
        #expect(harness.simulator.requests.count == 1)
    }

    @Test(arguments: [400, 401, 404, 429, 500, 502, 503])
    func errorStatusMarksTheLocationDown(status: Int) throws {
        let harness = try Harness(faults: [Fault(response: .status(status))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        let state = harness.state()
        #expect(state.up == false)
        #expect(state.reading == nil)
        #expect(state.lastError?.contains("\(status)") == true)
        #expect(harness.store.snapshot().requestCounts == [String(status): 1])
    }

    @Test func openWeathersMessageReachesTheLog() throws {
        let harness = try Harness(faults: [Fault(response: .status(404))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(waitUntil { harness.logs.all.contains { $0.contains("city not found") && $0.contains("location=London") } })
    }

    @Test func timeout() throws {
        let harness = try Harness(timeout: .milliseconds(300), faults: [Fault(delay: .seconds(3))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.store.snapshot().requestCounts == ["timeout": 1])
        #expect(harness.state().up == false)
    }

    @Test func slowTrickleIsCutAtTheDeadline() throws {
        let harness = try Harness(timeout: .milliseconds(400), faults: [Fault(response: .trickle(interval: .milliseconds(100)))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.store.snapshot().requestCounts == ["timeout": 1])
    }

    @Test(arguments: Fault.Malformation.allCases)
    func malformedBodiesAreDecodeFailures(kind: Fault.Malformation) throws {
        let harness = try Harness(faults: [Fault(response: .malformed(kind))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.store.snapshot().requestCounts == ["decode": 1])
        #expect(harness.state().lastError?.contains("unusable response") == true)
    }

    @Test func hugeBodyIsRefused() throws {
        let harness = try Harness(faults: [Fault(response: .huge(bytes: 20_000_000))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.store.snapshot().requestCounts == ["decode": 1])
    }

    @Test func connectionRefused() throws {
        let harness = try Harness(baseURL: "http://127.0.0.1:1")
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.store.snapshot().requestCounts == ["connect": 1])
    }

    @Test func missingOptionalFieldsAndNoRainNorSun() throws {
        let polar = #"{"coord":{"lon":15.6,"lat":78.2},"weather":[{"id":600,"main":"Snow","description":"light snow","icon":"13n"}],"main":{"temp":-14.09,"feels_like":-21.09,"temp_min":-14.09,"temp_max":-14.09,"pressure":1004,"humidity":79},"wind":{"speed":4.63,"deg":110},"clouds":{"all":75},"dt":1703152800,"sys":{"type":1,"id":1663,"country":"SJ"},"timezone":3600,"id":2729907,"name":"Longyearbyen","cod":200}"#
        let harness = try Harness(faults: [Fault(response: .body(polar))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        let reading = try #require(harness.state().reading)
        #expect(reading.sunrise == nil && reading.sunset == nil)
        #expect(reading.rain1hMeters == 0 && reading.snow1hMeters == 0)
        #expect(reading.windGustMetersPerSecond == nil && reading.visibilityMeters == nil && reading.groundLevelPressurePascals == nil)
    }

    @Test func oneFailingLocationLeavesTheOthersAlone() throws {
        let harness = try Harness(
            locations: [
                Location(name: "London", latitude: 51.5074, longitude: -0.1278),
                Location(name: "Tokyo", latitude: 35.6762, longitude: 139.6503),
            ],
            faults: [Fault(response: .status(500), latitude: 35.6762)])
        defer { harness.stop() }
        #expect(harness.waitForAttempts(2))
        #expect(harness.state("London").up == true)
        #expect(harness.state("Tokyo").up == false)
    }

    @Test func aFailureKeepsThePreviousReading() throws {
        let harness = try Harness(interval: .seconds(1))
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        harness.simulator.setFault(Fault(response: .status(503)))
        #expect(waitUntil { harness.state().up == false })
        #expect(harness.state().reading != nil)
    }

    @Test func rejectedKeyIsLoggedOnceNotOnEveryPoll() throws {
        let harness = try Harness(
            locations: [
                Location(name: "A", latitude: 1, longitude: 1), Location(name: "B", latitude: 2, longitude: 2),
            ],
            interval: .seconds(1), key: "wrong-key")
        defer { harness.stop() }
        #expect(harness.waitForAttempts(5))
        let rejected = harness.logs.all.filter { $0.contains("rejects the API key") }
        #expect(rejected.count == 1)
        #expect(rejected.first?.contains("couple of hours") == true)
        #expect(!harness.logs.all.joined().contains("wrong-key"))
    }
}
