import Exposition

/// The exporter's own health: per-location poll results, API request counts,
/// configured alert thresholds, reloads and build information.
struct HealthCollector: Collector {
    func collect(_ snapshot: WeatherStore.Snapshot, now: Double, into families: inout [MetricFamily]) {
        var up = MetricFamily(name: Self.up, help: "1 when the last poll of the location succeeded, else 0.")
        var lastSuccess = MetricFamily(
            name: Self.lastSuccess, help: "When the location was last polled successfully, Unix time.")
        var duration = MetricFamily(name: Self.duration, help: "How long the last poll of the location took.")
        var thresholds = MetricFamily(
            name: Self.thresholds,
            help: "Configured temperature alert threshold of the location; bound is above or below.")
        for state in snapshot.locations {
            let location = [(name: "location", value: state.location.name)]
            up.add(location, state.up == true ? 1 : 0)
            if let success = state.lastSuccess { lastSuccess.add(location, success) }
            if let seconds = state.lastPollDuration { duration.add(location, seconds) }
            if let above = state.thresholds.aboveCelsius { thresholds.add(location + [("bound", "above")], above) }
            if let below = state.thresholds.belowCelsius { thresholds.add(location + [("bound", "below")], below) }
        }
        var requests = MetricFamily(
            name: "openweather_api_requests_total",
            help: "Requests to the OpenWeather API by HTTP status, or by failure without one (timeout, connect, dns, tls, decode).",
            type: .counter)
        for (code, count) in snapshot.requestCounts { requests.add([("code", code)], count) }
        families += [up, lastSuccess, duration, thresholds, requests]
        families.append(MetricFamily(
            name: "openweather_exporter_build_info", help: "Version of the exporter; always 1.",
            samples: [Sample([("version", BuildInfo.version), ("revision", BuildInfo.revision), ("swift_version", BuildInfo.swiftVersion)], value: 1)]))
        families.append(MetricFamily(
            name: "openweather_exporter_config_last_reload_successful", help: "1 when the last configuration reload succeeded.",
            samples: [Sample(value: snapshot.reloadSuccessful ? 1 : 0)]))
        families.append(MetricFamily(
            name: "openweather_exporter_config_last_reload_success_timestamp_seconds",
            help: "When the configuration was last loaded successfully, Unix time.",
            samples: [Sample(value: snapshot.reloadSuccessTimestamp)]))
    }

    private static let up = "openweather_up"
    private static let lastSuccess = "openweather_last_success_timestamp_seconds"
    private static let duration = "openweather_poll_duration_seconds"
    private static let thresholds = "openweather_temperature_alert_threshold_celsius"
    private static let names = [up, lastSuccess, duration, thresholds].map { Array($0.utf8) }

    /// The per-location lines `collect` gives, written straight from the states.
    func appendSeries(of shard: ShardSeries, now: Double, to lines: inout FamilyLines) {
        let targets = [Self.up, Self.lastSuccess, Self.duration, Self.thresholds].map { lines.index[$0].map { lines.buffers[$0] } }
        shard.withOpenings { openings in
            for position in shard.locations.indices {
                let state = (up: shard.locations[position].up, lastSuccess: shard.locations[position].lastSuccess,
                             duration: shard.locations[position].lastPollDuration, thresholds: shard.locations[position].thresholds)
                let opening = openings[position]
                func line(_ family: Int, _ value: Double, bound: StaticString? = nil) {
                    guard let buffer = targets[family] else { return }
                    Self.names[family].withUnsafeBufferPointer { buffer.append($0) }
                    buffer.append(opening)
                    if let bound { buffer.appendLabel("bound", bound.description) }
                    buffer.appendClosing(value)
                }
                line(0, state.up == true ? 1 : 0)
                if let success = state.lastSuccess { line(1, success) }
                if let seconds = state.duration { line(2, seconds) }
                if let above = state.thresholds.aboveCelsius { line(3, above, bound: "above") }
                if let below = state.thresholds.belowCelsius { line(3, below, bound: "below") }
            }
        }
    }
}
