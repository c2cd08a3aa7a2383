import OpenWeather

/// The stand-in policy: a source that stands in for others (One Call for weather and forecast) turns
/// their jobs off while it works and fills their slots from its answers; when the key cannot use it,
/// they poll from their own endpoints and it is retried every `Sources.unavailableRetry`.
extension Poller {
    /// Switches each source's jobs on or off: a source another one stands in for is off while that
    /// one is usable; an unusable stand-in is off but for one job, retried every `Sources.unavailableRetry`.
    func switchStandIns(in core: inout Core, now: Double) {
        let working = core.setup.planned.filter {
            !$0.standsIn.isEmpty && core.unavailable[$0.slot] == nil && !core.spentForDay.contains($0.slot)
        }
        let replaced = Set(working.flatMap { $0.standsIn.map(\.slot) })
        for slot in core.setup.sources.indices {
            let retry = core.unavailable[slot]
            core.schedule.setSlot(slot, on: !replaced.contains(slot) && retry == nil, now: now)
            if let retry,
                let probe = core.schedule.indices(ofSlot: slot).first(where: {
                    core.schedule.jobs[$0].spec.kind == .poll
                })
            {
                core.schedule.setRetry(job: probe, interval: Sources.unavailableRetry.seconds, due: retry)
            }
        }
    }

    /// A source that stands in for others and has spent its day (its daily limit, or a 429 for the
    /// day) hands them back their own endpoints until 00:00 UTC; its jobs wait for then in the schedule.
    func switchForDay(in core: inout Core, now: Double) {
        let spent = Set(
            core.setup.sources.indices.filter { slot in
                let source = core.setup.sources[slot]
                return !source.standsIn.isEmpty && !core.schedule.daily.hasRoom(slot, source.maxRequestsPerPoll)
            })
        guard spent != core.spentForDay else { return }
        for (slot, source) in core.setup.sources.enumerated()
        where spent.contains(slot) != core.spentForDay.contains(slot) {
            let others = source.standsIn.joined(separator: " and ")
            if spent.contains(slot) {
                logger.warn(
                    "\(source.name) may send no more requests today; polling \(others) from their own endpoints until 00:00 UTC",
                    [
                        ("source", source.name), ("requests_today", String(core.schedule.daily.count(of: slot))),
                        ("limit", core.schedule.daily.limit(of: slot).map(String.init) ?? "none"),
                    ])
            } else {
                logger.info("a new UTC day: \(source.name) stands in for \(others) again", [("source", source.name)])
            }
        }
        core.spentForDay = spent
        switchStandIns(in: &core, now: now)
    }

    /// A stand-in's answer fills the slots of the sources it stands in for, or marks them failed.
    func recordStandIns(_ completion: Completion, location: Int, slot: Int, in core: inout Core) {
        let source = core.setup.planned[slot]
        guard !source.standsIn.isEmpty else { return }
        let readings = (try? completion.result.get()).flatMap(source.source.readings(standingIn:))
        for standIn in source.standsIn {
            let other = standIn.slot
            let result: Result<any Sendable, OpenWeatherError>
            switch completion.result {
            case .success:
                guard let readings else { continue }
                result = .success(readings[standIn.derived])
                // No body of its own: the state file restores it from the stand-in's.
                keepBody?(core.setup.locations[location], core.setup.planned[other].source, [])
            case .failure(let error): result = .failure(error)
            }
            store.recordStandIn(
                location: location, source: other, result: result, duration: completion.duration, now: time.wall())
        }
    }

    /// Notes what `completion` says of its source's availability to this key. Returns true for an
    /// answer that says the key cannot use it: recorded here, with nothing left to do.
    func recordAvailability(
        _ completion: Completion, job: Int, location: Int, slot: Int, in core: inout Core, now: Double
    ) -> Bool {
        let source = core.setup.sources[slot]
        if case .failure(let error) = completion.result, source.isUnavailable(error) {
            store.recordFailure(
                location: location, source: slot, code: error.code, reason: error.description,
                duration: completion.duration)
            core.schedule.finished(job: job, outcome: .steadyFailure, now: now, random: 0)
            let first = core.unavailable[slot] == nil
            core.unavailable[slot] = now + Sources.unavailableRetry.seconds
            if first {
                store.recordUnavailable(slot: slot, reason: error.description)
                logger.error(
                    "\(source.name) cannot be used with this key; polling \(source.standsIn.joined(separator: " and ")) from their own endpoints instead",
                    [
                        ("source", source.name), ("reason", error.description),
                        (
                            "hint",
                            "\(source.unavailableHint) or drop --collector.\(source.name); retried every \(PrometheusDuration.format(Sources.unavailableRetry))"
                        ),
                    ])
                // The key, not the place, lacks it: every location's try has its answer (and readiness too).
                for other in core.setup.locations.indices where other != location {
                    store.recordStandIn(
                        location: other, source: slot, result: .failure(error), duration: 0, now: time.wall())
                }
                switchStandIns(in: &core, now: now)
            }
            return true
        }
        if case .success = completion.result, core.unavailable[slot] != nil {
            core.unavailable[slot] = nil
            store.recordUnavailable(slot: slot, reason: nil)
            logger.info(
                "\(source.name) works with this key again; it stands in for \(source.standsIn.joined(separator: " and ")) again",
                [("source", source.name)])
            core.schedule.setRetry(job: job, interval: core.setup.intervals[slot].seconds, due: now)
            switchStandIns(in: &core, now: now)
        }
        return false
    }
}
