/// What the store, the schedule and the renderer are laid out by: the locations, and per slot a
/// source with its interval and staleness. Made once per plan; the poller's plan and the store's
/// snapshot hold this same value, so none of it is copied from one to the other.
struct Layout: Sendable {
    let locations: [Location]
    /// In slot order.
    let sources: [any Source]
    /// The `source` label of each slot.
    let names: [String]
    /// Per slot: how often the source is polled (a resolver's retry after nothing was found).
    let intervals: [Duration]
    /// Per slot: after this long without success a source's reading is no longer shown (seconds).
    let maxStaleness: [Double]
    /// The positions of `locations` in the exposition's order (`Location.labelOrder`): the renderer
    /// shards by it and the poller polls in it.
    let labelOrder: [Int]
    let thresholds: @Sendable (Location) -> AlertThresholds

    init(
        locations: [Location], sources: [any Source], intervals: [Duration], maxStaleness: [Double],
        thresholds: @escaping @Sendable (Location) -> AlertThresholds
    ) {
        self.locations = locations
        self.sources = sources
        self.names = sources.map(\.name)
        self.intervals = intervals
        self.maxStaleness = maxStaleness
        self.labelOrder = Location.labelOrder(locations)
        self.thresholds = thresholds
    }
}
