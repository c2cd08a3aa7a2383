import OpenWeather

extension Poller {
    /// What the poller runs: the layout (locations, sources, their intervals and staleness), the
    /// budget, and the client (or a fake in tests).
    struct Plan: Sendable {
        var layout: Layout
        var requestsPerMinute: Int
        /// Each source's own limit of requests a UTC day, by name; absent for none.
        var dailyLimits: [String: Int]
        /// The key's limit of requests a UTC day, all sources together.
        var requestsPerDay: Int?
        var language: String
        var transport: any OpenWeatherTransport

        var locations: [Location] { layout.locations }
        /// In slot order.
        var sources: [any Source] { layout.sources }
        /// Per slot.
        var intervals: [Duration] { layout.intervals }
        /// Per slot, seconds.
        var maxStaleness: [Double] { layout.maxStaleness }
        /// Per slot: how far the plan stretched the configured interval to fit the budgets (1 for not).
        var stretches: [Double]

        init(
            locations: [Location], sources: [any Source], intervals: [Duration], maxStaleness: [Double], stretches: [Double], requestsPerMinute: Int,
            dailyLimits: [String: Int], requestsPerDay: Int?, language: String,
            transport: any OpenWeatherTransport, thresholds: @escaping @Sendable (Location) -> AlertThresholds
        ) {
            self.layout = Layout(locations: locations, sources: sources, intervals: intervals, maxStaleness: maxStaleness, thresholds: thresholds)
            self.stretches = stretches
            self.requestsPerMinute = requestsPerMinute
            self.dailyLimits = dailyLimits
            self.requestsPerDay = requestsPerDay
            self.language = language
            self.transport = transport
        }
    }
}
