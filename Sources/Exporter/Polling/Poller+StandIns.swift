import OpenWeather

/// The stand-in policy: a source that stands in for others (One Call for weather and forecast) turns
/// their jobs off while it works and fills their slots from its answers; when the key cannot use it
/// (`recordAvailability`), they poll from their own endpoints.
extension Poller {
    /// Switches each source's jobs on or off: a source another one stands in for is off while that
    /// one is usable; an unusable stand-in is off but for one job, retried every `Sources.unavailableRetry`.
    func switchStandIns(in core: inout Core, now: Double) {
        let working = core.setup.layout.planned.filter {
            !$0.standsIn.isEmpty && core.unavailable[$0.slot] == nil && !core.spentForDay.contains($0.slot)
        }
        let replaced = Set(working.flatMap { $0.standsIn.map(\.slot) })
        for slot in core.setup.layout.sources.indices {
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
            core.setup.layout.sources.indices.filter { slot in
                let source = core.setup.layout.sources[slot]
                return !source.standsIn.isEmpty && !core.schedule.daily.hasRoom(slot, source.maxRequestsPerPoll)
            })
        guard spent != core.spentForDay else { return }
        for (slot, source) in core.setup.layout.sources.enumerated()
        where spent.contains(slot) != core.spentForDay.contains(slot) {
            let others = source.standsIn.joined(separator: " and ")
            if spent.contains(slot) {
                logger.warn(
                    """
                    \(source.name) may send no more requests today; polling \(others) from their own endpoints until \
                    00:00 UTC
                    """,
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
        let source = core.setup.layout.planned[slot]
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
                keepBody?(core.setup.layout.locations[location], core.setup.layout.planned[other].source, [])
            case .failure(let error): result = .failure(error)
            }
            store.recordStandIn(
                location: location, slot: other, result: result, duration: completion.duration, now: time.wall())
        }
    }
}
