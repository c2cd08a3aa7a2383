/// One source as the request plan polls it, in its slot: made once per poller setup (`plan`), and what the schedule,
/// the poller and the store read of it, so no one looks a fact up by name or works it out again.
struct PlannedSource: Sendable {
    let slot: Int
    let source: any Source
    /// How often it is polled: the configured interval, stretched to fit the budgets.
    let interval: Duration
    /// The interval as configured, before the plan stretched it: a source that asks in parts paces
    /// them in polls of this, so they stretch with the interval.
    let configured: Duration
    /// After this long without success its reading is no longer shown (seconds).
    let maxStaleness: Double
    /// Its own limit of requests a UTC day (this replica's share); nil for none.
    let dailyLimit: Int?
    /// The sources it stands in for that are configured (One Call for the weather and the forecast),
    /// in slot order.
    let standsIn: [StandIn]

    struct StandIn: Sendable {
        /// The slot of the source stood in for.
        let slot: Int
        /// Which of `readings(standingIn:)` is its reading.
        let derived: Int
    }

    /// Its `source` label, its name in flags, logs and the state file.
    var name: String { source.name }

    /// The records of `sources`, in slot order: `intervals` as planned, `configured` as given, the rest per slot
    /// too. A source names those it stands in for: their slots are found here, once.
    static func plan(
        sources: [any Source], intervals: [Duration], configured: [Duration], maxStaleness: [Double],
        dailyLimits: [Int?]
    ) -> [PlannedSource] {
        sources.indices.map { slot in
            PlannedSource(
                slot: slot, source: sources[slot], interval: intervals[slot],
                configured: configured[slot], maxStaleness: maxStaleness[slot],
                dailyLimit: dailyLimits[slot],
                standsIn: sources[slot].standsIn.enumerated().compactMap { derived, name in
                    sources.firstIndex { $0.name == name }.map { StandIn(slot: $0, derived: derived) }
                }.sorted { $0.slot < $1.slot })
        }
    }
}
