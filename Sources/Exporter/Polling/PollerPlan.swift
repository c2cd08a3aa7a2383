import OpenWeather

extension Poller {
    /// What the poller runs: the locations, the active sources with their intervals and staleness,
    /// the budget, and the client (or a fake in tests).
    public struct Plan: Sendable {
        public var locations: [Location]
        /// In slot order.
        var sources: [any Source]
        /// Per slot.
        var intervals: [Duration]
        /// Per slot, seconds.
        var maxStaleness: [Double]
        public var requestsPerMinute: Int
        public var language: String
        public var transport: any OpenWeatherTransport
        var thresholds: @Sendable (Location) -> TemperatureThresholds

        init(
            locations: [Location], sources: [any Source], intervals: [Duration], maxStaleness: [Double], requestsPerMinute: Int,
            language: String,
            transport: any OpenWeatherTransport, thresholds: @escaping @Sendable (Location) -> TemperatureThresholds
        ) {
            self.locations = locations
            self.sources = sources
            self.intervals = intervals
            self.maxStaleness = maxStaleness
            self.requestsPerMinute = requestsPerMinute
            self.language = language
            self.transport = transport
            self.thresholds = thresholds
        }
    }
}
