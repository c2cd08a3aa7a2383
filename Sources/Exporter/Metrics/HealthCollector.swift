import Exposition

/// The exporter's own health: per-location poll results, API request counts,
/// configured alert thresholds, reloads and build information.
struct HealthCollector: Collector {
    func collect(_ snapshot: WeatherStore.Snapshot, now: Double, into families: inout [MetricFamily]) {
        var up = MetricFamily(name: "openweather_up", help: "1 when the last poll of the location succeeded, else 0.")
        var lastSuccess = MetricFamily(
            name: "openweather_last_success_timestamp_seconds", help: "When the location was last polled successfully, Unix time.")
        var duration = MetricFamily(name: "openweather_poll_duration_seconds", help: "How long the last poll of the location took.")
        var thresholds = MetricFamily(
            name: "openweather_temperature_alert_threshold_celsius",
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
}
