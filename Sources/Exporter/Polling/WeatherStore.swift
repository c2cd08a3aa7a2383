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
        public var locations: LocationStates = []
        /// By `code` label: "200", "401", "timeout"...
        public var requestCounts: [String: Double] = [:]
        public var reloadSuccessful = true
        public var reloadSuccessTimestamp = 0.0
        /// Rises with every change, so renderers can skip work.
        public var generation: UInt64 = 0

        /// Every location has been tried at least once.
        public var allAttempted: Bool { locations.allSatisfy { $0.up != nil } }
    }

    private struct State {
        var snapshot: Snapshot
        /// Position of each location by name: a poll's result is stored in O(1), even with thousands of places.
        var index: [String: Int]

        mutating func reindex() {
            index = Dictionary(snapshot.locations.enumerated().map { ($1.location.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private let state: Mutex<State>

    public init(locations: [Location], thresholds: (Location) -> TemperatureThresholds, now: Double) {
        var snapshot = Snapshot()
        snapshot.locations = LocationStates(locations.map { LocationState(location: $0, thresholds: thresholds($0)) })
        snapshot.reloadSuccessTimestamp = now
        var state = State(snapshot: snapshot, index: [:])
        state.reindex()
        self.state = Mutex(state)
    }

    public func snapshot() -> Snapshot { state.withLock { $0.snapshot } }

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
        state.withLock { state in
            state.snapshot.requestCounts[code, default: 0] += 1
            state.snapshot.generation &+= 1
            guard let index = state.index[name] else { return }
            body(&state.snapshot.locations[index])
        }
    }

    /// A reload: kept locations keep their readings and health, new ones start empty.
    func replaceLocations(_ locations: [Location], thresholds: (Location) -> TemperatureThresholds) {
        state.withLock { state in
            let old = Dictionary(state.snapshot.locations.map { ($0.location.name, $0) }, uniquingKeysWith: { first, _ in first })
            state.snapshot.locations = LocationStates(locations.map { location in
                var entry = old[location.name] ?? LocationState(location: location, thresholds: thresholds(location))
                if entry.location.latitude != location.latitude || entry.location.longitude != location.longitude {
                    entry = LocationState(location: location, thresholds: thresholds(location))
                }
                entry.location = location
                entry.thresholds = thresholds(location)
                return entry
            })
            state.snapshot.generation &+= 1
            state.reindex()
        }
    }

    func recordReload(successful: Bool, now: Double) {
        state.withLock { state in
            state.snapshot.reloadSuccessful = successful
            if successful { state.snapshot.reloadSuccessTimestamp = now }
            state.snapshot.generation &+= 1
        }
    }
}
