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
        part.locations = WeatherStore.LocationStates(shard.locations)
        var families: [MetricFamily] = []
        collect(part, now: now, into: &families)
        var bytes: [UInt8] = []
        for family in families where !family.samples.isEmpty {
            guard let index = lines.index[family.name] else { continue }
            bytes.removeAll(keepingCapacity: true)
            Exposition.appendSeries(of: family, to: &bytes)
            lines.buffers[index].append(bytes)
        }
    }
}

/// The locations of one shard, in label order, with their `{location="…"` label rendered once.
struct ShardSeries {
    let locations: Members
    /// Every location's opening, one after the other; `openingEnds[i]` is where `locations[i]`'s ends.
    private let openingBytes: [UInt8]
    private let openingEnds: [Int]

    /// The shard's locations, read in place from the snapshot's states: no state is copied.
    struct Members: RandomAccessCollection {
        let states: WeatherStore.LocationStates
        /// Positions in `states`, in label order.
        let positions: ArraySlice<Int>

        var startIndex: Int { 0 }
        var endIndex: Int { positions.count }

        subscript(position: Int) -> WeatherStore.LocationState {
            _read { yield states[positions[positions.startIndex + position]] }
        }
    }

    /// `positions` (in label order) of `states`.
    init(_ states: WeatherStore.LocationStates, positions: ArraySlice<Int>) {
        let locations = Members(states: states, positions: positions)
        self.locations = locations
        var bytes: [UInt8] = []
        bytes.reserveCapacity(locations.count * 32)
        openingEnds = locations.map { state in
            Exposition.appendOpeningLabel("location", state.location.name, to: &bytes)
            return bytes.count
        }
        openingBytes = bytes
    }

    /// Calls `body` with a way to read each location's opening in place.
    func withOpenings<Result>(_ body: (Openings) -> Result) -> Result {
        openingBytes.withUnsafeBufferPointer { bytes in
            openingEnds.withUnsafeBufferPointer { ends in body(Openings(bytes: bytes, ends: ends)) }
        }
    }

    struct Openings {
        let bytes: UnsafeBufferPointer<UInt8>
        let ends: UnsafeBufferPointer<Int>

        subscript(position: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[(position == 0 ? 0 : ends[position - 1])..<ends[position]])
        }
    }
}

/// One byte buffer per per-location family, in the exposition's family order.
struct FamilyLines {
    /// Family name to buffer index; only families whose series carry a location.
    let index: [String: Int]
    let buffers: [ByteBuffer]

    init(index: [String: Int], count: Int) {
        self.index = index
        buffers = (0..<count).map { _ in ByteBuffer() }
    }

    /// Empties every buffer and keeps its capacity, for the next shard.
    func clear() {
        for buffer in buffers { buffer.removeAll() }
    }
}
