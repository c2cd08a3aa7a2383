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

    static func apply(_ saved: SavedState, to poller: Poller, store: WeatherStore, wallNow: Double, now: Double) -> Summary {
        func monotonic(_ wall: Double) -> Double { now + (wall - wallNow) }
        let byIdentity = Dictionary(saved.locations.map { ($0.identity, $0) }, uniquingKeysWith: { first, _ in first })
        var summary = Summary()
        var resolved = Set<Int>()
        /// Jobs whose fresh reading could not be decoded again (a decoder made stricter by an upgrade):
        /// polled at once rather than left blank until their next due time.
        var lost = Set<JobID>()
        var jobs: [(index: Int, nextDue: Double, failures: Int, lastStart: Double?, done: Bool)] = []
        poller.restore(
            store: { plan in
                for (position, location) in plan.locations.enumerated() {
                    guard let entry = byIdentity[location.identity] else { continue }
                    var states: [(slot: Int, state: WeatherStore.SourceState)] = []
                    for (slot, source) in plan.sources.enumerated() {
                        guard let old = entry.sources.first(where: { $0.name == source.name }) else { continue }
                        var state = WeatherStore.SourceState(applies: !source.resolves || location.query != nil)
                        guard state.applies else { continue }
                        state.up = old.up
                        state.lastError = old.lastError
                        state.lastPollDuration = old.lastPollDuration.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
                        state.lastSuccess = old.lastSuccess.flatMap { $0.isFinite && $0 > 0 && $0 <= wallNow + 60 ? $0 : nil }
                        if let success = state.lastSuccess, !old.body.isEmpty, source.resolves || wallNow - success <= plan.maxStaleness[slot] {
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
                    // A slot filled from a stand-in's answer (weather from One Call) was saved without a body
                    // of its own: its reading comes from the stand-in's restored one, as it came at the time.
                    for (slot, state) in states {
                        let standIn = plan.sources[slot]
                        guard !standIn.standsIn.isEmpty, let reading = state.reading else { continue }
                        let derived = standIn.readings(standingIn: reading)
                        for index in states.indices where states[index].state.reading == nil {
                            let other = states[index].slot
                            guard let value = derived[plan.sources[other].name], let success = states[index].state.lastSuccess,
                                wallNow - success <= plan.maxStaleness[other],
                                entry.sources.first(where: { $0.name == plan.sources[other].name })?.body.isEmpty == true
                            else { continue }
                            states[index].state.reading = value
                            summary.readings += 1
                        }
                    }
                    for (slot, state) in states { store.restore(location: position, source: slot, state) }
                }
                let states = store.snapshot().locations
                for (position, location) in plan.locations.enumerated() {
                    guard let entry = byIdentity[location.identity] else { continue }
                    if location.query != nil, states[position].resolved != nil {
                        resolved.insert(position)
                        summary.places += 1
                    }
                    let sourceCount = plan.sources.count
                    for (slot, source) in plan.sources.enumerated() {
                        if source.resolves && resolved.contains(position) {
                            jobs.append((JobID(location: position, slot: slot).index(slots: sourceCount), now, 0, nil, true))
                            continue
                        }
                        guard let old = entry.sources.first(where: { $0.name == source.name }), let nextDue = old.nextDue, nextDue.isFinite else {
                            continue
                        }
                        let failures = min(max(old.failures, 0), 30)
                        // A shorter interval than last run's, or a clock set back, must not push a poll far out.
                        let longest = failures == 0 ? plan.intervals[slot].seconds : max(plan.intervals[slot].seconds, PollSchedule.maxRateLimitPause)
                        let id = JobID(location: position, slot: slot)
                        jobs.append((
                            id.index(slots: sourceCount), lost.contains(id) ? now : min(max(monotonic(nextDue), now), now + longest), failures,
                            old.lastAttempt.flatMap { $0.isFinite ? monotonic($0) : nil }, false
                        ))
                    }
                }
            },
            schedule: { plan, schedule in
                var pausedUntil = -Double.infinity
                if let until = saved.pausedUntil, until.isFinite, until > wallNow {
                    pausedUntil = now + min(until - wallNow, PollSchedule.maxRateLimitPause)
                    summary.pause = pausedUntil - now
                }
                let recent = saved.recentStarts.filter { $0.isFinite && $0 <= wallNow && $0 > wallNow - 60 }.map(monotonic)
                schedule.restore(
                    jobs: jobs, pausedUntil: pausedUntil, strikes: min(max(saved.rateLimitStrikes, 0), 30), recentStarts: recent)
                // The same UTC day goes on counting; a later day starts at 0.
                if let daily = saved.daily {
                    schedule.daily.advance(to: wallNow)
                    schedule.daily.restore(daily)
                }
            })
        return summary
    }
}
