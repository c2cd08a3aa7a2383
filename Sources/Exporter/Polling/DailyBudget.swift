/// Requests sent since 00:00 UTC (OpenWeather's day), per source and for the key, and the daily
/// limits they are held to. A source that reached its limit, or that OpenWeather said has spent the
/// day's quota (`spend`), sends nothing more until 00:00 UTC; when the key's limit is reached, no
/// source does. Counts are kept by source name, so a reload that changes the slots keeps them.
struct DailyBudget: Equatable {
    static let day = 86_400.0

    /// The UTC day the counts are of: days since the epoch.
    private(set) var day: Int
    private(set) var counts: [String: Int] = [:]
    private(set) var total = 0
    /// Sources OpenWeather refused for the rest of `day` (a 429 that says the day's quota is spent).
    private(set) var spent: Set<String> = []
    /// Per source name; a source absent has no limit of its own.
    private(set) var limits: [String: Int] = [:]
    /// The key's limit, all sources together.
    private(set) var keyLimit: Int?
    /// Rises with every change, so the poller tells the store only when there is something new.
    private(set) var revision = 0

    /// No limits until `configure`.
    init(wall: Double) { day = Self.day(of: wall) }

    /// A plan's limits (a reload may change them); the counts stay.
    mutating func configure(limits: [String: Int], keyLimit: Int?) {
        guard limits != self.limits || keyLimit != self.keyLimit else { return }
        self.limits = limits
        self.keyLimit = keyLimit
        revision += 1
    }

    static func day(of wall: Double) -> Int { Int((wall / Self.day).rounded(.down)) }

    /// When the day of `wall` ends: the next 00:00 UTC.
    static func nextMidnight(after wall: Double) -> Double { Double(day(of: wall) + 1) * Self.day }

    /// Starts a new day's counts once `wall` is past 00:00 UTC; a clock set back does not bring an
    /// earlier day's counts back nor start another.
    mutating func advance(to wall: Double) {
        let today = Self.day(of: wall)
        guard today > day else { return }
        day = today
        counts = [:]
        total = 0
        spent = []
        revision += 1
    }

    func count(of source: String) -> Int { counts[source] ?? 0 }

    var keyExhausted: Bool { keyLimit.map { total >= $0 } ?? false }

    /// `source` may send `requests` more today, under its own limit and the key's (it may send none
    /// once OpenWeather said its day is spent).
    func allows(_ source: String, _ requests: Int) -> Bool {
        !spent.contains(source) && (limits[source].map { count(of: source) + requests <= $0 } ?? true)
            && (keyLimit.map { total + requests <= $0 } ?? true)
    }

    mutating func record(_ source: String) {
        counts[source, default: 0] += 1
        total += 1
        revision += 1
    }

    /// OpenWeather says `source`'s quota for the day is used up.
    mutating func spend(_ source: String) {
        if spent.insert(source).inserted { revision += 1 }
    }

    /// What an earlier run counted (from the state file): kept only when it is of this same day.
    mutating func restore(day saved: Int, counts savedCounts: [String: Int], total savedTotal: Int, spent savedSpent: Set<String>) {
        guard saved == day else { return }
        for (source, count) in savedCounts { counts[source] = max(counts[source] ?? 0, count) }
        total = max(total, savedTotal)
        spent.formUnion(savedSpent)
        revision += 1
    }
}
