import Exposition
import Glibc
import OpenWeather
import Platform

/// One location's history as OpenMetrics sample lines with timestamps, by family. The lines are the
/// live exposition's: each reading goes through its source's own `appendSeries`, for a shard of that
/// one location, and gets its time appended, so names, labels, their order and escaping cannot drift
/// from /metrics.
struct HistoryBlock: Equatable {
    /// Per family name, its lines: each series' samples together, in rising time.
    var families: [String: [UInt8]] = [:]

    /// Families the backfill leaves out: `openweather_location_info` describes the place (its
    /// labels come from the live answers and the geocoder), not its weather's past.
    static let leftOut: Set<String> = ["openweather_location_info"]

    /// Adds `source`'s lines for `readings` (each with the Unix time its samples get), in time order.
    mutating func add(
        _ source: any Source, readings: [(time: Double, reading: any Sendable)], location: Location, resolved: ResolvedPlace?
    ) {
        let families = source.families
        let lines = FamilyLines(count: families.count, positions: [Array(families.indices)])
        // Per family: series in the order first seen, and each one's lines.
        var series = [[(key: [UInt8], lines: [UInt8])]](repeating: [], count: families.count)
        var seen = [[[UInt8]: Int]](repeating: [:], count: families.count)
        for (time, reading) in readings {
            // Slot 0 holds the reading; slot 1 the geocoder's answer, which `LocationState.resolved` reads.
            let state = WeatherStore.LocationState(
                location: location, thresholds: AlertThresholds(),
                sources: [.init(applies: true, reading: reading), .init(applies: true, reading: resolved)])
            let shard = ShardSeries(WeatherStore.LocationStates([state]), positions: [0][...], fresh: [1], now: time)
            lines.clear()
            source.appendSeries(of: shard, slot: 0, to: lines.collectors[0])
            let stamp = Array(" \(Int64(time.rounded(.down)))".utf8)
            for (family, buffer) in lines.buffers.enumerated() where !Self.leftOut.contains(families[family].name) {
                for line in buffer.bytes.split(separator: UInt8(ascii: "\n")) {
                    // The value is after the last space: label values may hold spaces, numbers do not.
                    guard let space = line.lastIndex(of: UInt8(ascii: " ")) else { continue }
                    let key = Array(line[..<space])
                    let sample = Array(line) + stamp + [UInt8(ascii: "\n")]
                    if let position = seen[family][key] {
                        series[family][position].lines += sample
                    } else {
                        seen[family][key] = series[family].count
                        series[family].append((key, sample))
                    }
                }
            }
        }
        for (family, runs) in series.enumerated() where !runs.isEmpty {
            self.families[families[family].name, default: []] += runs.flatMap(\.lines)
        }
    }

    /// As kept in a part file: `# family NAME` before each family's lines.
    var encoded: [UInt8] {
        var out: [UInt8] = []
        for name in families.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out += Array("# family \(name)\n".utf8)
            out += families[name]!
        }
        return out
    }

    /// A part file's block; nil when it is not one (cut short, say).
    static func decode(_ bytes: [UInt8]) -> HistoryBlock? {
        var block = HistoryBlock()
        var current: String?
        let marker = Array("# family ".utf8)
        guard bytes.isEmpty || bytes.last == UInt8(ascii: "\n") else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: marker) {
                current = String(decoding: line.dropFirst(marker.count), as: UTF8.self)
                continue
            }
            guard let current, line.first != UInt8(ascii: "#") else { return nil }
            block.families[current, default: []] += Array(line) + [UInt8(ascii: "\n")]
        }
        return block
    }

    /// The OpenMetrics file: each family once, its HELP, TYPE and UNIT lines as /metrics has them,
    /// then every block's lines of it in the order given (the locations' label order), then `# EOF`.
    /// Families by name, as /metrics orders them.
    static func merge(_ blocks: [HistoryBlock], families: [MetricFamily]) -> [UInt8] {
        var out: [UInt8] = []
        for family in families.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            let parts = blocks.compactMap { $0.families[family.name] }
            guard !parts.isEmpty else { continue }
            Exposition.appendHeader(of: family, format: .openMetrics, to: &out)
            for part in parts { out += part }
        }
        return out + Exposition.trailer(.openMetrics)
    }
}

