import Glibc
import Platform

/// What `openweather-exporter backfill` is asked for beyond the exporter's own flags: the range and
/// the file. These flags belong to the subcommand alone, so they are not in the settings table (the
/// config file and the environment do not set them).
public struct BackfillOptions: Sendable, Equatable {
    /// How far back from `until`.
    var since: Duration
    /// The end of the range (Unix seconds, exclusive); nil for the time the backfill starts.
    var until: Double?
    /// The OpenMetrics file written; its work in progress is kept beside it (`BackfillParts`).
    var output: String
    /// Labels put on every sample, first in each series: by default the shipped scrape job's
    /// `job="openweather"`, which the dashboard's `$job` and the rules filter on, so the history
    /// lands in the same series as the live scrapes.
    var labels: [Label] = BackfillOptions.defaultLabels

    /// A label every backfilled sample gets (`--label NAME=VALUE`).
    struct Label: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// The shipped scrape job's name (deploy/prometheus/prometheus.yml).
    static let defaultLabels = [Label(name: "job", value: "openweather")]

    /// The line `openweather-exporter --help` ends with.
    static let pointer =
        "History into Prometheus (weather and air quality of the past days):  openweather-exporter backfill --help"

    static let help = """
        usage: openweather-exporter backfill --since=DURATION [--until=TIME] --output=FILE [--label NAME=VALUE]... \
        [flags]

        Writes the past of every configured location as OpenMetrics with timestamps, the same families \
        and labels as /metrics, for `promtool tsdb create-blocks-from openmetrics FILE DIR`:
        the weather hour by hour from One Call's timemachine (one call per location and hour; the One Call \
        subscription), air pollution from the free air_pollution/history (one call per location), paced \
        by --openweather.max-requests-per-minute and kept within the day's allowances \
        (--collector.onecall.max-requests-per-day for timemachine, --openweather.max-requests-per-day). \
        An interrupted run, or one a day's allowance stopped, resumes where it stopped when run again \
        with the same --output (the range is the first run's).

        Backfill flags:
          --since=DURATION  How far back, as Prometheus writes durations: 24h, 7d, 2w.
          --until=TIME      End of the range (default: now): RFC 3339 (2025-12-01T12:00:00Z) or Unix seconds.
          --output=FILE     The OpenMetrics file to write; FILE.partial/ holds the work until it is done.
          --label NAME=VALUE  A label on every sample, repeatable (default: job=openweather, the shipped
                            scrape job's name, so the dashboard and the rules find the history). Set it
                            to your scrape job's labels: --label job=weather --label instance=host:9755;
                            an empty VALUE (--label job=) writes no such label.

        The location, key, collector and --openweather.* flags, the config file and --demo work as for \
        the exporter (openweather-exporter --help): --collector.weather (or --collector.onecall) backfills \
        the weather, --collector.air_pollution the air quality.
        """

    /// Takes the backfill's flags out of `arguments` (the subcommand's, without its name) as given,
    /// and leaves the exporter's: `--help` is answered before they are checked (`parse`).
    static func extract(
        _ arguments: [String]
    ) throws(ConfigError) -> (
        since: String?, until: String?, output: String?, labels: [String], rest: [String]
    ) {
        var found: [String: String] = [:]
        var labels: [String] = []
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard ["--since", "--until", "--output", "--label"].contains(name) else {
                rest.append(argument)
                continue
            }
            let value: String
            if let equals = argument.firstIndex(of: "=") {
                value = String(argument[argument.index(after: equals)...])
            } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            } else {
                let example =
                    ["--output": "history.om", "--since": "24h", "--label": "instance=home:9755"][name]
                    ?? "2025-12-01T12:00:00Z"
                throw ConfigError("\(name) needs a value, for example \(name)=\(example)")
            }
            if name == "--label" {
                labels.append(value)
                continue
            }
            if found[name] != nil { throw ConfigError("\(name) is given twice: give it once") }
            found[name] = value
        }
        return (found["--since"], found["--until"], found["--output"], labels, rest)
    }

    /// The options from the extracted texts.
    static func parse(
        since: String?, until: String?, output: String?, labels: [String] = []
    ) throws(ConfigError) -> BackfillOptions {
        guard let since else {
            throw ConfigError("backfill needs --since=DURATION, how far back: for example --since=24h")
        }
        guard let duration = PrometheusDuration.parse(since), duration > .zero else {
            throw ConfigError("--since=\(since) is not a duration: use one like 24h, 7d or 2w")
        }
        guard let output, !output.isEmpty else {
            throw ConfigError("backfill needs --output=FILE, the OpenMetrics file to write")
        }
        var end: Double?
        if let until {
            guard let parsed = parseTime(until) else {
                throw ConfigError("--until=\(until) is not a time: use RFC 3339 (2025-12-01T12:00:00Z) or Unix seconds")
            }
            end = parsed
        }
        return BackfillOptions(since: duration, until: end, output: output, labels: try parseLabels(labels))
    }

    /// The default job label with each `--label NAME=VALUE` set or added in turn; an empty value takes
    /// the label away.
    static func parseLabels(_ given: [String]) throws(ConfigError) -> [Label] {
        var labels = defaultLabels
        var seen: Set<String> = []
        for text in given {
            guard let equals = text.firstIndex(of: "=") else {
                throw ConfigError(
                    "--label \(text) has no value: write it NAME=VALUE, for example --label instance=home:9755")
            }
            let name = String(text[..<equals])
            let value = String(text[text.index(after: equals)...])
            guard isValidLabelName(name) else {
                throw ConfigError(
                    """
                    --label \(text): "\(name)" is not a label name: use letters, digits and underscores, not \
                    starting with a digit (e.g. instance, job, site)
                    """
                )
            }
            guard !name.hasPrefix("__") else {
                throw ConfigError("--label \(text): names starting with __ are Prometheus' own: choose another name")
            }
            guard seen.insert(name).inserted else { throw ConfigError("--label \(name) is given twice: give it once") }
            labels.removeAll { $0.name == name }
            if !value.isEmpty { labels.append(Label(name: name, value: value)) }
        }
        return labels
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, Prometheus' label name grammar.
    static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            return letter || byte == UInt8(ascii: "_") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }

    /// Unix seconds, or RFC 3339 with `Z` or an offset (`2025-12-01T12:00:00Z`, `...+01:00`, fractions ignored).
    static func parseTime(_ text: String) -> Double? {
        if let seconds = Double(text), seconds.isFinite, seconds > 0, seconds < 1e11 { return seconds.rounded(.down) }
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        func at(_ position: Int, _ character: Character) -> Bool {
            position < bytes.count && bytes[position] == character.asciiValue
        }
        guard let year = number(0, 4), at(4, "-"), let month = number(5, 2), at(7, "-"), let day = number(8, 2),
            at(10, "T") || at(10, "t") || at(10, " "), let hour = number(11, 2), at(13, ":"),
            let minute = number(14, 2),
            at(16, ":"), let second = number(17, 2),
            CivilTime.isDate(year: year, month: month, day: day), hour < 24, minute < 60, second < 61
        else { return nil }
        var position = 19
        if at(position, ".") {
            position += 1
            while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
        }
        var offset = 0
        if at(position, "Z") || at(position, "z") {
            position += 1
        } else if at(position, "+") || at(position, "-"), let hours = number(position + 1, 2), at(position + 3, ":"),
            let minutes = number(position + 4, 2)
        {
            offset = (hours * 3600 + minutes * 60) * (at(position, "-") ? -1 : 1)
            position += 6
        } else {
            return nil
        }
        guard position == bytes.count else { return nil }
        let time = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return Double(time.seconds - offset)
    }
}
