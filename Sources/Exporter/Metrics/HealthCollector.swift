import Exposition

/// The exporter's health per location and source: the last poll's result, when it last succeeded,
/// how long it took; and the configured alert thresholds, which the shipped rules join by location
/// (absent for a place with alerts off), and whether the place's alerts are on at all, which mutes the
/// rules that have no threshold to join (official warnings, rain within the hour, air quality).
struct HealthCollector: Collector {
    /// The `source` label of each slot, in label order.
    let sourceNames: [String]

    private static let up: StaticString = "openweather_up"
    private static let lastSuccess: StaticString = "openweather_last_success_timestamp_seconds"
    private static let duration: StaticString = "openweather_poll_duration_seconds"
    private static let thresholds: StaticString = "openweather_temperature_alert_threshold_celsius"
    private static let thresholdInfo: StaticString = "openweather_temperature_alert_threshold_info"
    private static let hysteresis: StaticString = "openweather_temperature_alert_hysteresis_celsius"
    private static let gust: StaticString = "openweather_wind_gust_alert_threshold_meters_per_second"
    private static let rain: StaticString = "openweather_rain_alert_threshold_meters"
    private static let heatIndex: StaticString = "openweather_heat_index_alert_threshold_celsius"
    private static let wetBulb: StaticString = "openweather_wet_bulb_alert_threshold_celsius"
    private static let windChill: StaticString = "openweather_wind_chill_alert_threshold_celsius"
    private static let thermalInfo: StaticString = "openweather_thermal_alert_threshold_info"
    private static let alertsEnabled: StaticString = "openweather_location_alerts_enabled"
    private static let names = [
        up, lastSuccess, duration, thresholds, thresholdInfo, hysteresis, gust, rain, heatIndex, wetBulb, windChill,
        thermalInfo, alertsEnabled,
    ]

    /// Positions in `families` (and `names`), where each family's buffer is in the lines a shard is written to.
    private enum Family: Int, CaseIterable, FamilyPosition {
        case up, lastSuccess, duration, thresholds, thresholdInfo, hysteresis, gust, rain, heatIndex, wetBulb
        case windChill, thermalInfo, alertsEnabled
    }

    var families: [MetricFamily] {
        [
            MetricFamily(
                name: Self.up.description,
                help: "1 when the last poll of the location from the source succeeded, else 0."),
            MetricFamily(
                name: Self.lastSuccess.description,
                help: "When the location was last polled successfully from the source, Unix time."),
            MetricFamily(
                name: Self.duration.description, help: "How long the last poll of the location from the source took."),
            MetricFamily(
                name: Self.thresholds.description,
                help: "Configured temperature alert threshold of the location; bound is above or below."),
            MetricFamily(
                name: Self.thresholdInfo.description,
                help:
                    """
                    The unit a temperature alert threshold was given in (celsius or fahrenheit), for the alerts' text; \
                    always 1.
                    """
            ),
            MetricFamily(
                name: Self.hysteresis.description,
                help:
                    """
                    How far back past its threshold the temperature (or the heat index, wet-bulb temperature or wind \
                    chill) must come before a firing alert on it resolves.
                    """
            ),
            MetricFamily(
                name: Self.gust.description,
                help: "Configured wind gust alert threshold of the location, now and forecast."),
            MetricFamily(
                name: Self.rain.description,
                help:
                    "Configured heavy-rain alert threshold of the location: the forecast's rain over the next 24 hours."
            ),
            MetricFamily(
                name: Self.heatIndex.description,
                help: """
                    Configured heat index alert threshold of the location (heat stress above it), now and forecast.
                    """),
            MetricFamily(
                name: Self.wetBulb.description,
                help:
                    """
                    Configured wet-bulb temperature alert threshold of the location (heat stress above it), now and \
                    forecast.
                    """
            ),
            MetricFamily(
                name: Self.windChill.description,
                help: "Configured wind chill alert threshold of the location (cold below it), now and forecast."),
            MetricFamily(
                name: Self.thermalInfo.description,
                help:
                    """
                    The unit a heat or cold index alert threshold was given in (celsius or fahrenheit), by index \
                    (heat_index, wet_bulb, wind_chill), for the alerts' text; always 1.
                    """
            ),
            MetricFamily(
                name: Self.alertsEnabled.description,
                help: "1 when the location's weather alerts are on, 0 when it sets alerts=off (alerts: false)."),
        ]
    }

