/// What the store, the schedule and the renderer are laid out by: the locations, and per slot a planned source (its
/// interval as planned and as configured, staleness, daily limit, stand-ins). Made once per setup; the poller's setup
/// and the store's snapshot hold this same value, so none of it is copied from one to the other.
struct Layout: Sendable {
    let locations: [Location]
    /// In slot order.
    let planned: [PlannedSource]
    /// In slot order.
    let sources: [any Source]
    /// The `source` label of each slot.
    let sourceNames: [String]
    /// Per slot: how often the source is polled (a resolver's retry after nothing was found).
    let intervals: [Duration]
    /// Per slot: after this long without success a source's reading is no longer shown (seconds).
    let maxStaleness: [Double]
    /// The positions of `locations` in the exposition's order (`Location.labelOrder`): the renderer
    /// shards by it and the poller polls in it.
    let labelOrder: [Int]
    let thresholds: @Sendable (Location) -> AlertThresholds

    init(locations: [Location], planned: [PlannedSource], thresholds: @escaping @Sendable (Location) -> AlertThresholds)
    {
        self.locations = locations
        self.planned = planned
        self.sources = planned.map(\.source)
        self.sourceNames = planned.map(\.name)
        self.intervals = planned.map(\.interval)
        self.maxStaleness = planned.map(\.maxStaleness)
        self.labelOrder = Location.labelOrder(locations)
        self.thresholds = thresholds
    }

    /// How a reload from `old` moves the slots.
    func slots(from old: Layout) -> SlotOrder { SlotOrder(sourceNames, from: old.sourceNames) }
}
