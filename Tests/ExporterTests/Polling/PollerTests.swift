import Glibc
import OpenWeather
import Platform
import Simulator
import Synchronization
import TestSupport
import Testing

@testable import Exporter

/// The poller against the loopback simulator: real HTTP, real decoding.
@Suite(.blocking) struct PollerTests {
    struct Harness {
        let simulator: Simulator
        let store: ReadingStore
        let poller: Poller
        let logs: LogCapture

        init(
            locations: [Location] = [Location(name: "London", latitude: 51.5074, longitude: -0.1278)],
            collectors: [String: Duration] = ["weather": .seconds(600)], timeout: Duration = .seconds(2),
            baseURL: String? = nil,
            scheme: String = "http", key: String = "test-key-123", faults: [Fault] = []
        ) throws {
            simulator = try Simulator(acceptedKeys: ["test-key-123"])
            for fault in faults { simulator.addFault(fault) }
            var configuration = ExporterTests.configuration(locations, collectors: collectors, budget: 6000)
            configuration.apiKey = Secret(key)
            configuration.openWeatherURL = baseURL ?? "\(scheme)://127.0.0.1:\(simulator.port)"
            configuration.requestTimeout = timeout
            let setup = configuration.pollerSetup(transport: try configuration.openWeatherClient())
            store = ReadingStore(setup: setup, now: SystemClock.wallSeconds())
            let logs = LogCapture()
            self.logs = logs
            poller = Poller(
                setup: setup, store: store, logger: Logger(level: .debug, secrets: [key], sink: { logs.append($0) }),
                onChange: {})
            poller.start()
        }

        /// `name`'s state for `source`.
        func state(_ name: String = "London", _ source: String = "weather") -> ReadingStore.SlotState {
            let snapshot = store.snapshot()
            return snapshot.locations.first { $0.location.name == name }!.slots[
                snapshot.layout.sourceNames.firstIndex(of: source)!]
        }

        func reading(_ name: String = "London") -> CurrentWeather? { state(name).reading as? CurrentWeather }

        /// Requests counted by code, every source together.
        var counts: [String: Double] {
            store.snapshot().requestCounts.reduce(into: [:]) { $0[$1.key.code, default: 0] += $1.value }
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
        let reading = try #require(harness.reading())
        #expect(reading.cityName == "London")
        #expect((0...1).contains(try #require(reading.humidityRatio)))
        let pressure = try #require(reading.pressurePascals)
        #expect(pressure > 90_000 && pressure < 110_000)
        #expect(harness.counts == ["200": 1])
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
        #expect(harness.counts == [String(status): 1])
    }

    @Test func openWeathersMessageReachesTheLog() throws {
        let harness = try Harness(faults: [Fault(response: .status(404))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(
            waitUntil { harness.logs.all.contains { $0.contains("city not found") && $0.contains("location=London") } })
    }

    @Test func timeout() throws {
        let harness = try Harness(timeout: .milliseconds(300), faults: [Fault(delay: .seconds(3))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.counts == ["timeout": 1])
        #expect(harness.state().up == false)
    }

    @Test func slowTrickleIsCutAtTheDeadline() throws {
        let harness = try Harness(
            timeout: .milliseconds(400), faults: [Fault(response: .trickle(interval: .milliseconds(100)))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.counts == ["timeout": 1])
    }

    @Test(arguments: Fault.Malformation.allCases)
    func malformedBodiesAreDecodeFailures(kind: Fault.Malformation) throws {
        let harness = try Harness(faults: [Fault(response: .malformed(kind))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.counts == ["decode": 1])
        #expect(harness.state().lastError?.contains("unusable response") == true)
    }

    @Test func hugeBodyIsRefused() throws {
        // The refusal is what is checked, not a deadline: a starved simulator (a sanitizer, a busy
        // machine) may take seconds to build 20 MB, which a short timeout would count as a timeout.
        let harness = try Harness(timeout: .seconds(120), faults: [Fault(response: .huge(bytes: 20_000_000))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts(seconds: 150))
        #expect(harness.counts == ["decode": 1])
    }

    @Test func connectionRefused() throws {
        let harness = try Harness(baseURL: "http://127.0.0.1:1")
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        #expect(harness.counts == ["connect": 1])
    }

    @Test func missingOptionalFieldsAndNoRainNorSun() throws {
        let polar =
            #"{"coord":{"lon":15.6,"lat":78.2},"weather":[{"id":600,"main":"Snow","description":"light snow","icon":"13n"}],"main":{"temp":-14.09,"feels_like":-21.09,"temp_min":-14.09,"temp_max":-14.09,"pressure":1004,"humidity":79},"wind":{"speed":4.63,"deg":110},"clouds":{"all":75},"dt":1703152800,"sys":{"type":1,"id":1663,"country":"SJ"},"timezone":3600,"id":2729907,"name":"Longyearbyen","cod":200}"#
        let harness = try Harness(faults: [Fault(response: .body(polar))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        let reading = try #require(harness.reading())
        #expect(reading.sunrise == nil && reading.sunset == nil)
        #expect(reading.rain1hMeters == 0 && reading.snow1hMeters == 0)
        #expect(
            reading.windGustMetersPerSecond == nil && reading.visibilityMeters == nil
                && reading.groundLevelPressurePascals == nil)
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

    /// An answer without `main.feels_like` (older answers have none) is a success: the location is
    /// up with everything else, and the gap is counted at each poll and logged once, at debug.
    @Test func anAnswerWithoutAnOptionalFieldIsASuccessCountedAndLoggedOnce() throws {
        let body = String(decoding: Fixture.bytes("current-london-2017-no-feels-like.json"), as: UTF8.self)
        let harness = try Harness(collectors: ["weather": .seconds(1)], faults: [Fault(response: .body(body))])
        defer { harness.stop() }
        #expect(harness.waitForAttempts(2))
        #expect(harness.state().up == true && harness.counts == ["200": harness.counts["200"] ?? -1])
        let reading = try #require(harness.reading())
        #expect(reading.feelsLikeCelsius == nil && reading.temperatureCelsius == 7.17 && reading.humidityRatio == 0.81)
        let missing = harness.store.snapshot().fieldsMissing
        #expect((missing[.init(source: "weather", field: "main.feels_like")] ?? 0) >= 2)
        #expect((missing[.init(source: "weather", field: "timezone")] ?? 0) >= 2)
        let logged = harness.logs.all.filter {
            $0.contains("answer field unusable") && $0.contains("field=main.feels_like")
        }
        #expect(logged.count == 1, "\(logged)")
        #expect(logged.first?.contains("level=debug") == true && logged.first?.contains("source=weather") == true)
    }

    @Test func aFailureKeepsThePreviousReading() throws {
        let harness = try Harness(collectors: ["weather": .seconds(1)])
        defer { harness.stop() }
        #expect(harness.waitForAttempts())
        harness.simulator.addFault(Fault(response: .status(503)))
        #expect(waitUntil { harness.state().up == false })
        #expect(harness.state().reading != nil)
    }
}