    func appendSeries(of shard: ShardSeries, to lines: CollectorLines) {
        let buffers = Family.allCases.map { lines[family: $0] }
        shard.withOpenings { openings in
            for position in shard.locations.indices {
                let opening = openings[position]
                func line(
                    _ family: Family, _ value: Double, source: String? = nil, bound: StaticString? = nil,
                    index: StaticString? = nil, unit: String? = nil
                ) {
                    guard let buffer = buffers[family.position] else { return }
                    buffer.append(Self.names[family.position])
                    buffer.append(opening)
                    if let source { buffer.appendLabel("source", source) }
                    if let bound { buffer.appendLabel("bound", bound.description) }
                    if let index { buffer.appendLabel("index", index.description) }
                    if let unit { buffer.appendLabel("unit", unit) }
                    buffer.appendClosing(value)
                }
                let state = shard.locations[position]
                for (slot, source) in sourceNames.enumerated() where state.slots[slot].applies {
                    line(.up, state.slots[slot].up == true ? 1 : 0, source: source)
                }
                for (slot, source) in sourceNames.enumerated() where state.slots[slot].applies {
                    if let success = state.slots[slot].lastSuccess { line(.lastSuccess, success, source: source) }
                }
                for (slot, source) in sourceNames.enumerated() where state.slots[slot].applies {
                    if let seconds = state.slots[slot].lastPollDuration { line(.duration, seconds, source: source) }
                }
                let alerts = state.thresholds
                if let above = alerts.above { line(.thresholds, above.celsius, bound: "above") }
                if let below = alerts.below { line(.thresholds, below.celsius, bound: "below") }
                if let above = alerts.above { line(.thresholdInfo, 1, bound: "above", unit: above.unit.rawValue) }
                if let below = alerts.below { line(.thresholdInfo, 1, bound: "below", unit: below.unit.rawValue) }
                // Only beside a bound in degrees (the temperature's or an index's), which is all it serves.
                if let margin = alerts.hysteresisCelsius, alerts.hasTemperatureBound { line(.hysteresis, margin) }
                if let gust = alerts.gustMetersPerSecond { line(.gust, gust) }
                if let rain = alerts.rainMeters { line(.rain, rain) }
                if let bound = alerts.heatIndex { line(.heatIndex, bound.celsius) }
                if let bound = alerts.wetBulb { line(.wetBulb, bound.celsius) }
                if let bound = alerts.windChill { line(.windChill, bound.celsius) }
                // In label order: heat_index, wet_bulb, wind_chill.
                if let bound = alerts.heatIndex {
                    line(.thermalInfo, 1, index: "heat_index", unit: bound.unit.rawValue)
                }
                if let bound = alerts.wetBulb { line(.thermalInfo, 1, index: "wet_bulb", unit: bound.unit.rawValue) }
                if let bound = alerts.windChill {
                    line(.thermalInfo, 1, index: "wind_chill", unit: bound.unit.rawValue)
                }
                line(.alertsEnabled, state.location.alerts == .off ? 0 : 1)
            }
        }
    }
}

