/// The HTML page at `/`: what this is, which locations it polls and how they fare.
struct LandingPage: Sendable {
    let telemetryPath: String
    let demo: Bool
    let interval: Duration

    func render(_ snapshot: WeatherStore.Snapshot) -> [UInt8] {
        var rows = ""
        for state in snapshot.locations {
            let status = switch state.up {
            case nil: "pending"
            case true?: "up"
            case false?: "down: " + (state.lastError ?? "")
            }
            let temperature = state.reading.map { "\($0.temperatureCelsius) °C" } ?? "–"
            rows += "<tr><td>\(escape(state.location.name))</td><td>\(state.location.latitude), \(state.location.longitude)</td>"
                + "<td>\(escape(temperature))</td><td>\(escape(status))</td></tr>\n"
        }
        let banner = demo
            ? "<p class=\"demo\"><strong>Demo mode:</strong> the weather below is simulated by a built-in server, not real data.</p>\n"
            : ""
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>OpenWeather Exporter</title>
            <style>body{font-family:sans-serif;max-width:50em;margin:2em auto}td,th{padding:.2em .8em;text-align:left}.demo{background:#fff3cd;padding:.5em}</style>
            </head><body>
            <h1>OpenWeather Exporter</h1>
            <p>Version \(escape(BuildInfo.version)). Polls every \(PrometheusDuration.format(interval)).</p>
            \(banner)<p><a href="\(escape(telemetryPath))">Metrics</a> · <a href="/-/healthy">Health</a> · <a href="/-/ready">Readiness</a></p>
            <table><tr><th>Location</th><th>Coordinates</th><th>Temperature</th><th>Status</th></tr>
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
