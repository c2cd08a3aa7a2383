import Exposition
import Gzip

/// The `openweather_*` part of the exposition, kept as byte chunks so that a poll
/// re-renders a few dozen locations instead of all of them. This lays the body out and chooses its
/// form; `ShardKeys` tells which shards to redo, `ShardThreads` runs them, `ShardWorker` renders one.
///
/// Locations are taken in label order (their names' bytes) and cut into shards of
/// `ShardKeys.shardSize`. Each shard keeps, per family, its locations' series lines. The body
/// is, family by family: the HELP and TYPE lines, then that family's chunk of every
/// shard in order, which is the order `Exposition.render` would sort them into,
/// because every per-location series carries `location` as its first label. Only
/// one copy of the text is held here; the publisher keeps the body a scrape is sent from.
///
/// A shard is re-rendered when one of its locations changed (`ShardKeys`); families without a
/// location (request counts, build info) are rendered whole every time.
///
/// From `gzipAbove` plain bytes on (hundreds of locations), every chunk is kept only
/// as a deflate segment (see `GzipCompressor`) and its CRC, compressed when it is
/// rendered; the body is then those segments in order, to be framed as one gzip member
/// of the same text. Below three quarters of it the chunks go back to plain, so a size
/// near the threshold does not flap.
///
/// Each render makes the body in both formats (`ExpositionFormat`): the shards' chunks are the
/// same in both and shared (every per-location family is a gauge; a counter among them would lack
/// only its optional `_created` lines); only the HELP, TYPE and UNIT lines and the families rendered
/// whole differ, a few kilobytes.
struct MetricsRendering {
    /// From this many plain bytes on the chunks are kept gzipped: a couple of hundred locations with
    /// the forecast (8 KB each), a thousand without. Below it a scrape is sent from a kept memfd at
    /// nginx's speed (`KeptBody`); 256 KiB, the threshold before the forecast was on by default,
    /// made 32 locations' plain scrapes pay an inflate each.
    static let gzipAbove = 2 << 20

    /// What to serve: the chunks, whether they are deflate segments (without the gzip header
    /// and trailer), the length of the plain text and, for segments, its CRC-32.
    struct Body {
        var chunks: [[UInt8]]
        var gzipped: Bool
        var plainCount: Int
        var crc: UInt32 = 0
    }

    /// Made from the snapshot's sources: the exporter's health and each source's collector.
    private var collectors: [any Collector] = []
    /// The sources (by name, in slot order) the collectors were made for.
    private var sourceNames: [String]?
    /// When the next time bucket of a shown reading begins: the publisher re-renders then.
    var nextTimeChange: Double { keys.nextTimeChange }
    /// The most threads the last `render` rendered shards on at once (`ShardThreads.threadsUsed`).
    var threadsUsed: Int { threads.threadsUsed }
    /// Every per-location family, sorted by name.
    private var locationFamilies: [MetricFamily] = []
    private var keys = ShardKeys()
    /// The revision of the store's layout the keys and shards were made for.
    private var layoutRevision: UInt64?
    /// The exposition's families the shards' chunks are kept for, by position: a family appearing
    /// (the state file's, after its first write) moves the others, so every shard is redone.
    private var familyNames: [String] = []
    private var shards: [ShardChunks] = []
    let gzipAbove: Int
    private var gzipped = false
    private var threads: ShardThreads
    /// Compressed HELP and TYPE lines and their CRC by family name, per format: they never change.
    private var headerSegments = PerFormat<[String: (segment: [UInt8], crc: UInt32)]> { _ in [:] }
    /// When the counters of the families without a location started (the process's start):
    /// OpenMetrics shows it as their `_created` series.
    let countersCreated: Double

    init(
        gzipAbove: Int = MetricsRendering.gzipAbove, parallelism: Int = ShardThreads.defaultParallelism,
        countersCreated: Double = ProcessCollector.startTime ?? 0
    ) {
        self.gzipAbove = gzipAbove
        self.countersCreated = countersCreated
        threads = ShardThreads(parallelism: parallelism)
    }

    /// The collectors for `sources` as configured; everything is rendered anew.
    private mutating func configure(for sources: [any Source]) {
        let sourceNames = sources.map(\.name)
        collectors =
            [HealthCollector(sourceNames: sourceNames)]
            + sources.enumerated().map { slot, source in SourceCollector(source: source, slot: slot) }
        locationFamilies = collectors.flatMap(\.families).sorted {
            $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
        }
        keys = ShardKeys(timePeriods: sources.map(\.timePeriod))
        self.sourceNames = sourceNames
        layoutRevision = nil
    }

    /// Brings the chunks up to date with `snapshot` and returns the body to serve in each format.
    mutating func render(_ snapshot: ReadingStore.Snapshot, now: Double) -> PerFormat<Body> {
        // A reload (a new layout) may change a source's settings under the same name.
        if sourceNames != snapshot.layout.sourceNames || layoutRevision != snapshot.layoutRevision {
            configure(for: snapshot.layout.sources)
        }
        // Families without a location rendered whole, among the per-location ones, by name.
        var families = locationFamilies
        let global = ExporterCollector.collect(snapshot).map { family in
            var family = family
            if family.type == .counter { family.created = countersCreated }
            return family
        }
        families += global
        families.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }

