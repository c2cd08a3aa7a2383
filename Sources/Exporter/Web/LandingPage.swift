import OpenWeather

/// The HTML page at `/`: what this is, which locations it polls and how they fare.
struct LandingPage: Sendable {
    let telemetryPath: String
    let demo: Bool

    func render(_ snapshot: WeatherStore.Snapshot) -> [UInt8] {
        let weather = snapshot.sources.firstIndex(of: "weather")
        var rows = ""
        for state in snapshot.locations {
            let place = state.coordinates.map { "\($0.latitude), \($0.longitude)" } ?? "not resolved yet"
            let asked = state.location.query.map { "“\($0)” → " } ?? ""
            let temperature = weather.flatMap { (state.sources[$0].reading as? CurrentWeather).map { "\($0.temperatureCelsius) °C" } } ?? "–"
            rows += "<tr><td>\(escape(state.location.name))</td><td>\(escape(asked + place))</td><td>\(escape(temperature))</td>"
            for (slot, source) in state.sources.enumerated() {
                let waits = state.coordinates == nil && Sources.named(snapshot.sources[slot])?.resolves == false
                let status = switch (source.applies, source.up) {
                case (false, _): "–"
                case (true, nil): waits ? "waiting for the place" : "pending"
                case (true, true?): "up"
                case (true, false?): "down: " + (source.lastError ?? "")
                }
                rows += "<td>\(escape(status))</td>"
            }
            rows += "</tr>\n"
        }
        let columns = snapshot.sources.map { "<th>\(escape($0))</th>" }.joined()
        let intervals = zip(snapshot.sources, snapshot.intervals).map { "\($0) every \(PrometheusDuration.format($1))" }
        let banner = demo
            ? "<p class=\"demo\"><strong>Demo mode:</strong> the weather below is simulated by a built-in server, not real data.</p>\n"
            : ""
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>OpenWeather Exporter</title>
            <style>body{font-family:sans-serif;max-width:50em;margin:2em auto}td,th{padding:.2em .8em;text-align:left}.demo{background:#fff3cd;padding:.5em}</style>
            </head><body>
            <h1>OpenWeather Exporter</h1>
            <p>Version \(escape(BuildInfo.version)). Polls \(escape(intervals.joined(separator: ", "))).</p>
            \(banner)<p><a href="\(escape(telemetryPath))">Metrics</a> · <a href="/-/healthy">Health</a> · <a href="/-/ready">Readiness</a></p>
            <table><tr><th>Location</th><th>Coordinates</th><th>Temperature</th>\(columns)</tr>
            \(rows)</table>
            </body></html>

            """
        return Array(page.utf8)
    }

    private func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
