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
        _ source: any Source, readings: [(time: Double, reading: any Sendable)], location: Location,
        resolved: ResolvedPlace?
    ) {
        let families = source.families
        let collector = source.collector(slot: 0)
        let lines = FamilyLines(count: families.count, positions: [Array(families.indices)])
        // Per family: series in the order first seen, and each one's lines.
        var series = [[(key: [UInt8], lines: [UInt8])]](repeating: [], count: families.count)
        var seen = [[[UInt8]: Int]](repeating: [:], count: families.count)
        for (time, reading) in readings {
            // Slot 0 holds the reading; slot 1 the geocoder's answer, which `LocationState.resolved` reads.
            let state = ReadingStore.LocationState(
                location: location, thresholds: AlertThresholds(),
                slots: [.init(applies: true, reading: reading), .init(applies: true, reading: resolved)],
                sources: [source, GeocodingSource()])
            let shard = ShardSeries(ReadingStore.LocationStates([state]), positions: [0][...], fresh: [1], now: time)
            lines.clear()
            collector.appendSeries(of: shard, to: lines.collectors[0])
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
    /// `labels` go first in every series (`--label`; the kept blocks have none, so a resumed run may
    /// choose others); one the exporter already writes is an error, as OpenMetrics allows a name once.
    static func merge(
        _ blocks: [HistoryBlock], families: [MetricFamily], labels: [BackfillOptions.Label] = []
    ) throws(BackfillError) -> [UInt8] {
        var out: [UInt8] = []
        var prefix: [UInt8] = []
        for label in labels {
            if prefix.isEmpty {
                Exposition.appendOpeningLabel(label.name, label.value, to: &prefix)
            } else {
                Exposition.appendLabel(label.name, label.value, to: &prefix)
            }
        }
        for family in families.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            let parts = blocks.compactMap { $0.families[family.name] }
            guard !parts.isEmpty else { continue }
            Exposition.appendHeader(of: family, format: .openMetrics, to: &out)
            for part in parts {
                guard !prefix.isEmpty else {
                    out += part
                    continue
                }
                for line in part.split(separator: UInt8(ascii: "\n")) {
                    try appendLine(line, labels: labels, prefix: prefix, to: &out)
                }
            }
        }
        return out + Exposition.trailer(.openMetrics)
    }

    /// `line` (`name{labels} value time` or `name value time`) with `prefix` (`{a="b",c="d"`) put in
    /// front of its own labels.
    private static func appendLine(
        _ line: ArraySlice<UInt8>, labels: [BackfillOptions.Label], prefix: [UInt8], to out: inout [UInt8]
    ) throws(BackfillError) {
        guard let end = line.firstIndex(where: { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: " ") }) else {
            out += line + [UInt8(ascii: "\n")]
            return
        }
        out += line[..<end]
        out += prefix
        if line[end] == UInt8(ascii: " ") {
            out.append(UInt8(ascii: "}"))
            out += line[end...]
        } else {
            let own = labelNames(line[(end + 1)...])
            if let clash = labels.first(where: { own.contains($0.name) }) {
                throw BackfillError.configuration(
                    """
                    --label \(clash.name)=\(clash.value): \(String(decoding: line[..<end], as: UTF8.self)) has a label \
                    \(clash.name) of its own: choose another name (the work done is kept: run the same command with it)
                    """
                )
            }
            out.append(UInt8(ascii: ","))
            out += line[(end + 1)...]
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// The names in `a="x",b="y"}...`, skipping the quoted (escaped) values.
    private static func labelNames(_ labels: ArraySlice<UInt8>) -> [String] {
        var names: [String] = []
        var index = labels.startIndex
        while index < labels.endIndex, labels[index] != UInt8(ascii: "}") {
            guard let equals = labels[index...].firstIndex(of: UInt8(ascii: "=")) else { break }
            names.append(String(decoding: labels[index..<equals], as: UTF8.self))
            index = equals + 2  // past `="`
            while index < labels.endIndex, labels[index] != UInt8(ascii: "\"") {
                index += labels[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            index += 1  // the closing quote
            if index < labels.endIndex, labels[index] == UInt8(ascii: ",") { index += 1 }
        }
        return names
    }
}
