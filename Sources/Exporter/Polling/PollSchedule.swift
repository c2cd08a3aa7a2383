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
    /// Every slot not in flight, by when it is due (ties: plan order), so choosing the next costs
    /// O(log n) instead of a scan of every location.
    private var due = DueQueue()
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
        due = DueQueue(slots.indices.filter { !slots[$0].inFlight }.map { (slots[$0].nextDue, $0) })
    }

    private(set) var inFlightCount = 0

    mutating func next(now: Double) -> Decision {
        guard inFlightCount < maxInFlight, let (nextDue, index) = due.first else { return .idle }
        let start = max(nextDue, budget.nextAllowed(), pausedUntil)
        guard start <= now else { return .wait(until: start) }
        due.removeFirst()
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
        due.insert((slots[index].nextDue, index))
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

/// A binary min-heap of (due time, slot position), ordered by time, then position.
struct DueQueue {
    private var heap: [(due: Double, index: Int)] = []

    init(_ entries: [(Double, Int)] = []) {
        heap = entries.map { (due: $0.0, index: $0.1) }
        for position in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(position) }
    }

    var count: Int { heap.count }
    var first: (due: Double, index: Int)? { heap.first }

    mutating func insert(_ entry: (Double, Int)) {
        heap.append((due: entry.0, index: entry.1))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func removeFirst() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            let left = 2 * parent + 1
            if left < heap.count && Self.precedes(heap[left], heap[smallest]) { smallest = left }
            if left + 1 < heap.count && Self.precedes(heap[left + 1], heap[smallest]) { smallest = left + 1 }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    private static func precedes(_ left: (due: Double, index: Int), _ right: (due: Double, index: Int)) -> Bool {
        left.due != right.due ? left.due < right.due : left.index < right.index
    }
}
