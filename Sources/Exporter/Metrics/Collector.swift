import Exposition

/// Writes per-location families: one source's readings, or the exporter's own per-location health.
/// Families are described once (name, HELP, TYPE); each collector writes a shard's lines straight
/// into their buffers, so there is one way of rendering and nothing to keep in step with it.
protocol Collector: Sendable {
    /// Every family it writes, each series with `location` as its first label.
    var families: [MetricFamily] { get }
    /// `shard`'s lines of `families`, appended to their buffers, each reached as `lines[family: Family.x]`.
    func appendSeries(of shard: ShardSeries, to lines: CollectorLines)
}

/// A source's collector: its families, written from the readings in its slot of each location.
/// Generic, so the source's own `appendSeries` is called directly with its readings typed.
struct SourceCollector<Typed: Source>: Collector {
    let source: Typed
    let slot: Int

    var families: [MetricFamily] { source.families }

    func appendSeries(of shard: ShardSeries, to lines: CollectorLines) {
        source.appendSeries(of: shard, readings: ShardReadings(shard: shard, slot: slot), to: lines)
    }
}

/// The locations of one shard, in label order, with their `{location="…"` label rendered once and
/// which of their readings are fresh enough to show.
struct ShardSeries {
    let locations: Members
    /// Per location, bit `slot` set when that source's reading is fresh.
    let fresh: [UInt64]
    /// The render's wall-clock time, for sources whose lines depend on it (`Source.timePeriod`).
    let now: Double
    /// Every location's opening, one after the other; `openingEnds[i]` is where `locations[i]`'s ends.
    private let openingBytes: [UInt8]
    private let openingEnds: [Int]

    /// The shard's locations, read in place from the snapshot's states: no state is copied.
    struct Members: RandomAccessCollection {
        let states: ReadingStore.LocationStates
        /// Positions in `states`, in label order.
        let positions: ArraySlice<Int>

        var startIndex: Int { 0 }
        var endIndex: Int { positions.count }

        subscript(position: Int) -> ReadingStore.LocationState {
            _read { yield states[positions[positions.startIndex + position]] }
        }
    }

    /// `positions` (in label order) of `states`; `fresh` in the same order.
    init(_ states: ReadingStore.LocationStates, positions: ArraySlice<Int>, fresh: [UInt64], now: Double) {
        let locations = Members(states: states, positions: positions)
        self.locations = locations
        self.fresh = fresh
        self.now = now
        var bytes: [UInt8] = []
        bytes.reserveCapacity(locations.count * 32)
        // By position, so each name is read in place rather than from a copy of its state.
        openingEnds = locations.indices.map { position in
            Exposition.appendOpeningLabel("location", locations[position].location.name, to: &bytes)
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

/// One byte buffer per family of the exposition, in its order (a family without a location keeps
/// its buffer empty), and each collector's view of them.
struct FamilyLines {
    let buffers: [ByteBuffer]
    /// Per collector, the buffers of its families in its `families` order.
    let collectors: [CollectorLines]

    /// `positions[c][k]`: where collector c's k-th family is in the exposition (nil: not in it).
    init(count: Int, positions: [[Int?]]) {
        let buffers = (0..<count).map { _ in ByteBuffer() }
        self.buffers = buffers
        collectors = positions.map { CollectorLines(buffers: $0.map { $0.map { buffers[$0] } }) }
    }

    /// Empties every buffer and keeps its capacity, for the next shard.
    func clear() {
        for buffer in buffers { buffer.removeAll() }
    }
}

/// The buffers one collector writes, by the position of the family in its own `families`: where a
/// family's lines go is found once per layout, not by name in every shard. A collector reaches them
/// one way only, through its own `Family` type, which names each position once; no bare numbers.
struct CollectorLines {
    let buffers: [ByteBuffer?]

    subscript(family family: some FamilyPosition) -> ByteBuffer? { buffers[family.position] }
}

/// One of a collector's families, by its position in the collector's `families` (nil buffer: the
/// family is not in this exposition).
protocol FamilyPosition {
    var position: Int { get }
}

/// The usual form: an enum whose cases are the families in `families` order.
extension FamilyPosition where Self: RawRepresentable, RawValue == Int {
    var position: Int { rawValue }
}
