/// What an earlier run knew, as the state file holds it: plain values on the wall clock (monotonic
/// time does not survive a restart), each reading as the body OpenWeather sent, re-decoded on load by
/// its source's own `decode`, so any source is saved alike and no reading type needs a second format.
struct SavedState: Equatable, Sendable {
    struct SourceEntry: Equatable, Sendable {
        /// The source's name (its `source` label).
        var name: String
        /// Nil until the first attempt ended.
        var up: Bool?
        var lastSuccess: Double?
        var lastPollDuration: Double?
        var lastError: String?
        /// When the last request was sent.
        var lastAttempt: Double?
        /// When the schedule would have sent the next one.
        var nextDue: Double?
        /// Transient failures in a row (the backoff step).
        var failures = 0
        /// The body of the last good answer; empty for none.
        var body: [UInt8] = []
    }

    struct LocationEntry: Equatable, Sendable {
        /// `Location.identity`: a location whose name or place changed keeps nothing.
        var identity: String
        var sources: [SourceEntry]
    }

    /// Requests sent on one UTC day, so a restart the same day goes on counting (version 2 on).
    struct Daily: Equatable, Sendable {
        /// Days since the epoch.
        var day: Int
        /// All sources together.
        var total: Int
        /// By source name, in name order.
        var counts: [(name: String, count: Int)]
        /// Sources OpenWeather said had spent the day's quota.
        var spent: [String] = []

        static func == (lhs: Daily, rhs: Daily) -> Bool {
            lhs.day == rhs.day && lhs.total == rhs.total && lhs.spent == rhs.spent
                && lhs.counts.map(\.name) == rhs.counts.map(\.name)
                && lhs.counts.map(\.count) == rhs.counts.map(\.count)
        }
    }

    /// Wall time of the write.
    var savedAt: Double
    /// Wall time until which a 429 pauses every request; nil for none.
    var pausedUntil: Double?
    /// The 429 pause's doubling step.
    var rateLimitStrikes = 0
    /// Wall times of the latest request starts, so a restart cannot overspend the minute's budget.
    var recentStarts: [Double] = []
    var locations: [LocationEntry] = []
    /// Nil in a file of version 1, written before daily limits were counted.
    var daily: Daily?
}

extension SavedState {
    /// The same state with sources saved under a former name (`["air-pollution": "air_pollution"]`) under
    /// their name now. The decoder keeps names as written, so it needs nothing of the sources.
    func renamingSources(_ formerNames: [String: String]) -> SavedState {
        var renamed = self
        for index in renamed.locations.indices {
            for slot in renamed.locations[index].sources.indices {
                let name = renamed.locations[index].sources[slot].name
                if let now = formerNames[name] { renamed.locations[index].sources[slot].name = now }
            }
        }
        if var daily = renamed.daily {
            daily.counts = daily.counts.map { (formerNames[$0.name] ?? $0.name, $0.count) }
            daily.spent = daily.spent.map { formerNames[$0] ?? $0 }
            renamed.daily = daily
        }
        return renamed
    }
}
