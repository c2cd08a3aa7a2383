import Exposition

/// How many requests a minute the configuration needs, source by source, and the intervals that
/// fit the key's budget: when the sources together need more than the budget allows, every interval
/// is stretched by the same factor, so each source keeps its share.
struct RequestPlan: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var source: String
        var locations: Int
        var configured: Duration
        /// `configured`, stretched when the budget is short.
        var interval: Duration
        /// At `interval`.
        var requestsPerMinute: Double
        /// The source whose answers fill this one's, so that it makes no requests of its own (One Call for the weather).
        var readFrom: String?

        /// `1/min (1 request per location every 10m)`; `read from onecall (no requests of its own)`.
        var text: String {
            if let readFrom { return "read from \(readFrom) (no requests of its own)" }
            return "\(RequestPlan.rate(requestsPerMinute))/min (1 request per location every \(PrometheusDuration.format(interval)))"
        }
    }

    var entries: [Entry]
    var budgetPerMinute: Int
    /// The sources need more than the budget at their configured intervals.
    var stretched: Bool

    /// Requests a minute the poller can start: it spaces them 61 s / budget apart.
    static func capacity(_ budget: Int) -> Double { 60 * Double(budget) / 61 }

    /// `sources`: each polled source with its configured interval and how many locations it polls;
    /// `readFrom`: the sources another one stands in for, by name, with that one's name.
    init(sources: [(name: String, interval: Duration, locations: Int)], readFrom: [String: String] = [:], budgetPerMinute: Int) {
        self.budgetPerMinute = budgetPerMinute
        let need = sources.reduce(0.0) { $0 + Double($1.locations) * 60 / $1.interval.seconds }
        let factor = max(1, need / Self.capacity(budgetPerMinute))
        let stretched = factor > 1
        self.stretched = stretched
        entries = sources.map { source in
            let interval = stretched
                ? Duration.milliseconds(Int64((source.interval.seconds * factor * 1000).rounded(.up))) : source.interval
            return Entry(
                source: source.name, locations: source.locations, configured: source.interval, interval: interval,
                requestsPerMinute: Double(source.locations) * 60 / interval.seconds, readFrom: readFrom[source.name])
        }
    }

    var requestsPerMinute: Double { entries.reduce(0) { $0 + $1.requestsPerMinute } }

    /// What the sources would need at their configured intervals.
    var configuredRequestsPerMinute: Double {
        entries.reduce(0) { $0 + Double($1.locations) * 60 / $1.configured.seconds }
    }

    func interval(of source: String) -> Duration? { entries.first { $0.source == source }?.interval }

    /// `weather=6/min (1 request per location every 10m), forecast=1/min (...)`, for log lines.
    var summary: String {
        entries.map { "\($0.source)=\($0.text)" }.joined(separator: ", ")
    }

    /// The startup line's fields: each source's rate and interval, the total and the budget.
    var logFields: [(String, String)] {
        entries.map { ($0.source, $0.text) }
            + [("total_per_minute", Self.rate(requestsPerMinute)), ("budget_per_minute", String(budgetPerMinute)),
               ("stretched", String(stretched))]
    }

    /// Two decimals, or two significant digits below 0.01, so a daily poll is not shown as `0/min`.
    static func rate(_ perMinute: Double) -> String {
        guard perMinute > 0, perMinute < 0.01, perMinute.isFinite else {
            return Exposition.formatValue((perMinute * 100).rounded() / 100)
        }
        var scale = 100.0
        while perMinute * scale < 10 { scale *= 10 }
        return Exposition.formatValue((perMinute * scale).rounded() / scale)
    }
}
