import OpenWeather

/// The HTML page at `/`: what this is, which locations it polls and how they fare.
struct LandingPage: Sendable {
    let telemetryPath: String
    let demo: Bool
    /// The demo's simulator (`http://127.0.0.1:PORT`), whose controls the page shows; nil outside the demo.
    var simulator: String? = nil
    /// Where the server listens, once it does.
    var listening: @Sendable () -> [String] = { [] }

    func render(_ snapshot: ReadingStore.Snapshot) -> [UInt8] {
        var reasons = Reasons()
        let fallbacks = fallbacks(snapshot, &reasons)
        let rows = snapshot.locations.map { row($0, snapshot, &reasons) }.joined()
        let off = snapshot.locations.filter { $0.location.alerts == .off }.map(\.location.name)
        let alertsOff =
            off.isEmpty
            ? ""
            : """
            <p>Weather alerts are off (<code>alerts=off</code>) for \(escape(off.joined(separator: ", "))): no \
            weather alert fires there.</p>\n
            """
        // A source's name may break after an underscore: air_pollution_forecast alone is wider than a phone's column.
        let columns = snapshot.layout.sourceNames.map { "<th>\(escape($0).replacing("_", with: "_<wbr>"))</th>" }
            .joined()
        let intervals = zip(snapshot.layout.sourceNames, snapshot.layout.intervals).map {
            "\($0) every \(PrometheusDuration.format($1))"
        }
        let addresses = listening()
        let listens = addresses.isEmpty ? "" : " Listens on \(escape(addresses.joined(separator: ", ")))."
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>OpenWeather Exporter</title>
            <style>\(Self.style(columns: Self.headings + snapshot.layout.sourceNames))</style>
            </head><body>
            <h1>OpenWeather Exporter</h1>
            <p>Version \(escape(BuildInfo.version)). Polls \(escape(intervals.joined(separator: ", "))). \(listens)</p>
            \(banner)<p><a href="\(escape(telemetryPath))">Metrics</a> · <a href="/-/healthy">Health</a> · \
            <a href="/-/ready">Readiness</a></p>
            \(fallbacks)\(alertsOff)<table>\
            <tr>\(Self.headings.map { "<th>\($0)</th>" }.joined())\(columns)</tr>
            \(rows)</table>
            \(reasons.list(escape))
            </body></html>

            """
        return Array(page.utf8)
    }

    /// A reason is often the same for every location (a key without a subscription: ~400 characters):
    /// each is written once, below the table, and the cells point to it.
    private struct Reasons {
        private var reasons: [String] = []

        /// The reason's number in the list, added when new.
        mutating func note(_ reason: String) -> Int {
            if let known = reasons.firstIndex(of: reason) { return known + 1 }
            reasons.append(reason)
            return reasons.count
        }

        func list(_ escape: (String) -> String) -> String {
            reasons.isEmpty
                ? ""
                : "<ol class=\"reasons\">\n"
                    + reasons.enumerated().map { "<li id=\"reason-\($0.offset + 1)\">\(escape($0.element))</li>\n" }
                    .joined() + "</ol>\n"
        }
    }

    /// A note per source this key cannot use: why, what is polled instead, and when it is tried again.
    private func fallbacks(_ snapshot: ReadingStore.Snapshot, _ reasons: inout Reasons) -> String {
        var fallbacks = ""
        for (source, reason) in zip(snapshot.layout.sources, snapshot.unavailable) {
            guard let reason else { continue }
            let name = source.name
            let replaced = source.standsIn.filter(snapshot.layout.sourceNames.contains).joined(separator: " and ")
            let instead =
                replaced.isEmpty ? "" : "\(escape(replaced)) are polled from their own free endpoints instead; "
            fallbacks += """
                <p class="note"><strong>\(escape(name)) cannot be used with this key</strong> \
                (\(link(reasons.note(reason)))): \(instead)\(escape(name)) is tried again every \
                \(escape(PrometheusDuration.format(Sources.unavailableRetry))).</p>\n
                """
        }
        return fallbacks
    }

    /// A location's row: where it is, its temperature and thresholds, then each source's status.
    private func row(
        _ state: ReadingStore.LocationState, _ snapshot: ReadingStore.Snapshot, _ reasons: inout Reasons
    ) -> String {
        let place = state.coordinates.map { "\($0.latitude), \($0.longitude)" } ?? "not resolved yet"
        let asked = state.location.query.map { "“\($0)” → " } ?? ""
        // The first source in slot order that has something to say at a glance (the weather's temperature).
        let glances = zip(snapshot.layout.sources, state.slots).lazy.compactMap { source, slotState in
            slotState.reading.flatMap(source.glance(atStored:))
        }
        let temperature = glances.first(where: { _ in true }) ?? "–"
        let alerts = state.thresholds.summary(off: state.location.alerts == .off)
        var row = """
            <tr><td>\(escape(state.location.name))</td><td>\(escape(asked + place))</td>\
            <td>\(escape(temperature))</td><td>\(escape(alerts))</td>
            """
        for (slot, slotState) in state.slots.enumerated() {
            let waits =
                state.coordinates == nil && Sources.named(snapshot.layout.sourceNames[slot])?.resolves == false
            let status =
                switch (slotState.applies, slotState.up) {
                case (false, _): "–"
                case (true, nil): escape(waits ? "waiting for the place" : "pending")
                case (true, true?): "up"
                case (true, false?): slotState.lastError.map { "down " + link(reasons.note($0)) } ?? "down"
                }
            row += "<td>\(status)</td>"
        }
        return row + "</tr>\n"
    }

    /// The demo's notice that the weather is simulated, with the simulator's controls once it runs.
    private var banner: String {
        guard demo else { return "" }
        let notice = """
            <p class="demo"><strong>Demo mode:</strong> the weather below is simulated by a built-in server, not \
            real data.</p>\n
            """
        return notice + (simulator.map { Self.simulatorControls(escape($0)) } ?? "")
    }

    /// The table's first columns; a source's status follows each.
    private static let headings = ["Location", "Coordinates", "Temperature", "Alert thresholds"]

    /// One text column, wide on a desktop and a phone alike: the commands wrap rather than run past
    /// their box, and below 40em each row of the table is a block of its cells, each after its heading.
    private static func style(columns: [String]) -> String {
        let labels = columns.enumerated().map {
            #"td:nth-child(\#($0.offset + 1))::before{content:"\#($0.element): "}"#
        }
        return """
            body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}\
            table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left;vertical-align:top}\
            .demo,.note{background:#fff3cd;padding:.5em}pre.demo{white-space:pre-wrap;overflow-wrap:anywhere}\
            .reasons{overflow-wrap:anywhere}\
            @media (max-width:40em){table,tbody,tr,td{display:block}tr:first-child{display:none}\
            tr{padding:.4em 0;border-top:1px solid #ccc}td{padding:.1em 0}td::before{font-weight:bold}\
            \(labels.joined())}
            """
    }

    /// The simulator's address and how to steer it; its full list is at `/_simulator/`, and in
    /// deploy/docs/operations.md ("The demo's simulator").
    private static func simulatorControls(_ base: String) -> String {
        """
        <p class="demo">The simulated API listens on <a href="\(base)/_simulator/">\(base)</a>; steer it to see alerts \
        (<code>lat=</code> picks a place by its latitude, to 0.01°; \
        the <a href="\(base)/_simulator/">full list of controls</a>). \
        Shifts add up: +35 then −35 is London as it was.</p>
        <pre class="demo">
        # London 35 °C hotter, now and forecast
        curl -X POST '\(base)/_simulator/weather?lat=51.51&amp;shift=35'
        # ... 35 °C colder than that
        curl -X POST '\(base)/_simulator/weather?lat=51.51&amp;shift=-35'
        # London's shifts cleared (no lat=: every place's)
        curl -X DELETE '\(base)/_simulator/weather?lat=51.51'
        # London's requests fail
        curl -X POST '\(base)/_simulator/fault?lat=51.51&amp;status=500'
        # every fault cleared
        curl -X DELETE '\(base)/_simulator/fault'
        </pre>

        """
    }

    /// `[2]`, pointing to the second reason below the table.
    private func link(_ number: Int) -> String { "<a href=\"#reason-\(number)\">[\(number)]</a>" }

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
