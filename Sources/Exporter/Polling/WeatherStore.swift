import OpenWeather
import Synchronization

/// The latest reading and health of every location, plus the exporter's own
/// counters: written by the poller, read by the metrics renderer and the web pages.
public final class WeatherStore: Sendable {
    public struct LocationState: Sendable {
        public var location: Location
        public var thresholds: TemperatureThresholds
        /// The last good reading; kept through failures until it is too old.
        public var reading: CurrentWeather?
        public var lastSuccess: Double?
        /// Nil until the first attempt ends.
        public var up: Bool?
        public var lastPollDuration: Double?
        public var lastError: String?
    }

    public struct Snapshot: Sendable {
        public var locations: [LocationState] = []
        /// By `code` label: "200", "401", "timeout"...
        public var requestCounts: [String: Double] = [:]
        public var reloadSuccessful = true
        public var reloadSuccessTimestamp = 0.0
        /// Rises with every change, so renderers can skip work.
        public var generation: UInt64 = 0

        /// Every location has been tried at least once.
        public var allAttempted: Bool { locations.allSatisfy { $0.up != nil } }
    }

    private let state: Mutex<Snapshot>

    public init(locations: [Location], thresholds: (Location) -> TemperatureThresholds, now: Double) {
        var snapshot = Snapshot()
        snapshot.locations = locations.map { LocationState(location: $0, thresholds: thresholds($0)) }
        snapshot.reloadSuccessTimestamp = now
        state = Mutex(snapshot)
    }

    public func snapshot() -> Snapshot { state.withLock { $0 } }

    func recordSuccess(_ name: String, reading: CurrentWeather, duration: Double, now: Double) {
        update(name, code: "200") { location in
            location.reading = reading
            location.lastSuccess = now
            location.up = true
            location.lastPollDuration = duration
            location.lastError = nil
        }
    }

    func recordFailure(_ name: String, code: String, reason: String, duration: Double) {
        update(name, code: code) { location in
            location.up = false
            location.lastPollDuration = duration
            location.lastError = reason
        }
    }

    private func update(_ name: String, code: String, _ body: (inout LocationState) -> Void) {
        state.withLock { snapshot in
            snapshot.requestCounts[code, default: 0] += 1
            snapshot.generation &+= 1
            guard let index = snapshot.locations.firstIndex(where: { $0.location.name == name }) else { return }
            body(&snapshot.locations[index])
        }
    }

    /// A reload: kept locations keep their readings and health, new ones start empty.
    func replaceLocations(_ locations: [Location], thresholds: (Location) -> TemperatureThresholds) {
        state.withLock { snapshot in
            let old = Dictionary(snapshot.locations.map { ($0.location.name, $0) }, uniquingKeysWith: { first, _ in first })
            snapshot.locations = locations.map { location in
                var entry = old[location.name] ?? LocationState(location: location, thresholds: thresholds(location))
                if entry.location.latitude != location.latitude || entry.location.longitude != location.longitude {
                    entry = LocationState(location: location, thresholds: thresholds(location))
                }
                entry.location = location
                entry.thresholds = thresholds(location)
                return entry
            }
            snapshot.generation &+= 1
        }
    }

    func recordReload(successful: Bool, now: Double) {
        state.withLock { snapshot in
            snapshot.reloadSuccessful = successful
            if successful { snapshot.reloadSuccessTimestamp = now }
            snapshot.generation &+= 1
        }
    }
}
