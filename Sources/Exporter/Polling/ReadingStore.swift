import Locking
import OpenWeather

/// The latest reading and health of every location and source, plus the exporter's own counters:
/// written by the poller, read by the metrics renderer and the web pages.
final class ReadingStore: Sendable {
    /// One source's part of a location.
    struct SourceState: Sendable {
        /// False where the source has nothing to do (a resolver for a place given by coordinates).
        var applies: Bool
        /// The last good reading, of the source's own type; kept through failures until it is too old.
        var reading: (any Sendable)?
        var lastSuccess: Double?
        /// Nil until the first attempt ends.
        var up: Bool?
        var lastPollDuration: Double?
        var lastError: String?
    }

    struct LocationState: Sendable {
        var location: Location
        var thresholds: AlertThresholds
        /// By slot: the position of the source among the configuration's sources.
        var sources: [SourceState]
        /// By slot, the sources themselves (the layout's, shared): what reads a slot's erased reading.
        var definitions: [any Source]
        /// Rises with every change to this state, so a renderer can tell what to redo without
        /// comparing fields (and without a list of fields to keep in step).
        var generation: UInt64 = 0

        /// What the geocoder made of a place given by name; nil until then, and for coordinates. Kept
        /// only as its resolver's reading, which the state file saves and a reload keeps like any other.
        var resolved: Place? {
            guard location.query != nil else { return nil }
            for (definition, source) in zip(definitions, sources) where definition.resolves {
                if let reading = source.reading, let resolved = definition.resolvedPlace(ofStored: reading) {
                    return resolved.place
                }
            }
            return nil
        }

        /// Where to poll: the configured coordinates, or the resolved ones.
        var coordinates: Coordinates? {
            location.coordinates ?? resolved.map { Coordinates(latitude: $0.latitude, longitude: $0.longitude) }
        }

        /// Every source that can run has had an attempt. A place not resolved yet counts once its
        /// resolver failed (the only source it can have tried), since the others cannot run.
        var attempted: Bool {
            if location.query != nil && resolved == nil { return sources.contains { $0.up == false } }
            return sources.allSatisfy { !$0.applies || $0.up != nil }
        }
    }

    struct RequestKey: Hashable, Sendable {
        var source: String
        var code: String
    }

    /// An answer field by source: an optional field left out, or a list whose entries were skipped.
    struct FieldKey: Hashable, Sendable {
        var source: String
        var field: String
    }

    struct StateWrites: Sendable, Equatable {
        /// Wall time of the last good write; 0 before the first.
        var lastSuccess = 0.0
        var failures = 0.0
    }

    struct Snapshot: Sendable {
        var locations: LocationStates
        /// What `locations` are laid out by: the setup's, the same value the poller holds.
        var layout: Layout
        /// Rises with a new `layout` (a reload), so renderers lay out anew.
        var layoutRevision: UInt64 = 0
        var requestCounts: [RequestKey: Double] = [:]
        /// Successful polls whose answer lacked an optional field (`AnswerGaps.fields`), by source and field.
        var fieldsMissing: [FieldKey: Double] = [:]
        /// List entries skipped (`AnswerGaps.skipped`), by source and list.
        var entriesSkipped: [FieldKey: Double] = [:]
        var reloadSuccessful = true
        var reloadSuccessTimestamp = 0.0
        /// The state file's writes; nil without `--storage.path`.
        var stateWrites: StateWrites?
        /// By slot, for a source the key cannot use (One Call without its subscription), the reason: the
        /// sources it stands in for poll from their own endpoints meanwhile.
        var unavailable: [String?]
        /// Requests sent today and the daily limits, as the poller last counted them.
        var daily: DailyBudget?

        /// Every location has been tried at least once.
        var allAttempted: Bool { locations.indices.allSatisfy { locations[$0].attempted } }

        /// The `source` label of each slot.
        var sources: [String] { layout.names }
        /// The source of each slot as configured (a forecast's horizons), for the renderer.
        var definitions: [any Source] { layout.sources }
        /// Per slot: after this long without success a source's reading is no longer shown (seconds).
        var maxStaleness: [Double] { layout.maxStaleness }
        /// Per slot: how often the source is polled (a resolver's retry after nothing was found).
        var intervals: [Duration] { layout.intervals }
        /// The positions of `locations` in the exposition's order.
        var labelOrder: [Int] { layout.labelOrder }
    }

    private let state: Locked<Snapshot>

    /// Laid out for the setup the poller starts with: the poller lays it out again only for a reload.
    init(layout: Layout, now: Double) {
        var snapshot = Snapshot(
            locations: LocationStates(
                layout.locations.map { Self.fresh($0, definitions: layout.sources, thresholds: layout.thresholds) }),
            layout: layout, unavailable: layout.names.map { _ in nil })
        snapshot.reloadSuccessTimestamp = now
        self.state = Locked(snapshot)
    }

