import OpenWeather

/// An answer recorded: stored, logged for a person (the key's state changes once each, a place
/// resolved, a failure, a 429 pause), and told to the schedule with the outcome that sets the next try.
extension Poller {
    func record(_ completion: Completion, in core: inout Core, now: Double) {
        // Whatever became of the job (a reload may have removed it), its requests were counted as they
        // were sent; the room it held and did not use goes back.
        core.schedule.release(
            slot: core.dailySlot(completion.slot, of: completion.source, since: completion.epoch), held: completion.held
        )
        guard let job = job(answering: completion, in: &core) else { return }
        let id = core.schedule.id(of: job)
        let (location, slot) = (id.location, id.slot)
        if recordAvailability(completion, job: job, location: location, slot: slot, in: &core, now: now) { return }
        recordStandIns(completion, location: location, slot: slot, in: &core)
        let outcome = classify(completion, location: location, slot: slot, in: &core)
        // Drawn only for the retry it spreads: each draw is a getrandom system call.
        var jitter = 0.0
        if case .transientFailure = outcome { jitter = Double.random(in: 0..<1, using: &core.random) }
        core.schedule.finished(job: job, outcome: outcome, now: now, random: jitter)
        if case .success = outcome, core.setup.layout.sources[slot].resolves {
            core.schedule.unblock(location: location, now: now)
        }
        if case .rateLimited = outcome, let pause = core.schedule.pause(now: now) {
            logger.error(
                "OpenWeather rate limit hit (429): pausing all requests",
                [
                    ("source", completion.source.name),
                    ("pause", PrometheusDuration.format(seconds: pause.rounded(.up))),
                    (
                        "hint",
                        """
                        the plan's limit was exceeded; lower --openweather.max-requests-per-minute or raise the \
                        collectors' intervals
                        """
                    ),
                ])
        }
    }

    /// Records what an answer to a request sent at `since` says of the key; true when that is a change.
    /// A request in flight while the key changed (one sent before the last change) does not flip it
    /// back, so each change is logged once even with many locations polled at once.
    private func keyState(rejected: Bool, since: Double, in core: inout Core) -> Bool {
        guard core.keyRejected != rejected, since >= core.keyStateSince else { return false }
        core.keyRejected = rejected
        core.keyStateSince = since
        return true
    }

    private func classify(
        _ completion: Completion, location: Int, slot: Int, in core: inout Core
    ) -> PollSchedule.Outcome {
        let labels = [("location", completion.location.name), ("source", completion.source.name)]
        switch completion.result {
        case .success(let reading):
            store.recordSuccess(
                location: location, slot: slot, reading: reading, duration: completion.duration, now: time.wall())
            keepBody?(core.setup.layout.locations[location], completion.source, completion.body)
            if keyState(rejected: false, since: completion.started, in: &core) {
                logger.info("OpenWeather accepts the API key again; polling resumes normally")
            }
            if let resolved = completion.source.resolvedPlace(ofStored: reading) {
                let place = resolved.place
                logger.info(
                    "place resolved",
                    labels + [
                        ("query", core.setup.layout.locations[location].query?.description ?? ""), ("name", place.name),
                        ("state", place.state ?? ""), ("country", place.country),
                        ("latitude", String(place.latitude)), ("longitude", String(place.longitude)),
                        ("other_matches", String(resolved.others)),
                    ]
                        + (resolved.others > 0
                            ? [
                                (
                                    "hint",
                                    """
                                    the first of \(resolved.others + 1) matches was taken; to pin another, give its \
                                    coordinates as NAME=LAT,LON
                                    """
                                )
                            ]
                            : []))
            }
            logGaps(completion.source.gaps(ofStored: reading), of: completion.source.name, labels: labels, in: &core)
            logger.debug("polled", labels + [("duration", String(completion.duration))])
            return .success
        case .failure(let error):
            store.recordFailure(
                location: location, slot: slot, code: error.code, reason: error.description,
                duration: completion.duration)
            if case .http(401, _, _) = error {
                if keyState(rejected: true, since: completion.started, in: &core) {
                    logger.error(
                        "OpenWeather rejects the API key (401); every location is down until it works",
                        [
                            ("reason", error.description),
                            (
                                "hint",
                                """
                                a new key takes up to a couple of hours to activate; polling continues at the normal \
                                interval
                                """
                            ),
                        ])
                } else {
                    logger.debug("poll failed", labels + [("code", error.code)])
                }
                return .steadyFailure
            }
            logger.warn("poll failed", labels + [("code", error.code), ("reason", error.description)])
            switch error {
            case .http(429, _, _) where core.setup.layout.planned[slot].dailyLimit != nil:
                // A source billed by the day (One Call) that answers 429 within the per-minute budget the
                // poller keeps has spent its day's quota: it alone pauses, until 00:00 UTC.
                core.schedule.daily.spend(slot)
                let limit = core.setup.layout.planned[slot].dailyLimit ?? 0
                let flag = "--collector.\(completion.source.name).max-requests-per-day=\(limit)"
                logger.error(
                    """
                    OpenWeather rate limit hit (429) on a source with a daily limit: its quota for the day is used up; \
                    pausing \(completion.source.name) until 00:00 UTC
                    """,
                    [
                        ("source", completion.source.name),
                        ("requests_today", String(core.schedule.daily.count(of: slot))),
                        (
                            "hint",
                            "the account allows fewer calls a day than \(flag); set it to the account's own daily limit"
                        ),
                    ])
                return .steadyFailure
            case .http(429, _, let retryAfter): return .rateLimited(retryAfter: retryAfter)
            // A day's limit without room: the job's next start waits for room (or 00:00 UTC) anyway.
            case .http(400, _, _), .http(404, _, _), .noMatch, .dailyLimit: return .steadyFailure
            default: return .transientFailure
            }
        }
    }

    /// What an answer lacked, at debug, once per source and field for the process: the counters
    /// (`openweather_fields_missing_total`, `openweather_entries_skipped_total`) say how often.
    private func logGaps(_ gaps: AnswerGaps, of source: String, labels: [(String, String)], in core: inout Core) {
        guard !gaps.isEmpty, logger.level <= .debug else { return }
        for gap in gaps.fields where core.gapsLogged.insert(.init(source: source, field: gap.field)).inserted {
            logger.debug(
                "answer field unusable: its series are left out",
                labels + [
                    ("field", gap.field), ("reason", gap.reason),
                    ("hint", "logged once per source and field; openweather_fields_missing_total counts them"),
                ])
        }
        for gap in gaps.skipped where core.gapsLogged.insert(.init(source: source, field: gap.field + "[]")).inserted {
            logger.debug(
                "answer entries skipped: the others are used",
                labels + [
                    ("list", gap.field), ("entries", String(gap.count)), ("reason", gap.reason),
                    ("hint", "logged once per source and list; openweather_entries_skipped_total counts them"),
                ])
        }
    }
}
