import Exposition

/// One source of metric families. Adding a data source (air pollution, a
/// forecast) is adding a collector.
protocol Collector: Sendable {
    func collect(_ snapshot: WeatherStore.Snapshot, now: Double, into families: inout [MetricFamily])

    /// The per-location series lines of `shard`'s locations (in label order), exactly as `collect`
    /// would render them, appended to their families' buffers. The default goes through `collect`;
    /// a collector with many series per location writes the bytes directly instead.
    func appendSeries(of shard: ShardSeries, now: Double, to lines: inout FamilyLines)
}

extension Collector {
    func appendSeries(of shard: ShardSeries, now: Double, to lines: inout FamilyLines) {
        var part = WeatherStore.Snapshot()
        part.locations = shard.locations
        var families: [MetricFamily] = []
        collect(part, now: now, into: &families)
        for family in families where !family.samples.isEmpty {
            guard let index = lines.index[family.name] else { continue }
            Exposition.appendSeries(of: family, to: &lines.buffers[index])
        }
    }
}

/// The locations of one shard, in label order, with their `{location="…"` label rendered once.
struct ShardSeries {
    let locations: [WeatherStore.LocationState]
    /// `openings[i]` is `{location="…"` (escaped) for `locations[i]`.
    let openings: [[UInt8]]

    init(_ locations: [WeatherStore.LocationState]) {
        self.locations = locations
        openings = locations.map { state in
            var opening: [UInt8] = []
            Exposition.appendOpeningLabel("location", state.location.name, to: &opening)
            return opening
        }
    }
}

/// One byte buffer per per-location family, in the exposition's family order.
struct FamilyLines {
    /// Family name to buffer index; only families whose series carry a location.
    let index: [String: Int]
    var buffers: [[UInt8]]

    init(index: [String: Int], count: Int) {
        self.index = index
        buffers = Array(repeating: [], count: count)
    }

    /// Empties every buffer and keeps its capacity, for the next shard.
    mutating func clear() {
        for position in buffers.indices { buffers[position].removeAll(keepingCapacity: true) }
    }
}
