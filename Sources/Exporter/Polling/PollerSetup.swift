import OpenWeather

extension Poller {
    /// What the poller runs: the layout (locations, sources, their intervals and staleness), the
    /// budget, and the client (or a fake in tests).
    struct Setup: Sendable {
        var layout: Layout
        var requestsPerMinute: Int
        /// The key's limit of requests a UTC day, all sources together.
        var requestsPerDay: Int?
        var language: String
        var transport: any OpenWeatherTransport

        /// Per slot: `intervals` as planned, `configured` as given, each source's own daily limit.
        init(
            locations: [Location], sources: [any Source], intervals: [Duration], configured: [Duration],
            maxStaleness: [Double],
            requestsPerMinute: Int, dailyLimits: [Int?], requestsPerDay: Int?, language: String,
            transport: any OpenWeatherTransport, thresholds: @escaping @Sendable (Location) -> AlertThresholds
        ) {
            self.layout = Layout(
                locations: locations,
                planned: PlannedSource.plan(
                    sources: sources, intervals: intervals, configured: configured, maxStaleness: maxStaleness,
                    dailyLimits: dailyLimits),
                thresholds: thresholds)
            self.requestsPerMinute = requestsPerMinute
            self.requestsPerDay = requestsPerDay
            self.language = language
            self.transport = transport
        }
    }
}
