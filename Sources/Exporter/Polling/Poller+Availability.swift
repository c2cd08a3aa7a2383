import OpenWeather

/// A source the key cannot use (an answer `Source.unavailableHint(for:)` recognises, a subscription missing):
/// its jobs pause but for one retried every `Sources.unavailableRetry`, every location shows its
/// failure, and the sources it stands in for, if any, poll their own endpoints meanwhile
/// (`switchStandIns`).
extension Poller {
    /// Notes what `completion` says of its source's availability to this key. Returns true for an
    /// answer that says the key cannot use it: recorded here, with nothing left to do.
    func recordAvailability(
        _ completion: Completion, job: Int, location: Int, slot: Int, in core: inout Core, now: Double
    ) -> Bool {
        let source = core.setup.layout.sources[slot]
        // What runs meanwhile: the configured sources it stands in for, if any.
        func others(_ setup: Setup) -> String {
            setup.layout.planned[slot].standsIn.map { setup.layout.sources[$0.slot].name }.joined(separator: " and ")
        }
        if case .failure(let error) = completion.result, let hint = source.unavailableHint(for: error) {
            store.recordFailure(
                location: location, slot: slot, code: error.code, reason: error.description,
                duration: completion.duration)
            core.schedule.finished(job: job, outcome: .steadyFailure, now: now, random: 0)
            let first = core.unavailable[slot] == nil
            core.unavailable[slot] = now + Sources.unavailableRetry.seconds
            if first {
                store.recordUnavailable(slot: slot, reason: error.description)
                logger.error(
                    "\(source.name) cannot be used with this key"
                        + (others(core.setup).isEmpty
                            ? "" : "; polling \(others(core.setup)) from their own endpoints instead"),
                    [
                        ("source", source.name), ("reason", error.description),
                        (
                            "hint",
                            """
                            \(hint) or drop --collector.\(source.name); retried every \
                            \(PrometheusDuration.format(Sources.unavailableRetry))
                            """
                        ),
                    ])
                // The key, not the place, lacks it: every location's try has its answer (and readiness too).
                for other in core.setup.layout.locations.indices where other != location {
                    store.recordStandIn(
                        location: other, slot: slot, result: .failure(error), duration: 0, now: time.wall())
                }
                switchStandIns(in: &core, now: now)
            }
            return true
        }
        if case .success = completion.result, core.unavailable[slot] != nil {
            core.unavailable[slot] = nil
            store.recordUnavailable(slot: slot, reason: nil)
            logger.info(
                "\(source.name) works with this key again"
                    + (others(core.setup).isEmpty ? "" : "; it stands in for \(others(core.setup)) again"),
                [("source", source.name)])
            core.schedule.setRetry(job: job, interval: core.setup.layout.intervals[slot].seconds, due: now)
            switchStandIns(in: &core, now: now)
        }
        return false
    }
}
