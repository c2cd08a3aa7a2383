/// Which shards a render must redo: the locations in label order (their names' bytes) cut into
/// shards of `shardSize`, and per location a key of everything its series depend on.
///
/// A shard is re-rendered when one of its locations changed: the store bumps a
/// location's generation with every change to its state, and a source's reading
/// turning stale flips a bit of its freshness; a source whose lines depend on `now`
/// (`Source.timePeriod`) adds `floor(now / period)` to the keys of the locations showing
/// it. So a location's series may depend on its own state and on `now` only through
/// these; families without a location (request counts, build info) are rendered whole
/// every time.
struct ShardKeys {
    /// Small enough that a poll costs little, large enough that chunks stay in kilobytes.
    static let shardSize = 32

    private struct Key: Equatable {
        var generation: UInt64
        /// Bit `slot` set when that source's reading is fresh.
        var fresh: UInt64
        /// `floor(now / period)` of the shortest `timePeriod` among the fresh sources; 0 without one.
        var timeBucket: Int64 = 0
    }

    /// Per slot, the source's `timePeriod`.
    private let timePeriods: [Double?]
    /// When the next time bucket of a shown reading begins: the publisher re-renders then.
    private(set) var nextTimeChange = Double.infinity
    /// Indexed as in the snapshot.
    private var keys: [Key] = []
    /// `order[rank]`: the snapshot index of the location at that rank in label order.
    private var order: [Int] = []

    init(timePeriods: [Double?] = []) {
        self.timePeriods = timePeriods
    }

    /// How many locations the keys are for.
    var count: Int { keys.count }
    var shardCount: Int { (order.count + Self.shardSize - 1) / Self.shardSize }

    /// The snapshot indices of `shard`'s locations, in label order.
    func positions(ofShard shard: Int) -> ArraySlice<Int> {
        order[(shard * Self.shardSize)..<min(order.count, (shard + 1) * Self.shardSize)]
    }

    /// Bit `slot` set when that source's reading at snapshot index `index` is fresh.
    func fresh(at index: Int) -> UInt64 { keys[index].fresh }

    /// Every key anew, for a snapshot of another layout than the last: every shard is to be redone.
    mutating func reset(_ snapshot: ReadingStore.Snapshot, now: Double) {
        nextTimeChange = .infinity
        keys = snapshot.locations.indices.map { key(of: snapshot, at: $0, now: now) }
        order = snapshot.layout.labelOrder
    }

    /// Takes `snapshot`'s keys and returns the shards with a location whose key changed, in order.
    mutating func changedShards(_ snapshot: ReadingStore.Snapshot, now: Double) -> [Int] {
        nextTimeChange = .infinity
        var dirty: [Int] = []
        // Updated in place: a new array of keys would be another megabyte at 10,000 locations.
        var last = -1
        for rank in order.indices {
            let key = key(of: snapshot, at: order[rank], now: now)
            guard key != keys[order[rank]] else { continue }
            keys[order[rank]] = key
            if rank / Self.shardSize != last {
                last = rank / Self.shardSize
                dirty.append(last)
            }
        }
        return dirty
    }

    /// Reads fields in place: copying a whole `LocationState` costs a dozen reference counts.
    private mutating func key(of snapshot: ReadingStore.Snapshot, at index: Int, now: Double) -> Key {
        var fresh: UInt64 = 0
        for slot in snapshot.locations[index].slots.indices where slot < snapshot.layout.maxStaleness.count {
            guard let success = snapshot.locations[index].slots[slot].lastSuccess,
                now - success <= snapshot.layout.maxStaleness[slot]
            else { continue }
            if case .none = snapshot.locations[index].slots[slot].reading { continue }
            fresh |= 1 << UInt64(slot)
        }
        var key = Key(generation: snapshot.locations[index].generation, fresh: fresh)
        var period = Double.infinity
        for slot in timePeriods.indices where fresh & (1 << UInt64(slot)) != 0 {
            if let own = timePeriods[slot] { period = min(period, own) }
        }
        if period.isFinite {
            let bucket = (now / period).rounded(.down)
            key.timeBucket = Int64(bucket)
            nextTimeChange = min(nextTimeChange, (bucket + 1) * period)
        }
        return key
    }
}
