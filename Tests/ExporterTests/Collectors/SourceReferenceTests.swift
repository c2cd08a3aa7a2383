import TestSupport
import Testing

@testable import Exporter

/// The deploy reference names every source and every family a source writes, so a source added by
/// the recipe in Sources/README.md fails here until its rows are written (the flags' rows are checked
/// by `ConfigFileTests.theReadmeFlagsTableAgreesWithTheTable`).
@Suite struct SourceReferenceTests {
    /// The first cells of a document's table rows (`| `name` ...`), each as its backquoted words.
    static func firstCells(_ path: String, after marker: String? = nil) throws -> [[String]] {
        let text = String(decoding: try readFile(repositoryDirectory() + "/" + path), as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        if let marker {
            let start = try #require(lines.firstIndex { $0.hasPrefix(marker) }, "\(path) has no \(marker)")
            // That one table: its rows follow the marker's paragraph, up to the first line after them that is no row.
            let header = try #require(
                lines[start...].firstIndex { $0.hasPrefix("|") }, "\(path): no table after \(marker)")
            lines = lines[header...].prefix { $0.hasPrefix("|") }
        }
        return lines.filter { $0.hasPrefix("| `") }.map { line in
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            return cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element.prefix { $0 != "{" }) }
        }
    }

    /// Whether a row's first cell names `family`, in full or as `..._rest` after a name it shares the
    /// start with (`openweather_forecast_humidity_ratio`, `..._pressure_pascals`).
    static func names(_ cell: [String], _ family: String) -> Bool {
        if cell.contains(family) { return true }
        guard let first = cell.first(where: { !$0.hasPrefix("...") }) else { return false }
        return cell.contains { word in
            guard word.hasPrefix("..._"), family.hasSuffix(word.dropFirst(3)) else { return false }
            let start = family.dropLast(word.count - 3)
            return !start.isEmpty && first.hasPrefix(start + "_")
        }
    }

    /// Every family a source declares has its row in metrics.md, or in sources.md, where metrics.md
    /// sends the forecasts' and One Call's.
    @Test func everyFamilyOfEverySourceHasItsRow() throws {
        let rows =
            try Self.firstCells("deploy/docs/metrics.md") + Self.firstCells("deploy/docs/sources.md")
        for source in Sources.all {
            for family in source.families where !rows.contains(where: { Self.names($0, family.name) }) {
                Issue.record(
                    "\(family.name), a family of \(source.name), has no row in deploy/docs/metrics.md or sources.md")
            }
        }
    }

    /// Every source has its row in the tables of what each source asks and costs: configuration.md's
    /// (its endpoint) and sources.md's (its requests a day).
    @Test(arguments: [
        ("deploy/docs/configuration.md", "**Sources and what they cost.**"),
        ("deploy/docs/sources.md", "**What each source costs**"),
    ])
    func everySourceHasItsRow(path: String, table: String) throws {
        let named = Set(try Self.firstCells(path, after: table).flatMap { $0 })
        for source in Sources.all where !named.contains(source.name) {
            Issue.record("\(path)'s table after \(table) has no row for the source \(source.name)")
        }
    }
}