        let dirty: [Int]
        threads.threadsUsed = 1
        let names = families.map(\.name)
        if layoutRevision != snapshot.layoutRevision || snapshot.locations.count != keys.count || names != familyNames {
            layoutRevision = snapshot.layoutRevision
            familyNames = names
            keys.reset(snapshot, now: now)
            shards = Array(repeating: ShardChunks(), count: keys.shardCount)
            dirty = Array(shards.indices)
        } else {
            dirty = keys.changedShards(snapshot, now: now)
        }

        let perLocation = Set(locationFamilies.map(\.name))
        let whole = families.map { !perLocation.contains($0.name) }
        var index: [String: Int] = [:]
        for (position, family) in families.enumerated() where !whole[position] { index[family.name] = position }
        // Rendered straight into the form the last render chose: with a steady number of
        // locations, that is the form they stay in.
        let form = gzipped
        // Where each collector's families are: found by name once per render, not in every shard.
        let familyPositions = collectors.map { $0.families.map { index[$0.name] } }
        let (keys, collectors, familyCount) = (keys, collectors, families.count)
        threads.forEachShard(dirty, of: &shards) { worker, shard, previous in
            let positions = keys.positions(ofShard: shard)
            let part = ShardSeries(
                snapshot.locations, positions: positions, fresh: positions.map { keys.fresh(at: $0) }, now: now)
            return worker.render(
                part, collectors: collectors, positions: familyPositions, families: familyCount, gzip: form,
                previous: previous)
        }

        // Per format and family, its own plain part: the whole family, or the HELP and TYPE lines
        // before the shards' chunks; nil for a per-location family no shard has lines of.
        let parts = PerFormat { format in
            families.indices.map { index -> (chunk: [UInt8], header: String?)? in
                if whole[index] {
                    return families[index].samples.isEmpty
                        ? nil : (Exposition.render([families[index]], format: format), nil)
                }
                guard shards.contains(where: { $0.plainCounts[index] > 0 }) else { return nil }
                var header: [UInt8] = []
                Exposition.appendHeader(of: families[index], format: format, to: &header)
                return (header, families[index].name)
            }
        }
        let shardBytes = shards.reduce(0) { $0 + $1.plainCounts.reduce(0, +) }
        // The form follows the text format's size: both formats share the shards' chunks.
        let total = PerFormat { format in parts[format].reduce(0) { $0 + ($1?.chunk.count ?? 0) } + shardBytes }
        gzipped = gzipped ? total.text >= gzipAbove - gzipAbove / 4 : total.text >= gzipAbove
        if gzipped != form {
            let (target, current) = (gzipped, shards)
            threads.forEachShard(Array(shards.indices), of: &shards) { worker, shard, _ in
                worker.convert(current[shard], gzip: target)
            }
        }
        if !gzipped { headerSegments = PerFormat { _ in [:] } }
        // Per family, its shards' chunks in order and, gzipped, their CRC and length: the same in
        // both formats, so combined once (thousands of CRC combines at 10,000 locations).
        let runs = families.indices.map { index -> (chunks: [[UInt8]], crc: UInt32, count: Int) in
            var run: (chunks: [[UInt8]], crc: UInt32, count: Int) = ([], 0, 0)
            guard !whole[index] else { return run }
            for shard in shards where shard.plainCounts[index] > 0 {
                run.chunks.append(shard.chunks[index])
                run.count += shard.plainCounts[index]
                if gzipped { run.crc = Gzip.combine(run.crc, shard.crcs[index], using: shard.combineOperators[index]) }
            }
            return run
        }
        return PerFormat { format in body(parts[format], runs: runs, total: total[format], format: format) }
    }

    /// The body in one format: each family's part, then the shards' chunks of it by reference.
    private mutating func body(
        _ parts: [(chunk: [UInt8], header: String?)?], runs: [(chunks: [[UInt8]], crc: UInt32, count: Int)], total: Int,
        format: ExpositionFormat
    ) -> Body {
        var body: [[UInt8]] = []
        var crc: UInt32 = 0
        for (index, part) in parts.enumerated() {
            guard let (chunk, name) = part else { continue }
            if !gzipped {
                body.append(chunk)
            } else {
                let compressed: (segment: [UInt8], crc: UInt32)
                if let name, let cached = headerSegments[format][name] {
                    compressed = cached
                } else {
                    compressed = (chunk.withUnsafeBufferPointer { threads.workers[0].segment($0) }, Gzip.crc32(chunk))
                    if let name { headerSegments[format][name] = compressed }
                }
                body.append(compressed.segment)
                crc = Gzip.combine(crc, compressed.crc, secondCount: chunk.count)
            }
            if name != nil {
                body += runs[index].chunks
                if gzipped { crc = Gzip.combine(crc, runs[index].crc, secondCount: runs[index].count) }
            }
        }
        if gzipped { return Body(chunks: body, gzipped: true, plainCount: total, crc: crc) }
        // Not joined: the publisher copies the chunks once into the kept body a scrape is sent from.
        return Body(chunks: body, gzipped: false, plainCount: total)
    }
}
