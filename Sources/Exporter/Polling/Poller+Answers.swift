import OpenWeather

/// An answer recorded, in the order a reader follows it: the room it held goes back, it finds its job,
/// then its result is stored, the key's state noted, a person told, and the schedule given the outcome
/// that sets the next try.
extension Poller {
    func record(_ completion: Completion, in core: inout Core, now: Double) {
        // Whatever became of the job (a reload may have removed it), its requests were counted as they
        // were sent; the room it held and did not use goes back.
        core.schedule.release(
            slot: core.dailySlot(completion.slot, of: completion.source, since: completion.epoch), held: completion.held
        )
        guard let job = job(answering: completion, in: &core) else { return }
        let id = core.schedule.id(of: job)
        if recordAvailability(completion, job: job, location: id.location, slot: id.slot, in: &core, now: now) {
            return
        }
        recordStandIns(completion, location: id.location, slot: id.slot, in: &core)
        storeResult(completion, at: id, in: core)
        let keyChanged = recordKeyState(completion, in: &core)
        log(completion, at: id, keyChanged: keyChanged, in: &core)
        let outcome = outcome(of: completion, slot: id.slot, in: &core)
        finish(job, outcome, at: id, source: completion.source, in: &core, now: now)
    }

    /// Stores the reading or the failure; a good answer's body is kept for the state file.
    private func storeResult(_ completion: Completion, at id: JobID, in core: Core) {
        switch completion.result {
        case .success(let reading):
            store.recordSuccess(
                location: id.location, slot: id.slot, reading: reading, duration: completion.duration, now: time.wall())
            keepBody?(core.setup.layout.locations[id.location], completion.source, completion.body)
        case .failure(let error):
            store.recordFailure(
                location: id.location, slot: id.slot, code: error.code, reason: error.description,
                duration: completion.duration)
        }
    }

    /// Tells a person what the answer brought: a resolved place, what it lacked, a failure's reason.
    private func log(_ completion: Completion, at id: JobID, keyChanged: Bool, in core: inout Core) {
        let labels = [("location", completion.location.name), ("source", completion.source.name)]
        switch completion.result {
        case .success(let reading):
            if let resolved = completion.source.resolvedPlace(ofStored: reading) {
                logResolved(resolved, query: core.setup.layout.locations[id.location].query, labels: labels)
            }
            logGaps(completion.source.gaps(ofStored: reading), slot: id.slot, labels: labels, in: &core)
            logger.debug("polled", labels + [("duration", String(completion.duration))])
        case .failure(let error):
            guard case .http(401, _, _) = error else {
                logger.warn("poll failed", labels + [("code", error.code), ("reason", error.description)])
                return
            }
            // The key's state logs a rejection once; every 401 after that is old news.
            if !keyChanged { logger.debug("poll failed", labels + [("code", error.code)]) }
        }
    }

    private func logResolved(_ resolved: ResolvedPlace, query: PlaceQuery?, labels: [(String, String)]) {
        let place = resolved.place
        let hint =
            resolved.others > 0
            ? [
                (
                    "hint",
                    """
                    the first of \(resolved.others + 1) matches was taken; to pin another, give its coordinates as \
                    NAME=LAT,LON
                    """
                )
            ] : []
        logger.info(
            "place resolved",
            labels + [
                ("query", query?.description ?? ""), ("name", place.name), ("state", place.state ?? ""),
                ("country", place.country), ("latitude", String(place.latitude)),
                ("longitude", String(place.longitude)), ("other_matches", String(resolved.others)),
            ] + hint)
    }

    /// What an answer lacked, at debug, once per source and field for the process: the counters
    /// (`openweather_fields_missing_total`, `openweather_entries_skipped_total`) say how often.
    private func logGaps(_ gaps: AnswerGaps, slot: Int, labels: [(String, String)], in core: inout Core) {
        guard !gaps.isEmpty, logger.level <= .debug else { return }
        // A list is kept beside the fields under its name with "[]": a field and a list may share a name.
        var logged = core.gapsLogged[slot] ?? []
        defer { core.gapsLogged[slot] = logged }
        for gap in gaps.fields where logged.insert(gap.field).inserted {
            logger.debug(
                "answer field unusable: its series are left out",
                labels + [
                    ("field", gap.field), ("reason", gap.reason),
                    ("hint", "logged once per source and field; openweather_fields_missing_total counts them"),
                ])
        }
        for gap in gaps.skipped where logged.insert(gap.field + "[]").inserted {
            logger.debug(
                "answer entries skipped: the others are used",
                labels + [
                    ("list", gap.field), ("entries", String(gap.count)), ("reason", gap.reason),
                    ("hint", "logged once per source and list; openweather_entries_skipped_total counts them"),
                ])
        }
    }

    /// What the schedule does next for the job; the outcome sets when it is tried again.
    private func outcome(of completion: Completion, slot: Int, in core: inout Core) -> PollSchedule.Outcome {
        guard case .failure(let error) = completion.result else { return .success }
        switch error {
        case .http(401, _, _): return .steadyFailure
        case .http(429, _, _) where core.setup.layout.planned[slot].dailyLimit != nil:
            spendDay(slot, of: completion.source, in: &core)
            return .steadyFailure
        case .http(429, _, let retryAfter): return .rateLimited(retryAfter: retryAfter)
        // A day's limit without room: the job's next start waits for room (or 00:00 UTC) anyway.
        case .http(400, _, _), .http(404, _, _), .noMatch, .dailyLimit: return .steadyFailure
        default: return .transientFailure
        }
    }

    /// A source billed by the day (One Call) that answers 429 within the per-minute budget the poller
    /// keeps has spent its day's quota: it alone pauses, until 00:00 UTC.
    private func spendDay(_ slot: Int, of source: any Source, in core: inout Core) {
        core.schedule.daily.spend(slot)
        let limit = core.setup.layout.planned[slot].dailyLimit ?? 0
        let flag = "--collector.\(source.name).max-requests-per-day=\(limit)"
        logger.error(
            """
            OpenWeather rate limit hit (429) on a source with a daily limit: its quota for the day is used up; \
            pausing \(source.name) until 00:00 UTC
            """,
            [
                ("source", source.name), ("requests_today", String(core.schedule.daily.count(of: slot))),
                ("hint", "the account allows fewer calls a day than \(flag); set it to the account's own daily limit"),
            ])
    }

    /// Hands the outcome to the schedule, with what follows from it: a resolved place lets its
    /// location's polls start, and a 429 pauses every request.
    private func finish(
        _ job: Int, _ outcome: PollSchedule.Outcome, at id: JobID, source: any Source, in core: inout Core, now: Double
    ) {
        // Drawn only for the retry it spreads: each draw is a getrandom system call.
        var jitter = 0.0
        if case .transientFailure = outcome { jitter = Double.random(in: 0..<1, using: &core.random) }
        core.schedule.finished(job: job, outcome: outcome, now: now, random: jitter)
        if case .success = outcome, core.setup.layout.sources[id.slot].resolves {
            core.schedule.unblock(location: id.location, now: now)
        }
        if case .rateLimited = outcome, let pause = core.schedule.pause(now: now) {
            logger.error(
                "OpenWeather rate limit hit (429): pausing all requests",
                [
                    ("source", source.name), ("pause", PrometheusDuration.format(seconds: pause.rounded(.up))),
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
}
