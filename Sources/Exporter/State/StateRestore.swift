/// Puts a saved state back into a poller that has not started. Only what still fits is taken: a
/// location whose name and place are the same, a source it still has, a reading its source decodes
/// (or, for a slot a stand-in filled, that the stand-in's restored reading gives) and that is not
/// older than the source's staleness (a resolved place is kept whatever its age: a place does not
/// move). Times come back from the wall clock onto the monotonic one, and anything a
/// hand-edited file could make absurd (a success in the future, a pause of a week) is bounded.
enum StateRestore {
    struct Summary: Equatable {
        var readings = 0
        var places = 0
        /// Seconds of 429 pause left.
        var pause: Double?
        /// The bodies of the readings taken back, by `Location.identity(_:source:)`.
        var bodies: [String: [UInt8]] = [:]
    }

    /// The algorithm: the store first (each kept location's readings, then what stand-ins give the
    /// slots they filled), then which places are resolved and when each job is due, then the schedule
    /// (jobs, the 429 pause, the last minute's starts, the day's counts).
    static func apply(
        _ saved: SavedState, to poller: Poller, store: ReadingStore, wallNow: Double, now: Double
    ) -> Summary {
        var restoring = Restoring(saved: saved, wallNow: wallNow, now: now)
        var jobs: [PollSchedule.RestoredJob] = []
        poller.restore(
            store: { setup in
                for (position, location) in setup.layout.locations.enumerated() {
                    guard let entry = restoring.entry(of: location) else { continue }
                    var states = restoring.readings(of: entry, at: position, setup: setup)
                    restoring.deriveStandIns(&states, entry: entry, setup: setup)
                    for (slot, state) in states { store.restore(location: position, slot: slot, state) }
                }
                jobs = restoring.jobs(setup: setup, locations: store.snapshot().locations)
            },
            schedule: { _, schedule in restoring.restore(&schedule, jobs: jobs) })
        return restoring.summary
    }

    /// One restore's inputs and what it has taken back so far.
    private struct Restoring {
        let saved: SavedState
        let wallNow: Double
        let now: Double
        let byIdentity: [String: SavedState.LocationEntry]
        var summary = Summary()
        /// Jobs whose fresh reading could not be decoded again (a decoder made stricter by an upgrade):
        /// polled at once rather than left blank until their next due time.
        var lost = Set<JobID>()

        init(saved: SavedState, wallNow: Double, now: Double) {
            self.saved = saved
            self.wallNow = wallNow
            self.now = now
            byIdentity = Dictionary(saved.locations.map { ($0.identity, $0) }, uniquingKeysWith: { first, _ in first })
        }

        func monotonic(_ wall: Double) -> Double { now + (wall - wallNow) }

        /// The saved location of the same name and place, if any.
        func entry(of location: Location) -> SavedState.LocationEntry? { byIdentity[location.identity] }

        /// Each slot the location still has, as saved: its outcome, and its reading when its source
        /// decodes the kept body and it is fresh enough (a resolved place whatever its age).
        mutating func readings(
            of entry: SavedState.LocationEntry, at position: Int, setup: Poller.Setup
        ) -> [(slot: Int, state: ReadingStore.SlotState)] {
            let location = setup.layout.locations[position]
            var states: [(slot: Int, state: ReadingStore.SlotState)] = []
            for (slot, source) in setup.layout.sources.enumerated() {
                guard let old = entry.sources.first(where: { $0.name == source.name }) else { continue }
                var state = ReadingStore.SlotState(applies: !source.resolves || location.query != nil)
                guard state.applies else { continue }
                state.up = old.up
                state.lastError = old.lastError
                state.lastPollDuration = old.lastPollDuration.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
                state.lastSuccess = old.lastSuccess.flatMap { $0.isFinite && $0 > 0 && $0 <= wallNow + 60 ? $0 : nil }
                if let success = state.lastSuccess, !old.body.isEmpty,
                    source.resolves || wallNow - success <= setup.layout.maxStaleness[slot]
                {
                    if let reading = try? source.decode(old.body, for: location) {
                        state.reading = reading
                        summary.bodies[Location.identity(location.identity, source: source.name)] = old.body
                        summary.readings += 1
                    } else {
                        lost.insert(JobID(location: position, slot: slot))
                    }
                }
                states.append((slot, state))
            }
            return states
        }

