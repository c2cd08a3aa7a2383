import Exposition

/// Where a forecast-shaped source is read: at horizons ahead of the render's now (`hours_ahead`) and
/// over windows from it (`window_hours`). The weather forecast and the air-quality forecast declare
/// their two settings alike here and write their series in the same label order.
enum Spans {
    /// `"3"` for 3h, `"1.5"` for 90m: the value of `hours_ahead` and `window_hours`. Every label that
    /// counts time ahead is a plain number with its unit in the label's name, as `days_ahead` is.
    static func hoursLabel(_ span: Duration) -> String { Exposition.formatValue(span.seconds / 3600) }

    /// Each span with its label, in the order a family's series are written ("12" before "3").
    static func labelled(_ spans: [Duration]) -> [(span: Duration, label: String)] {
        spans.map { ($0, hoursLabel($0)) }.sorted { $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) }
    }

    /// `--collector.COLLECTOR.LIST` (`horizons` or `windows`): comma-separated durations from 1m to `reach`.
    static func setting(
        _ collector: String, _ list: String, doc: String, default value: [Duration], shown: String, reach: Duration
    ) -> Setting<[Duration]> {
        Setting<[Duration]>(
            "collector.\(collector).\(list)", key: "collector.\(collector).\(list)", kind: .list,
            placeholder: "DURATIONS",
            doc: doc, default: value, shown: shown
        ) { entry throws(ConfigError) in try Parse.durations(entry, upTo: reach) }
    }
}
