import Locking
import OpenWeather

/// The latest reading and health of every location and source, plus the exporter's own counters:
/// written by the poller, read by the metrics renderer and the web pages.
final class ReadingStore: Sendable {
    /// One slot's part of a location: its source's reading and health there.
    struct SlotState: Sendable {
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
        /// By slot (the position of its source among the configuration's): each source's reading and health.
        var slots: [SlotState]
        /// By slot, the sources themselves (the layout's, shared): what reads a slot's erased reading.
        var sources: [any Source]
        /// Rises with every change to this state, so a renderer can tell what to redo without
        /// comparing fields (and without a list of fields to keep in step).
        var generation: UInt64 = 0

        /// What the geocoder made of a place given by name; nil until then, and for coordinates. Kept
        /// only as its resolver's reading, which the state file saves and a reload keeps like any other.
        var resolved: Place? {
            guard location.query != nil else { return nil }
            for (source, slotState) in zip(sources, slots) where source.resolves {
                if let reading = slotState.reading, let resolved = source.resolvedPlace(ofStored: reading) {
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
            if location.query != nil && resolved == nil { return slots.contains { $0.up == false } }
            return slots.allSatisfy { !$0.applies || $0.up != nil }
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
        /// Listeners the server dropped after they failed for good (`HTTPServerConfiguration.onListenerDropped`).
        var listenersDropped = 0.0
        /// The state file's writes; nil without `--storage.path`.
        var stateWrites: StateWrites?
        /// By slot, for a source the key cannot use (One Call without its subscription), the reason: the
        /// sources it stands in for poll from their own endpoints meanwhile.
        var unavailable: [String?]
        /// Requests sent today and the daily limits, as the poller last counted them.
        var daily: DailyBudget?

        /// Every location has been tried at least once.
        var allAttempted: Bool { locations.indices.allSatisfy { locations[$0].attempted } }
    }

    private let state: Locked<Snapshot>

    /// Laid out for the setup the poller starts with: the poller lays it out again only for a reload.
    init(layout: Layout, now: Double) {
        var snapshot = Snapshot(
            locations: LocationStates(
                layout.locations.map { Self.fresh($0, sources: layout.sources, thresholds: layout.thresholds) }),
            layout: layout, unavailable: layout.sourceNames.map { _ in nil })
        snapshot.reloadSuccessTimestamp = now
        self.state = Locked(snapshot)
    }

    /// A resolver applies only to places given by name.
    private static func fresh(
        _ location: Location, sources: [any Source], thresholds: (Location) -> AlertThresholds
    ) -> LocationState {
        LocationState(
            location: location, thresholds: thresholds(location),
            slots: sources.map { SlotState(applies: !$0.resolves || location.query != nil) }, sources: sources)
    }

    func snapshot() -> Snapshot { state.withLock { $0 } }

    /// Stores a success of the source in `slot` at `location` (positions in the last layout given), and
    /// counts what its answer lacked.
    func recordSuccess(location: Int, slot: Int, reading: any Sendable, duration: Double, now: Double) {
        update(location, slot, code: "200", gapsOf: reading) { state in
            state.slots[slot].reading = reading
            state.slots[slot].lastSuccess = now
            state.slots[slot].up = true
            state.slots[slot].lastPollDuration = duration
            state.slots[slot].lastError = nil
        }
    }

    /// Puts a slot's state saved by an earlier run back (positions in the last layout given); a
    /// resolver's reading gives the location its place, as a fresh success does.
    func restore(location: Int, slot: Int, _ saved: SlotState) {
        state.withLock { snapshot in
            snapshot.locations[location].slots[slot] = saved
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

    /// A reading of the source in `slot` made from another source's answer (One Call for weather): like
    /// a success or a failure of its own, without a request to count.
    func recordStandIn(
        location: Int, slot: Int, result: Result<any Sendable, OpenWeatherError>, duration: Double, now: Double
    ) {
        update(location, slot, code: nil) { state in
            switch result {
            case .success(let reading):
                state.slots[slot].reading = reading
                state.slots[slot].lastSuccess = now
                state.slots[slot].up = true
                state.slots[slot].lastError = nil
            case .failure(let error):
                state.slots[slot].up = false
                state.slots[slot].lastError = error.description
            }
            state.slots[slot].lastPollDuration = duration
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

    func recordFailure(location: Int, slot: Int, code: String, reason: String, duration: Double) {
        update(location, slot, code: code) { state in
            state.slots[slot].up = false
            state.slots[slot].lastPollDuration = duration
            state.slots[slot].lastError = reason
        }
    }

    /// `gapsOf`: a reading whose answer's gaps are counted.
    private func update(
        _ location: Int, _ slot: Int, code: String?, gapsOf reading: (any Sendable)? = nil,
        _ body: (inout LocationState) -> Void
    ) {
        state.withLock { snapshot in
            if let code {
                snapshot.requestCounts[RequestKey(source: snapshot.layout.sourceNames[slot], code: code), default: 0] +=
                    1
            }
            let gaps = reading.map { snapshot.layout.sources[slot].gaps(ofStored: $0) } ?? AnswerGaps()
            let name = snapshot.layout.sourceNames[slot]
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
                    var entry = Self.fresh(location, sources: layout.sources, thresholds: layout.thresholds)
                    guard let previous = old[identity] else { return entry }
                    for (slot, before) in oldSlots.old.enumerated() {
                        if let before { entry.slots[slot] = previous.slots[before] }
                    }
                    entry.generation = previous.generation &+ 1
                    return entry
                })
            snapshot.unavailable = oldSlots.moved(snapshot.unavailable)
            snapshot.layout = layout
            snapshot.layoutRevision &+= 1
        }
    }

    func recordListenerDropped() {
        state.withLock { $0.listenersDropped += 1 }
    }

    func recordReload(successful: Bool, now: Double) {
        state.withLock { snapshot in
            snapshot.reloadSuccessful = successful
            if successful { snapshot.reloadSuccessTimestamp = now }
        }
    }
}