        /// A slot filled from a stand-in's answer (weather from One Call) was saved without a body of
        /// its own: its reading comes from the stand-in's restored one, as it came at the time.
        mutating func deriveStandIns(
            _ states: inout [(slot: Int, state: ReadingStore.SlotState)], entry: SavedState.LocationEntry,
            setup: Poller.Setup
        ) {
            for (slot, state) in states {
                let standIn = setup.layout.planned[slot]
                guard !standIn.standsIn.isEmpty, let reading = state.reading,
                    let derived = standIn.source.readings(standingIn: reading)
                else { continue }
                for other in standIn.standsIn {
                    guard let index = states.firstIndex(where: { $0.slot == other.slot }),
                        states[index].state.reading == nil,
                        let success = states[index].state.lastSuccess,
                        wallNow - success <= setup.layout.maxStaleness[other.slot],
                        entry.sources.first(where: { $0.name == setup.layout.sources[other.slot].name })?.body.isEmpty
                            == true
                    else { continue }
                    states[index].state.reading = derived[other.derived]
                    summary.readings += 1
                }
            }
        }

        /// When each kept job is due: a resolver whose place came back is done; the others keep their
        /// saved due time and backoff, bounded (a shorter interval than last run's, or a clock set back,
        /// must not push a poll far out), and a job whose reading was lost is due at once.
        mutating func jobs(setup: Poller.Setup, locations: ReadingStore.LocationStates) -> [PollSchedule.RestoredJob] {
            var jobs: [PollSchedule.RestoredJob] = []
            let sourceCount = setup.layout.sources.count
            for (position, location) in setup.layout.locations.enumerated() {
                guard let entry = entry(of: location) else { continue }
                let resolved = location.query != nil && locations[position].resolved != nil
                if resolved { summary.places += 1 }
                for (slot, source) in setup.layout.sources.enumerated() {
                    let id = JobID(location: position, slot: slot)
                    if source.resolves && resolved {
                        jobs.append((id.index(slots: sourceCount), now, 0, nil, true))
                        continue
                    }
                    guard let old = entry.sources.first(where: { $0.name == source.name }), let nextDue = old.nextDue,
                        nextDue.isFinite
                    else {
                        continue
                    }
                    let failures = min(max(old.failures, 0), 30)
                    let longest =
                        failures == 0
                        ? setup.layout.intervals[slot].seconds
                        : max(setup.layout.intervals[slot].seconds, PollSchedule.maxRateLimitPause)
                    jobs.append(
                        (
                            id.index(slots: sourceCount),
                            lost.contains(id) ? now : min(max(monotonic(nextDue), now), now + longest), failures,
                            old.lastAttempt.flatMap { $0.isFinite ? monotonic($0) : nil }, false
                        ))
                }
            }
            return jobs
        }

        /// The jobs, a 429 pause still running (at most the longest pause), the last minute's starts,
        /// and the day's counts when the same UTC day goes on (a later day starts at 0).
        mutating func restore(_ schedule: inout PollSchedule, jobs: [PollSchedule.RestoredJob]) {
            var pausedUntil = -Double.infinity
            if let until = saved.pausedUntil, until.isFinite, until > wallNow {
                pausedUntil = now + min(until - wallNow, PollSchedule.maxRateLimitPause)
                summary.pause = pausedUntil - now
            }
            let recent = saved.recentStarts.filter { $0.isFinite && $0 <= wallNow && $0 > wallNow - 60 }.map(monotonic)
            schedule.restore(
                jobs: jobs, pausedUntil: pausedUntil, strikes: min(max(saved.rateLimitStrikes, 0), 30),
                recentStarts: recent)
            if let daily = saved.daily {
                schedule.daily.advance(to: wallNow)
                schedule.daily.restore(daily)
            }
        }
    }
}