/// The families without a location: API requests by source and code, build information, reloads.
enum ExporterCollector {
    /// Today's requests per source (every source of the layout, 0 for one that sent none) and the
    /// daily limits in force. The key's limit has a family of its own, without a `source` label: it
    /// holds all sources together, so it is matched against their sum. The four families are always
    /// there, without samples when there is nothing to say (a family without samples is not
    /// written): the renderer keeps shards' lines by family position, which must not move.
    static func daily(_ snapshot: ReadingStore.Snapshot) -> [MetricFamily] {
        let daily = snapshot.daily ?? DailyBudget(wall: 0)
        let names = Set(snapshot.layout.sourceNames).union(daily.namesSent).sorted {
            $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
        var today = MetricFamily(
            name: "openweather_api_requests_today",
            help:
                """
                Requests sent to the OpenWeather API since 00:00 UTC (OpenWeather's day starts then), by source; kept \
                across restarts by the state file.
                """
        )
        if snapshot.daily != nil {
            for name in names { today.add([("source", name)], Double(daily.count(named: name))) }
        }
        var limits = MetricFamily(
            name: "openweather_api_daily_request_limit",
            help:
                """
                Requests a source may send in a UTC day (--collector.NAME.max-requests-per-day; this replica's share); \
                absent for a source without one.
                """
        )
        for name in names { if let limit = daily.limit(named: name) { limits.add([("source", name)], Double(limit)) } }
        let key = MetricFamily(
            name: "openweather_api_key_daily_request_limit",
            help:
                """
                Requests the key may send in a UTC day, all sources together (--openweather.max-requests-per-day; this \
                replica's share); absent without one.
                """,
            samples: daily.keyLimit.map { [Sample(value: Double($0))] } ?? [])
        let withheld = MetricFamily(
            name: "openweather_api_daily_requests_withheld",
            help:
                """
                1 while the day's counts shared in --storage.path cannot be used (not a regular file): requests under \
                a daily limit wait; absent otherwise.
                """,
            samples: daily.withheld ? [Sample(value: 1)] : [])
        return [today, limits, key, withheld]
    }

    static func collect(_ snapshot: ReadingStore.Snapshot) -> [MetricFamily] {
        var requests = MetricFamily(
            name: "openweather_api_requests_total",
            help:
                """
                Requests to the OpenWeather API by source and HTTP status, or by failure without one (timeout, \
                connect, dns, tls, proxy, decode).
                """,
            type: .counter)
        for (key, count) in snapshot.requestCounts {
            requests.add([("code", key.code), ("source", key.source)], count)
        }
        // Always there (without samples until an answer lacks something), so no family appears mid-run.
        var missing = MetricFamily(
            name: "openweather_fields_missing_total",
            help: "Successful polls whose answer lacked an optional field (absent, null, of another type or out of "
                + "range), by source and field as the field policies name it (deploy/docs/metrics.md); that field's "
                + "series were left out.",
            type: .counter)
        for (key, count) in snapshot.fieldsMissing {
            missing.add([("field", key.field), ("source", key.source)], count)
        }
        var skipped = MetricFamily(
            name: "openweather_entries_skipped_total",
            help: "Entries of an answer's list (forecast steps, hours, days, minutes, alerts) skipped because a field "
                + "they need was unusable, by source and list; the other entries were used.",
            type: .counter)
        for (key, count) in snapshot.entriesSkipped {
            skipped.add([("list", key.field), ("source", key.source)], count)
        }
        let state =
            snapshot.stateWrites.map { writes in
                [
                    MetricFamily(
                        name: "openweather_exporter_state_last_write_success_timestamp_seconds",
                        help:
                            """
                            When the state file (--storage.path) was last written successfully, Unix time; 0 before \
                            the first write.
                            """,
                        samples: [Sample(value: writes.lastSuccess)]),
                    MetricFamily(
                        name: "openweather_exporter_state_write_failures_total",
                        help: "Writes of the state file (--storage.path) that failed.",
                        type: .counter, samples: [Sample(value: writes.failures)]),
                ]
            } ?? []
        // Without samples until a listener is dropped, as the families above until their first count.
        let dropped = MetricFamily(
            name: "openweather_exporter_listeners_dropped_total",
            help: "Listeners that failed for good (an inherited socket shut down by another process) and stopped "
                + "serving; the others kept serving.",
            type: .counter, samples: snapshot.listenersDropped > 0 ? [Sample(value: snapshot.listenersDropped)] : [])
        return state + [requests, missing, skipped, dropped] + daily(snapshot) + [
            MetricFamily(
                name: "openweather_exporter_build_info", help: "Version of the exporter; always 1.",
                samples: [
                    Sample(
                        [
                            ("version", BuildInfo.version), ("revision", BuildInfo.revision),
                            ("swift_version", BuildInfo.swiftVersion),
                        ], value: 1)
                ]),
            MetricFamily(
                name: "openweather_exporter_config_last_reload_successful",
                help: "1 when the last configuration reload succeeded.",
                samples: [Sample(value: snapshot.reloadSuccessful ? 1 : 0)]),
            MetricFamily(
                name: "openweather_exporter_config_last_reload_success_timestamp_seconds",
                help: "When the configuration was last loaded successfully, Unix time.",
                samples: [Sample(value: snapshot.reloadSuccessTimestamp)]),
        ]
    }
}
