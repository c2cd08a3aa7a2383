import Exposition
import Glibc

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
    /// Per shard, per family (in `families` order): its locations' series lines.
    private var shards: [[[UInt8]]] = []
    /// Every family's name in sorted order, as the collectors gave them last time.
    private var familyNames: [String] = []

    init(collectors: [any Collector], maxStaleness: Double) {
        self.collectors = collectors
        self.maxStaleness = maxStaleness
    }

    /// Brings the chunks up to date with `snapshot` and returns the body to serve.
    mutating func render(_ snapshot: WeatherStore.Snapshot, now: Double) -> [[UInt8]] {
        // Families without a location, and every family's name, help and type.
        var empty = snapshot
        empty.locations = []
        var families: [MetricFamily] = []
        for collector in collectors { collector.collect(empty, now: now, into: &families) }
        families.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        let names = families.map(\.name)

        let newKeys = currentKeys(of: snapshot, now: now)
        var dirty: [Bool]
        if names != familyNames || newKeys.count != keys.count || !newKeys.indices.allSatisfy({ newKeys[$0].name == keys[$0].name }) {
            order = snapshot.locations.indices.sorted {
                Self.bytesPrecede(snapshot.locations[$0].location.name, snapshot.locations[$1].location.name)
            }
            shards = Array(repeating: [], count: (order.count + Self.shardSize - 1) / Self.shardSize)
            dirty = Array(repeating: true, count: shards.count)
            familyNames = names
        } else {
            dirty = Array(repeating: false, count: shards.count)
            for rank in order.indices where newKeys[order[rank]] != keys[order[rank]] {
                dirty[rank / Self.shardSize] = true
            }
        }
        keys = newKeys

        let whole = families.map { !$0.samples.isEmpty }
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where !whole[position] { index[name] = position }
        // One set of buffers for every shard: they grow once, and each shard keeps a copy to size.
        var lines = FamilyLines(index: index, count: families.count)
        for shard in shards.indices where dirty[shard] {
            let part = ShardSeries(order[(shard * Self.shardSize)..<min(order.count, (shard + 1) * Self.shardSize)].map { snapshot.locations[$0] })
            lines.clear()
            for collector in collectors { collector.appendSeries(of: part, now: now, to: &lines) }
            shards[shard] = lines.buffers.map { chunk in chunk.withUnsafeBufferPointer { Array($0) } }
        }

        var body: [[UInt8]] = []
        for (index, family) in families.enumerated() {
            if whole[index] {
                body.append(Exposition.render([family]))
            } else if shards.contains(where: { !$0[index].isEmpty }) {
                var header: [UInt8] = []
                Exposition.appendHeader(of: family, to: &header)
                body.append(header)
                for shard in shards where !shard[index].isEmpty { body.append(shard[index]) }
            }
        }
        let total = body.reduce(0) { $0 + $1.count }
        return total < Self.joinBelow ? [Self.join(body, total: total)] : body
    }

    /// Byte order of the names' UTF-8, compared with memcmp where the bytes are contiguous.
    static func bytesPrecede(_ lhs: String, _ rhs: String) -> Bool {
        let fast = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order != 0 ? order < 0 : left.count < right.count
            }
        }
        return (fast ?? nil) ?? lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    static func join(_ chunks: [[UInt8]], total: Int? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(total ?? chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks { out.append(contentsOf: chunk) }
        return out
    }

    /// Reads fields in place: copying a whole `LocationState` costs a dozen reference counts.
    private func currentKeys(of snapshot: WeatherStore.Snapshot, now: Double) -> [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(snapshot.locations.count)
        for index in snapshot.locations.indices {
            let hasReading: Bool
            if case .none = snapshot.locations[index].reading { hasReading = false } else { hasReading = true }
            let lastSuccess = snapshot.locations[index].lastSuccess
            keys.append(Key(
                name: snapshot.locations[index].location.name,
                latitude: snapshot.locations[index].location.latitude, longitude: snapshot.locations[index].location.longitude,
                thresholds: snapshot.locations[index].thresholds, up: snapshot.locations[index].up, lastSuccess: lastSuccess,
                lastPollDuration: snapshot.locations[index].lastPollDuration,
                fresh: hasReading && lastSuccess.map { now - $0 <= maxStaleness } == true))
        }
        return keys
    }
}
