import OpenWeather

extension Poller {
    /// What the poller runs: the layout (locations, sources, their intervals and staleness), the
    /// budget, and the client (or a fake in tests).
    struct Plan: Sendable {
        var layout: Layout
        var requestsPerMinute: Int
        var language: String
        var transport: any OpenWeatherTransport

        var locations: [Location] { layout.locations }
        /// In slot order.
        var sources: [any Source] { layout.sources }
        /// Per slot.
        var intervals: [Duration] { layout.intervals }
        /// Per slot, seconds.
        var maxStaleness: [Double] { layout.maxStaleness }

        init(
            locations: [Location], sources: [any Source], intervals: [Duration], maxStaleness: [Double], requestsPerMinute: Int,
            language: String,
            transport: any OpenWeatherTransport, thresholds: @escaping @Sendable (Location) -> TemperatureThresholds
        ) {
            self.layout = Layout(locations: locations, sources: sources, intervals: intervals, maxStaleness: maxStaleness, thresholds: thresholds)
            self.requestsPerMinute = requestsPerMinute
            self.language = language
            self.transport = transport
        }
    }
}
