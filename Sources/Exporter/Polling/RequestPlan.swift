import Exposition

/// How many requests a minute and a day the configuration needs, source by source, and the
/// intervals that fit the key's budgets. When the sources together need more than the per-minute
/// budget allows, every interval is stretched by the same factor, so each source keeps its share;
/// then a source with a daily limit of its own (One Call) is stretched alone to fit it; then, when
/// all of them need more than the key's daily budget, every interval is stretched again alike.
/// A UTC day is 86,400 s (OpenWeather's day starts at 00:00 UTC).
struct RequestPlan: Sendable, Equatable {
    /// What one source asks of the budgets, as configured.
    struct Demand: Sendable, Equatable {
        /// Its `source` label, as the plan's lines print it.
        var name: String
        var interval: Duration
        /// How many locations it polls (0 for a source another stands in for).
        var locations: Int
        /// The source whose answers fill this one's (One Call for the weather).
        var readFrom: String? = nil
        /// Its own limit of requests a UTC day, if any.
        var dailyLimit: Int? = nil
        /// Requests a poll sends, by part, for a source that asks in parts; empty for one.
        var parts: [Part] = []

        /// Requests a poll sends on average.
        var weight: Double { RequestPlan.weight(of: parts) }
    }

    struct Entry: Sendable, Equatable {
        /// Its `source` label.
        var name: String
        var locations: Int
        var configured: Duration
        /// `configured`, stretched when a budget is short.
        var interval: Duration
        /// At `interval`.
        var requestsPerMinute: Double
        /// The source whose answers fill this one's, so that it makes no requests of its own (One Call for
        /// the weather).
        var readFrom: String?
        /// The source's own limit of requests a UTC day, if any.
        var dailyLimit: Int? = nil
        /// The key has a daily limit: the text says what a day needs and gets.
        var keyDailyLimit = false
        /// Requests a poll sends, by part, for a source that asks in parts (One Call 4.0); empty for one.
        var parts: [Part] = []

        /// Requests a poll sends on average.
        var weight: Double { RequestPlan.weight(of: parts) }
        /// At `configured`.
        var neededPerDay: Double {
            locations == 0 ? 0 : Double(locations) * weight * RequestPlan.day / configured.seconds
        }
        /// At `interval`.
        var requestsPerDay: Double { requestsPerMinute * 1440 }

        /// `1/min (1 request per location every 10m)`; with a daily limit of its own
        /// `0.69/min (1 request per location every 14m24s; 1440/day needed, 1000/day allowed)`; with
        /// the key's, what the key's share leaves it: `...; 1440/day needed, 720/day planned)`;
        /// `read from onecall (no requests of its own)`.
        var text: String {
            if let readFrom { return "read from \(readFrom) (no requests of its own)" }
            var day = [String]()
            if dailyLimit != nil || keyDailyLimit { day.append("\(RequestPlan.count(neededPerDay))/day needed") }
            if let dailyLimit { day.append("\(dailyLimit)/day allowed") }
            if keyDailyLimit { day.append("\(RequestPlan.count(requestsPerDay))/day planned") }
            let days = day.isEmpty ? "" : "; " + day.joined(separator: ", ")
            guard !parts.isEmpty else {
                return
                    """
                    \(RequestPlan.rate(requestsPerMinute))/min (1 request per location every \
                    \(PrometheusDuration.format(interval))\(days))
                    """
            }
            let perPart = parts.map {
                "\($0.name) \(RequestPlan.count($0.perPoll * RequestPlan.day / interval.seconds))/day"
            }
            return
                """
                \(RequestPlan.rate(requestsPerMinute))/min (1 poll per location every \
                \(PrometheusDuration.format(interval)), per location \(perPart.joined(separator: ", "))\(days))
                """
        }
    }

    static let day = 86_400.0

    /// Requests a poll sends for one part of a source, on average (a part refreshed every third poll: 1/3).
    struct Part: Sendable, Equatable {
        var name: String
        var perPoll: Double
    }

    /// Requests a poll sends on average: one, or the sum of its parts'.
    static func weight(of parts: [Part]) -> Double { parts.isEmpty ? 1 : parts.reduce(0) { $0 + $1.perPoll } }