    /// A resolver applies only to places given by name.
    private static func fresh(
        _ location: Location, definitions: [any Source], thresholds: (Location) -> AlertThresholds
    ) -> LocationState {
        LocationState(
            location: location, thresholds: thresholds(location),
            sources: definitions.map { SourceState(applies: !$0.resolves || location.query != nil) },
            definitions: definitions)
    }

    func snapshot() -> Snapshot { state.withLock { $0 } }

    /// Stores a success of `source` at `location` (positions in the last layout given), and counts
    /// what its answer lacked.
    func recordSuccess(location: Int, source: Int, reading: any Sendable, duration: Double, now: Double) {
        update(location, source, code: "200", gapsOf: reading) { state in
            state.sources[source].reading = reading
            state.sources[source].lastSuccess = now
            state.sources[source].up = true
            state.sources[source].lastPollDuration = duration
            state.sources[source].lastError = nil
        }
    }

    /// Puts a source's state saved by an earlier run back (positions in the last layout given); a
    /// resolver's reading gives the location its place, as a fresh success does.
    func restore(location: Int, source: Int, _ saved: SourceState) {
        state.withLock { snapshot in
            snapshot.locations[location].sources[source] = saved
            snapshot.locations[location].generation &+= 1
        }
    }

    /// `successful` nil: a state file is kept, nothing written yet (the metrics show from the start).
    func recordStateWrite(successful: Bool?, now: Double) {
        state.withLock { snapshot in
            var writes = snapshot.stateWrites ?? StateWrites()
            if successful == true { writes.lastSuccess = now } else if successful == false { writes.failures += 1 }
            snapshot.stateWrites = writes
        }
    }

    /// A reading of `source` made from another source's answer (One Call for weather): like a
    /// success or a failure of its own, without a request to count.
    func recordStandIn(
        location: Int, source: Int, result: Result<any Sendable, OpenWeatherError>, duration: Double, now: Double
    ) {
        update(location, source, code: nil) { state in
            switch result {
            case .success(let reading):
                state.sources[source].reading = reading
                state.sources[source].lastSuccess = now
                state.sources[source].up = true
                state.sources[source].lastError = nil
            case .failure(let error):
                state.sources[source].up = false
                state.sources[source].lastError = error.description
            }
            state.sources[source].lastPollDuration = duration
        }
    }

    /// The poller's count of today's requests changed (a request sent, a new day, new limits).
    func recordDaily(_ daily: DailyBudget) {
        state.withLock { $0.daily = daily }
    }

    /// `reason` nil: the source works with this key again.
    func recordUnavailable(slot: Int, reason: String?) {
        state.withLock { $0.unavailable[slot] = reason }
    }

    func recordFailure(location: Int, source: Int, code: String, reason: String, duration: Double) {
        update(location, source, code: code) { state in
            state.sources[source].up = false
            state.sources[source].lastPollDuration = duration
            state.sources[source].lastError = reason
        }
    }

    /// `gapsOf`: a reading whose answer's gaps are counted.
    private func update(
        _ location: Int, _ source: Int, code: String?, gapsOf reading: (any Sendable)? = nil,
        _ body: (inout LocationState) -> Void
    ) {
        state.withLock { snapshot in
            if let code {
                snapshot.requestCounts[RequestKey(source: snapshot.layout.names[source], code: code), default: 0] += 1
            }
            let gaps = reading.map { snapshot.layout.sources[source].gaps(ofStored: $0) } ?? AnswerGaps()
            let name = snapshot.layout.names[source]
            for gap in gaps.fields { snapshot.fieldsMissing[FieldKey(source: name, field: gap.field), default: 0] += 1 }
            for gap in gaps.skipped {
                snapshot.entriesSkipped[FieldKey(source: name, field: gap.field), default: 0] += Double(gap.count)
            }
            body(&snapshot.locations[location])
            snapshot.locations[location].generation &+= 1
        }
    }

    /// A reload: a kept location (same `identity`) keeps its readings and health for the sources
    /// it still has; a new or moved one starts empty.
    func replaceLocations(_ layout: Layout) {
        let identities = layout.locations.map(\.identity)
        state.withLock { snapshot in
            let old = Dictionary(
                snapshot.locations.map { ($0.location.identity, $0) }, uniquingKeysWith: { first, _ in first })
            let oldSlots = layout.slots(from: snapshot.layout)
            snapshot.locations = LocationStates(
                zip(layout.locations, identities).map { location, identity in
                    var entry = Self.fresh(location, definitions: layout.sources, thresholds: layout.thresholds)
                    guard let previous = old[identity] else { return entry }
                    for (slot, before) in oldSlots.old.enumerated() {
                        if let before { entry.sources[slot] = previous.sources[before] }
                    }
                    entry.generation = previous.generation &+ 1
                    return entry
                })
            snapshot.unavailable = oldSlots.moved(snapshot.unavailable)
            snapshot.layout = layout
            snapshot.layoutRevision &+= 1
        }
    }

    func recordReload(successful: Bool, now: Double) {
        state.withLock { snapshot in
            snapshot.reloadSuccessful = successful
            if successful { snapshot.reloadSuccessTimestamp = now }
        }
    }
}
