/// When to run which job: a pure state machine, driven by the poller's clock, so tests can run
/// hours of schedule in microseconds.
///
/// A job is one source at one location; all jobs share one request budget and one 429 pause, since
/// OpenWeather limits the key, not the endpoint. The requests in flight (`maxInFlight`) are split
/// evenly among the sources that have jobs, so a source whose endpoint hangs holds its own share for
/// the timeout and the others keep theirs. Jobs are laid out location by location, a slot per
/// source: job `location × sources + source`. A source's `n` polling jobs own the phases
/// `i × interval / n`, so each source's requests are spread evenly over its interval; `i` counts
/// the locations in `phaseOrder`, so the caller decides which locations follow each other. The first
/// round starts at once, paced only by the budget. Transient failures back a job off exponentially
/// with jitter; a 429 pauses every job.
///
/// Daily limits (`daily`) are counted in UTC days on the wall clock `next` is given: a job of a
/// source that may send nothing more today waits until 00:00 UTC; when the key's limit is reached,
/// every job does.
///
/// A resolver job turns a place's name into coordinates, once; the polling jobs of that location
/// wait until it succeeds (`unblock`). After an answer that found nothing it retries at its interval.
struct PollSchedule {
    private(set) var jobs: [Job] = []
    private(set) var sourceCount = 1
    /// Per slot, every schedulable job not in flight, by when it is due (ties: job order), so choosing
    /// the next costs O(log n) and a look at each source's first instead of a scan of every job.
    private var due: [DueQueue] = []
    /// Due jobs out of `due` because polls in flight hold the day's room they need (`release` puts them back).
    private var waitingForRoom: [Int] = []
    private(set) var budget: RequestBudget
    /// Requests sent today, per slot and in all, and the daily limits.
    var daily: DailyBudget
    private(set) var pausedUntil = -Double.infinity
    private(set) var rateLimitStrikes = 0
    private(set) var inFlightCount = 0
    /// Per slot: its requests in flight, and the most it may have (its share of `maxInFlight`).
    private(set) var inFlightBySlot: [Int] = []
    private(set) var shares: [Int] = []
    /// Per slot: its jobs that take a share (`Job.takesShare`).
    private var sharing: [Int] = []
    /// Requests still in flight for jobs a reload removed: they hold their place under `maxInFlight`
    /// until they answer (`orphanFinished`), so reloads never let more requests run at once.
    private(set) var orphans = 0
    private let origin: Double
    let maxInFlight: Int

    /// Requests in flight at once, across every location and source (split among the sources).
    static let requestLimit = 16

    /// `specs`: `sourceCount` per location, in location order. `phaseOrder`: the locations (their
    /// positions, each once) in the order their phases follow each other; nil for location order.
    init(
        specs: [Spec], sourceCount: Int, requestsPerMinute: Int, now: Double, phaseOrder: [Int]? = nil,
        maxInFlight: Int = PollSchedule.requestLimit
    ) {
        self.origin = now
        self.maxInFlight = maxInFlight
        self.budget = RequestBudget(limitPerMinute: requestsPerMinute)
        self.daily = DailyBudget(wall: 0)
        reconfigure(
            specs: specs, sourceCount: sourceCount, requestsPerMinute: requestsPerMinute, now: now,
            phaseOrder: phaseOrder)
    }

    /// New jobs are due at once; kept ones (same key) keep their state, and a resolver that has not
    /// succeeded yet tries again at once; the budget remembers recent starts.
    mutating func reconfigure(
        specs: [Spec], sourceCount: Int, requestsPerMinute: Int, now: Double, phaseOrder: [Int]? = nil
    ) {
        var old: [String: Job] = [:]
        for job in jobs where old[job.spec.key] == nil { old[job.spec.key] = job }
        let kept = Set(specs.map(\.key))
        orphans += old.values.count { $0.inFlight && !kept.contains($0.spec.key) }
        self.sourceCount = max(sourceCount, 1)
        budget = RequestBudget(limitPerMinute: requestsPerMinute, recentStarts: budget.recentStarts)
        let locations = specs.count / self.sourceCount
        // Per polling job, its place among its source's polling jobs, counted in `phaseOrder`.
        var rank = [Int](repeating: 0, count: specs.count)
        var polling = [Int](repeating: 0, count: self.sourceCount)
        for location in phaseOrder ?? Array(0..<locations) where location < locations {
            for source in 0..<self.sourceCount {
                let index = JobID(location: location, slot: source).index(slots: self.sourceCount)
                guard specs[index].kind == .poll else { continue }
                rank[index] = polling[source]
                polling[source] += 1
            }
        }
        jobs = specs.enumerated().map { index, spec in
            var job = old[spec.key] ?? Job(spec: spec, nextDue: now)
            if job.spec.kind == .resolve && !job.done && !job.inFlight { job.nextDue = min(job.nextDue, now) }
            job.spec = spec
            if spec.kind == .poll {
                job.phase = Double(rank[index]) * spec.interval / Double(polling[index % self.sourceCount])
            }
            return job
        }
        inFlightCount = jobs.count { $0.inFlight }
        inFlightBySlot = [Int](repeating: 0, count: self.sourceCount)
        for index in jobs.indices where jobs[index].inFlight { inFlightBySlot[id(of: index).slot] += 1 }
        rebuildQueue()
    }

