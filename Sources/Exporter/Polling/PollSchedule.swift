/// When to fetch which location: a pure state machine, driven by the poller's
/// clock, so tests can run hours of schedule in microseconds.
///
/// Location `i` of `n` owns the phase `i × interval / n`, so requests are spread
/// evenly over the interval. The first round starts at once, paced only by the
/// request budget. Transient failures back the location off exponentially with
/// jitter; a 429 pauses every request, since OpenWeather blocks the key, not a place.
struct PollSchedule {
    enum Outcome: Equatable {
        /// Fetched; next time at the location's phase.
        case success
        /// A failure that retrying sooner cannot fix (401, 400, 404): keep the normal interval.
        case steadyFailure
        /// Upstream trouble (5xx, timeout, refused, bad body): back off.
        case transientFailure
        /// 429: pause everything.
        case rateLimited(retryAfter: Double?)
    }

    enum Decision: Equatable {
        case fire(name: String)
        case wait(until: Double)
        /// Nothing can start until a request in flight finishes.
        case idle
    }

    struct Slot {
        var name: String
        var phase: Double
        var nextDue: Double
        var inFlight = false
        var failures = 0
    }

    private(set) var slots: [Slot]
    /// Position of each slot by name, for O(1) completion with thousands of locations.
    private var index: [String: Int] = [:]
    private(set) var interval: Double
    private(set) var budget: RequestBudget
    private(set) var pausedUntil = -Double.infinity
    private(set) var rateLimitStrikes = 0
    private let origin: Double
    let maxInFlight: Int

    static let firstRateLimitPause = 60.0
    static let maxRateLimitPause = 3600.0

    init(names: [String], interval: Double, requestsPerMinute: Int, now: Double, maxInFlight: Int = 16) {
        self.origin = now
        self.maxInFlight = maxInFlight
        self.interval = interval
        self.budget = RequestBudget(limitPerMinute: requestsPerMinute)
        self.slots = []
        reconfigure(names: names, interval: interval, requestsPerMinute: requestsPerMinute, now: now)
    }

    /// New locations are due at once; kept ones keep their state; the budget remembers recent starts.
    mutating func reconfigure(names: [String], interval: Double, requestsPerMinute: Int, now: Double) {
        let old = Dictionary(slots.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.interval = interval
        budget = RequestBudget(limitPerMinute: requestsPerMinute, recentStarts: budget.recentStarts)
        slots = names.enumerated().map { index, name in
            var slot = old[name] ?? Slot(name: name, phase: 0, nextDue: now)
            slot.phase = Double(index) * interval / Double(max(names.count, 1))
            return slot
        }
        inFlightCount = slots.count { $0.inFlight }
        index = Dictionary(slots.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private(set) var inFlightCount = 0

    mutating func next(now: Double) -> Decision {
        guard inFlightCount < maxInFlight else { return .idle }
        var best: Int?
        for index in slots.indices where !slots[index].inFlight {
            if best == nil || slots[index].nextDue < slots[best!].nextDue { best = index }
        }
        guard let index = best else { return .idle }
        let start = max(slots[index].nextDue, budget.nextAllowed(), pausedUntil)
        guard start <= now else { return .wait(until: start) }
        slots[index].inFlight = true
        inFlightCount += 1
        budget.record(start: now)
        return .fire(name: slots[index].name)
    }

    /// `random` in 0..<1 draws the jitter; results for removed locations are ignored.
    mutating func finished(name: String, outcome: Outcome, now: Double, random: Double) {
        guard let index = index[name], slots[index].inFlight else { return }
        slots[index].inFlight = false
        inFlightCount -= 1
        switch outcome {
        case .success:
            slots[index].failures = 0
            rateLimitStrikes = 0
            slots[index].nextDue = nextPhase(of: slots[index], after: now)
        case .steadyFailure:
            slots[index].failures = 0
            slots[index].nextDue = nextPhase(of: slots[index], after: now)
        case .transientFailure:
            slots[index].failures += 1
            let growth = pow2(slots[index].failures - 1)
            let delay = min(interval * growth, max(interval, Self.maxRateLimitPause))
            slots[index].nextDue = now + delay * (0.8 + 0.4 * random)
        case .rateLimited(let retryAfter):
            rateLimitStrikes += 1
            let backoff = min(Self.firstRateLimitPause * pow2(rateLimitStrikes - 1), Self.maxRateLimitPause)
            pausedUntil = now + (retryAfter ?? backoff)
            slots[index].nextDue = now
        }
    }

    /// Where `name` is in the names last given, so the caller can look its location up without a
    /// dictionary of its own (one fewer copy of every location).
    func position(of name: String) -> Int? { index[name] }

    /// How long requests stay paused after a 429, or nil.
    func pause(now: Double) -> Double? { pausedUntil > now ? pausedUntil - now : nil }

    /// The location's next phase at least half an interval away, so the first
    /// round's quick fetch is not followed by another one moments later.
    private func nextPhase(of slot: Slot, after now: Double) -> Double {
        let cycles = ((now - origin - slot.phase) / interval).rounded(.down) + 1
        var due = origin + slot.phase + cycles * interval
        if due - now < interval / 2 { due += interval }
        return due
    }

    private func pow2(_ exponent: Int) -> Double {
        exponent >= 30 ? Double(1 << 30) : Double(1 << max(exponent, 0))
    }
}
