import Exposition

/// The `openweather_*` part of the exposition, kept as byte chunks so that a poll
/// re-renders a few dozen locations instead of all of them.
///
/// Locations are taken in label order (their names' bytes) and cut into shards of
/// `shardSize`. Each shard keeps, per family, its locations' series lines. The body
/// is, family by family: the HELP and TYPE lines, then that family's chunk of every
/// shard in order, which is the order `Exposition.render` would sort them into,
/// because every per-location series carries `location` as its first label. Only
/// one copy of the text is held, and a scrape writes the chunks with gathered writes.
///
/// A shard is re-rendered when one of its locations changed: a new poll result
/// (duration and success time change with every poll, the reading only with a new
/// success time), other thresholds, or its weather turning stale. So a location's
/// series may depend on its own state and, through staleness, on `now` only;
/// families without a location (request counts, build info) are rendered whole
/// every time.
struct WeatherRendering {
    /// Small enough that a poll costs little, large enough that chunks stay in kilobytes.
    static let shardSize = 32
    /// Below this the chunks are joined into one, which is what small expositions write fastest.
    static let joinBelow = 256 << 10

    private struct Key: Equatable {
        var name: String
        var latitude, longitude: Double
        var thresholds: TemperatureThresholds
        var up: Bool?
        var lastSuccess: Double?
        var lastPollDuration: Double?
        var fresh: Bool
    }

    let collectors: [any Collector]
    /// What the collectors were made with; other staleness needs a fresh rendering.
    let maxStaleness: Double
    /// Indexed as in the snapshot.
    private var keys: [Key] = []
    /// `order[rank]`: the snapshot index of the location at that rank in label order.
    private var order: [Int] = []
    /// Family name to series lines, per shard.
    private var shards: [[String: [UInt8]]] = []

    init(collectors: [any Collector], maxStaleness: Double) {
        self.collectors = collectors
        self.maxStaleness = maxStaleness
    }

    /// Brings the chunks up to date with `snapshot` and returns the body to serve.
    mutating func render(_ snapshot: WeatherStore.Snapshot, now: Double) -> [[UInt8]] {
        let newKeys = snapshot.locations.map { state in
            Key(
                name: state.location.name, latitude: state.location.latitude, longitude: state.location.longitude,
                thresholds: state.thresholds, up: state.up, lastSuccess: state.lastSuccess,
                lastPollDuration: state.lastPollDuration,
                fresh: state.reading != nil && state.lastSuccess.map { now - $0 <= maxStaleness } == true)
        }
        var dirty: [Bool]
        if newKeys.count != keys.count || zip(newKeys, keys).contains(where: { $0.name != $1.name }) {
            order = snapshot.locations.indices.sorted {
                snapshot.locations[$0].location.name.utf8.lexicographicallyPrecedes(snapshot.locations[$1].location.name.utf8)
            }
            shards = Array(repeating: [:], count: (order.count + Self.shardSize - 1) / Self.shardSize)
            dirty = Array(repeating: true, count: shards.count)
        } else {
            dirty = Array(repeating: false, count: shards.count)
            for (rank, index) in order.enumerated() where newKeys[index] != keys[index] {
                dirty[rank / Self.shardSize] = true
            }
        }
        keys = newKeys

        // Families without a location, and every family's name, help and type.
        var empty = snapshot
        empty.locations = []
        var families: [MetricFamily] = []
        for collector in collectors { collector.collect(empty, now: now, into: &families) }
        families.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        let whole = Set(families.filter { !$0.samples.isEmpty }.map(\.name))

        for shard in shards.indices where dirty[shard] {
            var part = snapshot
            part.locations = order[(shard * Self.shardSize)..<min(order.count, (shard + 1) * Self.shardSize)].map { snapshot.locations[$0] }
            part.requestCounts = [:]
            var collected: [MetricFamily] = []
            for collector in collectors { collector.collect(part, now: now, into: &collected) }
            var lines: [String: [UInt8]] = [:]
            for family in collected where !family.samples.isEmpty && !whole.contains(family.name) {
                Exposition.appendSeries(of: family, to: &lines[family.name, default: []])
            }
            shards[shard] = lines
        }

        var body: [[UInt8]] = []
        for family in families {
            if whole.contains(family.name) {
                body.append(Exposition.render([family]))
            } else {
                let chunks = shards.compactMap { $0[family.name] }
                guard !chunks.isEmpty else { continue }
                var header: [UInt8] = []
                Exposition.appendHeader(of: family, to: &header)
                body.append(header)
                body += chunks
            }
        }
        if body.reduce(0, { $0 + $1.count }) < Self.joinBelow {
            return [Array(body.joined())]
        }
        return body
    }
}