    /// `wall`: seconds since the epoch at `now`, which the daily limits count days by.
    mutating func next(now: Double, wall: Double) -> Decision {
        daily.advance(to: wall)
        while true {
            guard inFlightCount + orphans < maxInFlight, let (nextDue, index) = firstDue() else { return .idle }
            let start = max(nextDue, budget.nextAllowed(), pausedUntil)
            guard start <= now else { return .wait(until: start) }
            // 00:00 UTC on this clock.
            let midnight = now + DailyBudget.nextMidnight(after: wall) - wall
            if daily.keyExhausted { return .wait(until: midnight) }
            let slot = id(of: index).slot
            let cost = max(jobs[index].spec.cost, 1)
            // Not until 00:00 UTC: they go as soon as the shared day works again.
            if let until = daily.withheldUntil, daily.governs(slot) {
                due[slot].removeFirst()
                jobs[index].nextDue = max(until, now + 1)
                enqueue(index)
                continue
            }
            // A poll of several requests starts only when the day has room for all of them, and holds
            // that room until it ends (`release`), so polls in flight together never pass a limit.
            if !daily.allows(slot, cost) {
                due[slot].removeFirst()
                if daily.hasRoom(slot, cost) {
                    // The room is held by polls in flight: the job goes when one of them gives some back.
                    waitingForRoom.append(index)
                } else {
                    jobs[index].nextDue = midnight
                    enqueue(index)
                }
                continue
            }
            due[slot].removeFirst()
            jobs[index].inFlight = true
            jobs[index].lastStart = now
            inFlightCount += 1
            inFlightBySlot[slot] += 1
            budget.record(start: now)
            daily.reserve(slot, cost)
            daily.record(slot, reserved: true)
            jobs[index].held = cost - 1
            return .fire(job: index)
        }
    }

    /// A poll in flight is about to send another request (a part of its answer, or the client's resend
    /// of one): counted now, under the per-minute and daily budgets, out of the room the poll holds
    /// (`held`, lowered) or, past that, only if the day has room. False: it may not go.
    mutating func send(slot: Int, held: inout Int, now: Double) -> Bool {
        guard daily.take(slot, held: &held) else { return false }
        budget.record(start: now)
        return true
    }

    /// A poll ended (whatever became of its job: a reload may have removed it): the room it held and
    /// did not use goes back, and the jobs that waited for room are due again.
    mutating func release(slot: Int, held: Int) {
        daily.release(slot, held)
        for index in waitingForRoom
        where jobs.indices.contains(index) && jobs[index].schedulable && !jobs[index].inFlight {
            enqueue(index)
        }
        waitingForRoom = []
    }

    /// `random` in 0..<1 draws the jitter.
    mutating func finished(job index: Int, outcome: Outcome, now: Double, random: Double) {
        guard jobs.indices.contains(index), jobs[index].inFlight else { return }
        let slot = id(of: index).slot
        jobs[index].inFlight = false
        inFlightCount -= 1
        inFlightBySlot[slot] -= 1
        let interval = jobs[index].spec.interval
        switch outcome {
        case .success:
            jobs[index].failures = 0
            rateLimitStrikes = 0
            if jobs[index].spec.kind == .resolve {
                // A resolver that found its place sends no more; once every place is found, its
                // source's share goes to the sources that poll.
                if jobs[index].takesShare {
                    sharing[slot] -= 1
                    if sharing[slot] == 0 { share() }
                }
                jobs[index].done = true
                return
            }
            jobs[index].nextDue = nextPhase(of: jobs[index], after: now)
        case .steadyFailure:
            jobs[index].failures = 0
            jobs[index].nextDue =
                jobs[index].spec.kind == .resolve ? now + interval : nextPhase(of: jobs[index], after: now)
        case .transientFailure:
            jobs[index].failures += 1
            let failures = jobs[index].failures
            jobs[index].nextDue =
                now
                + (jobs[index].spec.kind == .resolve
                    ? Self.backoff(
                        failures: failures, first: Self.firstResolverRetry, cap: max(interval, Self.firstResolverRetry),
                        random: random)
                    : Self.backoff(
                        failures: failures, first: interval, cap: max(interval, Self.maxRateLimitPause),
                        random: random))
        case .rateLimited(let retryAfter):
            rateLimitStrikes += 1
            pausedUntil =
                now
                + Self.rateLimitPause(retryAfter: retryAfter, backoff: Self.rateLimitBackoff(strikes: rateLimitStrikes))
            jobs[index].nextDue = now
        }
        if jobs[index].schedulable { enqueue(index) }
    }