/// The work of a backfill kept beside its output, `OUTPUT.partial/`, so an interrupted run resumes:
/// `range` holds the first run's range and what it backfills, and each location done is one file,
/// written whole (temporary file, fsync, rename) before the next location starts. The output is
/// assembled from them at the end, and the directory removed.
struct BackfillParts {
    let directory: String

    init(output: String) { directory = output + ".partial" }

    /// What a run is: its range and which histories it asks for.
    struct Plan: Equatable {
        var from: Double
        var until: Double
        var weather: Bool
        var airPollution: Bool

        var line: String { "from=\(Int64(from)) until=\(Int64(until)) weather=\(weather) air_pollution=\(airPollution)\n" }

        static func parse(_ text: String) -> Plan? {
            var fields: [String: String] = [:]
            for pair in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { return nil }
                fields[String(parts[0])] = String(parts[1])
            }
            guard let from = fields["from"].flatMap(Double.init), let until = fields["until"].flatMap(Double.init),
                let weather = fields["weather"].flatMap(Bool.init), let air = fields["air_pollution"].flatMap(Bool.init)
            else { return nil }
            return Plan(from: from, until: until, weather: weather, airPollution: air)
        }
    }

    /// The plan of an earlier run of this output, if one was interrupted.
    func existingPlan() throws(BackfillError) -> Plan? {
        guard access(directory, F_OK) == 0 else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try Files.read(directory + "/range", limit: 4096)
        } catch {
            throw BackfillError("\(directory) holds an earlier backfill's work but no readable range (\(error)): remove the directory to start afresh")
        }
        guard let plan = Plan.parse(String(decoding: bytes, as: UTF8.self)) else {
            throw BackfillError("\(directory)/range is not a backfill's range: remove \(directory) to start afresh")
        }
        return plan
    }

    func start(_ plan: Plan) throws(BackfillError) {
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
            throw BackfillError("cannot create \(directory): \(errnoText(errno)); --output must be in a directory you can write")
        }
        try Self.write(Array(plan.line.utf8), to: directory + "/range")
    }

    /// Where a location's block is kept: named by a hash of its identity (name and place), so a
    /// location renamed or moved is asked again.
    func path(of location: Location) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in location.identity.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex + ".om"
    }

    /// The block kept for `location`, nil when it is not done.
    func block(of location: Location) -> HistoryBlock? {
        guard let bytes = try? Files.read(path(of: location), limit: 1 << 32) else { return nil }
        return HistoryBlock.decode(bytes)
    }

    func keep(_ block: HistoryBlock, of location: Location) throws(BackfillError) {
        try Self.write(block.encoded, to: path(of: location))
    }

    /// Removes the work once the output is written, blocks of locations no longer configured too.
    func remove() {
        if let listing = opendir(directory) {
            while let entry = readdir(listing) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { unlink(directory + "/" + name) }
            }
            closedir(listing)
        }
        rmdir(directory)
    }

    /// Whole or not at all: a temporary file, synced, renamed over `path`.
    static func write(_ bytes: [UInt8], to path: String) throws(BackfillError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BackfillError("cannot write \(temporary): \(errnoText(errno))") }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason = errnoText(errno)
                close(fd)
                unlink(temporary)
                throw BackfillError("cannot write \(temporary): \(reason)")
            }
            written += count
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            let reason = errnoText(errno)
            unlink(temporary)
            throw BackfillError("cannot write \(path): \(reason)")
        }
    }
}

/// Why a backfill stopped; what it had done is kept for the next run.
struct BackfillError: Error, CustomStringConvertible, Equatable {
    let description: String
    /// One Call's 401 for a key without its subscription: the weather is skipped, the rest goes on.
    var subscriptionMissing = false

    init(_ description: String, subscriptionMissing: Bool = false) {
        self.description = description
        self.subscriptionMissing = subscriptionMissing
    }
}
