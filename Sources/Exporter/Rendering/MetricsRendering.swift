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
    /// Their names: the other families are rendered whole.
    private var perLocation: Set<String> = []
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
    /// While gzipped, the segments of what each family has apart from the shards' chunks (HELP and TYPE
    /// lines, or the whole family), in both formats: mostly the same from render to render.
    private var partSegments = SegmentCache()
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
            + sources.enumerated().map { slot, source in source.collector(slot: slot) }
        locationFamilies = collectors.flatMap(\.families).sorted {
            $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
        }
        perLocation = Set(locationFamilies.map(\.name))
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
        let families = families(of: snapshot)
        threads.threadsUsed = 1
        // Rendered straight into the form the last render chose: with a steady number of
        // locations, that is the form they stay in.
        renderShards(shardsToRedo(snapshot, families: families, now: now), of: snapshot, families: families, now: now)
        let parts = PerFormat { format in families.indices.map { part(of: families, at: $0, format: format) } }
        // The form follows the text format's size: both formats share the shards' chunks.
        chooseForm(plainCount: parts.text.reduce(0) { $0 + ($1?.count ?? 0) } + shards.reduce(0) { $0 + $1.plainCount })
        // Each per-location family's chunks of every shard, in order: the same in both formats, so
        // joined (gzipped, CRCs combined) once, not twice (thousands of combines at 10,000 locations).
        let runs = families.indices.map { index -> Body? in
            guard perLocation.contains(families[index].name) else { return nil }
            var run = Body(gzipped: gzipped)
            for shard in shards where shard.plainCounts[index] > 0 { shard.append(family: index, to: &run) }
            return run
        }
        defer { partSegments.endRound() }
        return PerFormat { format in
            // Family by family: its own part, then its lines from every shard.
            var body = Body(gzipped: gzipped)
            for (part, run) in zip(parts[format], runs) {
                guard let part else { continue }
                append(part, to: &body)
                if let run { body.append(contentsOf: run) }
            }
            // Not joined: the publisher copies the chunks once into the kept body a scrape is sent from.
            return body
        }
    }

    /// The per-location families and those without a location (rendered whole each time), by name.
    private func families(of snapshot: ReadingStore.Snapshot) -> [MetricFamily] {
        var families = locationFamilies
        families += ExporterCollector.collect(snapshot).map { family in
            var family = family
            if family.type == .counter { family.created = countersCreated }
            return family
        }
        families.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        return families
    }

    /// Every shard for another layout, number of locations or list of families (the state file's
    /// family appearing after its first write moves the others); else the shards whose locations changed.
    private mutating func shardsToRedo(
        _ snapshot: ReadingStore.Snapshot, families: [MetricFamily], now: Double
    ) -> [Int] {
        let names = families.map(\.name)
        if layoutRevision != snapshot.layoutRevision || snapshot.locations.count != keys.count || names != familyNames {
            layoutRevision = snapshot.layoutRevision
            familyNames = names
            keys.reset(snapshot, now: now)
            shards = Array(repeating: ShardChunks(), count: keys.shardCount)
            return Array(shards.indices)
        }
        return keys.changedShards(snapshot, now: now)
    }

    /// Renders `dirty` shards' lines of every per-location family, in the current form.
    private mutating func renderShards(
        _ dirty: [Int], of snapshot: ReadingStore.Snapshot, families: [MetricFamily], now: Double
    ) {
        var index: [String: Int] = [:]
        for (position, family) in families.enumerated() where perLocation.contains(family.name) {
            index[family.name] = position
        }
        // Where each collector's families are: found by name once per render, not in every shard.
        let familyPositions = collectors.map { $0.families.map { index[$0.name] } }
        let (keys, collectors, familyCount, gzip) = (keys, collectors, families.count, gzipped)
        threads.forEachShard(dirty, of: &shards) { worker, shard, previous in
            let positions = keys.positions(ofShard: shard)
            let part = ShardSeries(
                snapshot.locations, positions: positions, fresh: positions.map { keys.fresh(at: $0) }, now: now)
            return worker.render(
                part, collectors: collectors, positions: familyPositions, families: familyCount, gzip: gzip,
                previous: previous)
        }
    }

    /// What `families[index]` has apart from the shards' chunks: the whole family, or its HELP and TYPE lines before
    /// them; nil for a per-location family no shard has lines of, or a family without samples.
    private func part(of families: [MetricFamily], at index: Int, format: ExpositionFormat) -> [UInt8]? {
        guard perLocation.contains(families[index].name) else {
            return families[index].samples.isEmpty ? nil : Exposition.render([families[index]], format: format)
        }
        guard shards.contains(where: { $0.plainCounts[index] > 0 }) else { return nil }
        var header: [UInt8] = []
        Exposition.appendHeader(of: families[index], format: format, to: &header)
        return header
    }

    /// Keeps the chunks gzipped from `gzipAbove` plain bytes on, plain again below three quarters of it.
    private mutating func chooseForm(plainCount: Int) {
        let wasGzipped = gzipped
        gzipped = gzipped ? plainCount >= gzipAbove - gzipAbove / 4 : plainCount >= gzipAbove
        if gzipped != wasGzipped {
            let (target, current) = (gzipped, shards)
            threads.forEachShard(Array(shards.indices), of: &shards) { worker, shard, _ in
                worker.convert(current[shard], gzip: target)
            }
        }
        if !gzipped { partSegments = SegmentCache() }
    }

    /// `chunk` appended to `body`, as a deflate segment when gzipped.
    private mutating func append(_ chunk: [UInt8], to body: inout Body) {
        guard gzipped else { return body.append(plain: chunk) }
        let worker = threads.workers[0]
        body.append(
            chunk.withUnsafeBufferPointer { partSegments.segment(of: $0, compress: worker.segment) }, count: chunk.count
        )
    }
}