    /// A request for a job a reload removed has answered.
    mutating func orphanFinished() { orphans = max(orphans - 1, 0) }

    /// Switches the jobs of source `slot` at every location on or off, at runtime: a source that
    /// stands in for others works, or has stopped working. A job switched on is due at once.
    mutating func setSlot(_ slot: Int, on: Bool, now: Double) {
        var changed = false
        for index in indices(ofSlot: slot) where jobs[index].off == on {
            jobs[index].off = !on
            if on { jobs[index].nextDue = now }
            changed = true
        }
        if changed { rebuildQueue() }
    }

    /// Gives one job an interval of its own (a source that cannot be used, retried rarely) and
    /// switches it on, due at `due`.
    mutating func setRetry(job index: Int, interval: Double, due: Double) {
        guard jobs.indices.contains(index) else { return }
        jobs[index].spec.interval = interval
        jobs[index].off = false
        jobs[index].nextDue = due
        rebuildQueue()
    }

    private mutating func rebuildQueue() {
        waitingForRoom = []
        var entries = [[(Double, Int)]](repeating: [], count: sourceCount)
        sharing = [Int](repeating: 0, count: sourceCount)
        for index in jobs.indices {
            let slot = id(of: index).slot
            if jobs[index].takesShare { sharing[slot] += 1 }
            if jobs[index].schedulable && !jobs[index].inFlight { entries[slot].append((jobs[index].nextDue, index)) }
        }
        due = entries.map(DueQueue.init)
        share()
    }

    /// `maxInFlight` split evenly among the slots whose jobs take a share (the remainder to the first),
    /// at least one each: a source that hangs cannot hold the others' requests back.
    private mutating func share() {
        let active = (0..<sourceCount).filter { sharing[$0] > 0 }
        shares = [Int](repeating: 0, count: sourceCount)
        guard !active.isEmpty else { return }
        let (each, remainder) = maxInFlight.quotientAndRemainder(dividingBy: active.count)
        for (rank, slot) in active.enumerated() { shares[slot] = max(each + (rank < remainder ? 1 : 0), 1) }
    }

    private mutating func enqueue(_ index: Int) { due[id(of: index).slot].insert((jobs[index].nextDue, index)) }

    /// The job due first (ties: job order) among the sources below their share of the requests in flight.
    private func firstDue() -> (due: Double, index: Int)? {
        var first: (due: Double, index: Int)?
        for slot in due.indices where inFlightBySlot[slot] < shares[slot] {
            guard let head = due[slot].first else { continue }
            if let best = first, best.due < head.due || (best.due == head.due && best.index < head.index) { continue }
            first = head
        }
        return first
    }

    /// `location`'s place is resolved: its polling jobs are due at once.
    mutating func unblock(location: Int, now: Double) {
        for index in indices(atLocation: location) where jobs[index].spec.waiting {
            jobs[index].spec.waiting = false
            jobs[index].nextDue = now
            if jobs[index].schedulable && !jobs[index].inFlight { enqueue(index) }
        }
    }

    /// A job as an earlier run left it (`restore`).
    typealias RestoredJob = (index: Int, nextDue: Double, failures: Int, lastStart: Double?, done: Bool)

    /// What an earlier run left (its times mapped onto this clock): each job's next due time, backoff
    /// step and last start, a resolver's success, the 429 pause and the budget's recent starts.
    mutating func restore(
        jobs saved: [RestoredJob], pausedUntil: Double, strikes: Int,
        recentStarts: [Double]
    ) {
        for entry in saved where jobs.indices.contains(entry.index) && !jobs[entry.index].inFlight {
            jobs[entry.index].nextDue = entry.nextDue
            jobs[entry.index].failures = entry.failures
            jobs[entry.index].lastStart = entry.lastStart
            if jobs[entry.index].spec.kind == .resolve { jobs[entry.index].done = entry.done }
        }
        self.pausedUntil = max(self.pausedUntil, pausedUntil)
        rateLimitStrikes = max(rateLimitStrikes, strikes)
        budget = RequestBudget(
            limitPerMinute: budget.limitPerMinute, recentStarts: (recentStarts + budget.recentStarts).sorted())
        rebuildQueue()
    }

    /// How long requests stay paused after a 429, or nil.
    func pause(now: Double) -> Double? { pausedUntil > now ? pausedUntil - now : nil }

    /// The job's next phase at least half an interval away, so the first round's quick fetch is not
    /// followed by another one moments later.
    private func nextPhase(of job: Job, after now: Double) -> Double {
        let interval = job.spec.interval
        let cycles = ((now - origin - job.phase) / interval).rounded(.down) + 1
        var due = origin + job.phase + cycles * interval
        if due - now < interval / 2 { due += interval }
        return due
    }
}