    var entries: [Entry]
    var budgetPerMinute: Int
    /// The key's limit of requests a UTC day, if any.
    var budgetPerDay: Int?
    /// The sources need more than the per-minute budget at their configured intervals.
    var stretched: Bool
    /// The sources stretched to fit a daily limit (their own or the key's), in entry order.
    var stretchedForDay: [String]

    /// Requests a minute the poller can start: it spaces them 61 s / budget apart.
    static func capacity(_ budget: Int) -> Double { 60 * Double(budget) / 61 }

    /// `sources`: what each polled source asks; `budgetPerDay`: the key's limit of requests a day.
    init(sources: [Demand], budgetPerMinute: Int, budgetPerDay: Int? = nil) {
        self.budgetPerMinute = budgetPerMinute
        self.budgetPerDay = budgetPerDay
        let need = sources.reduce(0.0) { $0 + Double($1.locations) * $1.weight * 60 / $1.interval.seconds }
        let factor = max(1, need / Self.capacity(budgetPerMinute))
        let stretched = factor > 1
        self.stretched = stretched
        func perDay(_ index: Int, _ seconds: Double) -> Double {
            Double(sources[index].locations) * sources[index].weight * Self.day / seconds
        }
        // Seconds, per source.
        var seconds = sources.map { $0.interval.seconds * factor }
        var forDay = [Bool](repeating: false, count: sources.count)
        for (index, source) in sources.enumerated() {
            guard let limit = source.dailyLimit, source.locations > 0 else { continue }
            let needed = perDay(index, seconds[index])
            if needed > Double(limit) {
                seconds[index] *= needed / Double(max(limit, 1))
                forDay[index] = true
            }
        }
        if let budgetPerDay {
            let needed = sources.indices.reduce(0.0) { $0 + perDay($1, seconds[$1]) }
            if needed > Double(budgetPerDay) {
                let factor = needed / Double(max(budgetPerDay, 1))
                for index in sources.indices where sources[index].locations > 0 {
                    seconds[index] *= factor
                    forDay[index] = true
                }
            }
        }
        stretchedForDay = sources.indices.filter { forDay[$0] }.map { sources[$0].name }
        entries = sources.enumerated().map { index, source in
            let interval =
                seconds[index] > source.interval.seconds
                ? Duration.milliseconds(Int64((seconds[index] * 1000).rounded(.up))) : source.interval
            return Entry(
                name: source.name, locations: source.locations, configured: source.interval, interval: interval,
                requestsPerMinute: Double(source.locations) * source.weight * 60 / interval.seconds,
                readFrom: source.readFrom,
                dailyLimit: source.dailyLimit, keyDailyLimit: budgetPerDay != nil, parts: source.parts)
        }
    }

    var requestsPerMinute: Double { entries.reduce(0) { $0 + $1.requestsPerMinute } }

    /// What the sources would need at their configured intervals.
    var configuredRequestsPerMinute: Double {
        entries.reduce(0) { $0 + Double($1.locations) * $1.weight * 60 / $1.configured.seconds }
    }

    /// The planned interval of the source named `name`; nil for one the plan does not poll.
    func interval(of name: String) -> Duration? { entries.first { $0.name == name }?.interval }

    /// `weather=6/min (1 request per location every 10m), forecast=1/min (...)`, for log lines.
    var summary: String {
        entries.map { "\($0.name)=\($0.text)" }.joined(separator: ", ")
    }

    /// The startup line's fields: each source's rate and interval, the total and the budget.
    var logFields: [(String, String)] {
        entries.map { ($0.name, $0.text) }
            + [
                ("total_per_minute", Self.rate(requestsPerMinute)), ("budget_per_minute", String(budgetPerMinute)),
                ("stretched", String(stretched)), ("total_per_day", Self.count(requestsPerDay)),
            ]
            + (budgetPerDay.map { [("budget_per_day", String($0))] } ?? [])
            + [("stretched_for_day", stretchedForDay.isEmpty ? "none" : stretchedForDay.joined(separator: ","))]
    }

    var requestsPerDay: Double { entries.reduce(0) { $0 + $1.requestsPerDay } }

    /// A count a day, rounded up: a budget is never shown as met when it is not.
    static func count(_ perDay: Double) -> String {
        // Less a trace, so an interval fitted to a limit exactly is not shown one over it.
        perDay.isFinite && perDay < 1e15 ? String(Int64((perDay * (1 - 1e-9)).rounded(.up))) : "?"
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
