/// The command-line flags: one table feeds the parser, the environment
/// mapping, the config-file keys and `--help`.
struct Flag: Sendable {
    enum Kind: Sendable { case value, repeatable, boolean }

    let name: String
    let kind: Kind
    let placeholder: String
    let help: String
    /// Shown in --help; "" for none.
    let defaultText: String

    /// `OPENWEATHER_EXPORTER_POLL_INTERVAL` for `poll.interval`.
    var environmentName: String {
        "OPENWEATHER_EXPORTER_" + String(name.map { $0 == "." || $0 == "-" ? "_" : Character($0.uppercased()) })
    }

    /// `poll.interval` → `poll.interval`; `web.listen-address` → `web.listenAddress`.
    var fileKey: String {
        var out = ""
        var upper = false
        for character in name {
            if character == "-" { upper = true; continue }
            out.append(upper ? Character(character.uppercased()) : character)
            upper = false
        }
        return out
    }

    static let all: [Flag] = [
        Flag(name: "web.listen-address", kind: .value, placeholder: "ADDRESS",
             help: "Address to listen on: :9755, 127.0.0.1:9755, [::]:9755.", defaultText: ":9755"),
        Flag(name: "web.telemetry-path", kind: .value, placeholder: "PATH",
             help: "Path under which to expose metrics.", defaultText: "/metrics"),
        Flag(name: "web.max-connections", kind: .value, placeholder: "N",
             help: "Open connections at most; beyond it the longest-idle one is closed.", defaultText: "4096"),
        Flag(name: "web.read-timeout", kind: .value, placeholder: "DURATION",
             help: "Time a client has to send a whole request.", defaultText: "10s"),
        Flag(name: "web.idle-timeout", kind: .value, placeholder: "DURATION",
             help: "Time a keep-alive connection may wait between requests.", defaultText: "60s"),
        Flag(name: "web.config.file", kind: .value, placeholder: "PATH",
             help: "Exporter-toolkit web config (YAML) for TLS, basic auth and response headers.", defaultText: ""),
        Flag(name: "web.enable-lifecycle", kind: .boolean, placeholder: "",
             help: "Allow reloading through POST /-/reload (SIGHUP always works).", defaultText: ""),
        Flag(name: "config.file", kind: .value, placeholder: "PATH",
             help: "JSON config file; flags win over it. Re-read on SIGHUP and POST /-/reload.", defaultText: ""),
        Flag(name: "location", kind: .repeatable, placeholder: "PLACE[,above=C][,below=C][,alerts=off]",
             help: "A place to poll (repeatable): NAME=LAT,LON, NAME=CITY[,STATE][,COUNTRY], NAME=zip:CODE,COUNTRY or a bare CITY[,STATE][,COUNTRY]; optional alert thresholds in °C.",
             defaultText: ""),
        Flag(name: "alerts.temperature-above-celsius", kind: .value, placeholder: "C",
             help: "Default upper temperature threshold for locations that set none.", defaultText: ""),
        Flag(name: "alerts.temperature-below-celsius", kind: .value, placeholder: "C",
             help: "Default lower temperature threshold for locations that set none.", defaultText: ""),
        Flag(name: "openweather.api-key-file", kind: .value, placeholder: "PATH",
             help: "File holding the API key (else $OPENWEATHER_API_KEY).", defaultText: ""),
        Flag(name: "openweather.url", kind: .value, placeholder: "URL",
             help: "Base URL of the OpenWeather API or a proxy.", defaultText: "https://api.openweathermap.org"),
        Flag(name: "openweather.proxy-url", kind: .value, placeholder: "URL",
             help: "Proxy for API requests, http://[user:password@]host:port; wins over HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY.",
             defaultText: "from the environment"),
        Flag(name: "openweather.tls-ca-file", kind: .value, placeholder: "PATH",
             help: "PEM file of CA certificates trusted besides the system bundle (a proxy that re-signs TLS, a private API gateway).",
             defaultText: ""),
        Flag(name: "openweather.max-idle-connections", kind: .value, placeholder: "N",
             help: "Keep-alive connections to the API kept open between requests; 0: a new connection and TLS handshake per request.", defaultText: "16"),
        Flag(name: "openweather.timeout", kind: .value, placeholder: "DURATION",
             help: "Deadline of one API request.", defaultText: "10s"),
        Flag(name: "openweather.language", kind: .value, placeholder: "CODE",
             help: "Language of the condition description (en, es, de, zh_cn...).", defaultText: "en"),
        Flag(name: "openweather.max-requests-per-minute", kind: .value, placeholder: "N",
             help: "Request budget of your plan; the poll interval stretches to fit it.", defaultText: "60"),
        Flag(name: "openweather.max-staleness", kind: .value, placeholder: "Nx|DURATION",
             help: "Drop a source's series of a location after this long without success: N intervals of that source, or a duration.",
             defaultText: "3x"),
        Flag(name: "poll.interval", kind: .value, placeholder: "DURATION",
             help: "Old name of --collector.weather.interval.", defaultText: ""),
        Flag(name: "log.level", kind: .value, placeholder: "LEVEL",
             help: "debug, info, warn or error.", defaultText: "info"),
        Flag(name: "log.format", kind: .value, placeholder: "FORMAT",
             help: "logfmt or json.", defaultText: "logfmt"),
        Flag(name: "storage.path", kind: .value, placeholder: "DIR",
             help: "Directory for the state file (readings, resolved places, schedule, 429 pause), so a restart resumes where it was.",
             defaultText: "none: state is not kept"),
        Flag(name: "demo", kind: .boolean, placeholder: "",
             help: "Serve simulated weather from a built-in server: no key, no network.", defaultText: ""),
        Flag(name: "total-shards", kind: .value, placeholder: "N",
             help: "Split the locations among N replicas by a stable hash of their names; each polls and serves its own and gets 1/N of the request budget.",
             defaultText: "1, no sharding"),
        Flag(name: "shard", kind: .value, placeholder: "I",
             help: "This replica's shard, 0 to N-1 (see --total-shards).", defaultText: "0"),
        Flag(name: "pod", kind: .value, placeholder: "NAME",
             help: "Take --shard from a StatefulSet pod name's ordinal (NAME-2 is shard 2), e.g. --pod=$(POD_NAME).",
             defaultText: ""),
    ] + Sources.all.filter { !$0.resolves }.flatMap { source in
        [
            Flag(name: "collector.\(source.name)", kind: .boolean, placeholder: "",
                 help: "\(source.summary) Off: --no-collector.\(source.name).",
                 defaultText: (source.enabledByDefault ? "enabled" : "disabled") + (source.enabledByDefault || !source.standsIn.isEmpty ? "" : "; enabled with --demo")),
            Flag(name: "collector.\(source.name).interval", kind: .value, placeholder: "DURATION",
                 help: "How often each location is polled from \(source.name); stretched to fit the request budget.",
                 defaultText: PrometheusDuration.format(source.defaultInterval)
                    + (source.demoInterval == source.defaultInterval ? "" : " (\(PrometheusDuration.format(source.demoInterval)) with --demo)")),
        ]
    } + [
        Flag(name: "collector.forecast.horizons", kind: .value, placeholder: "DURATIONS",
             help: "Times ahead at which the forecast is shown (hours_ahead label), comma-separated, at most 120h.",
             defaultText: ForecastSource.defaultHorizons.map(ForecastSource.windowLabel).joined(separator: ",")),
        Flag(name: "collector.forecast.windows", kind: .value, placeholder: "DURATIONS",
             help: "Spans from now over which the forecast's extremes and totals are shown (window label), comma-separated, at most 120h.",
             defaultText: ForecastSource.defaultWindows.map(ForecastSource.windowLabel).joined(separator: ",")),
        Flag(name: "help", kind: .boolean, placeholder: "", help: "Show this help and exit.", defaultText: ""),
        Flag(name: "version", kind: .boolean, placeholder: "", help: "Show the version and exit.", defaultText: ""),
    ]

    static func named(_ name: String) -> Flag? { all.first { $0.name == name } }

    static var helpText: String {
        var lines = [
            "usage: openweather-exporter [flags]",
            "",
            "Prometheus exporter for OpenWeather: current weather, air quality, places by name.",
            "",
            "Flags:",
        ]
        for flag in all {
            let form = flag.kind == .boolean ? "--\(flag.name)" : "--\(flag.name)=\(flag.placeholder)"
            let defaultNote = flag.defaultText.isEmpty ? "" : " (default: \(flag.defaultText))"
            lines.append("  \(form)")
            lines.append("      \(flag.help)\(defaultNote)")
        }
        lines += [
            "",
            "Environment:",
            "  OPENWEATHER_API_KEY          the API key (or use --openweather.api-key-file)",
            "  OPENWEATHER_EXPORTER_<FLAG>  any flag, e.g. OPENWEATHER_EXPORTER_COLLECTOR_WEATHER_INTERVAL=5m;",
            "                               OPENWEATHER_EXPORTER_LOCATION takes locations separated by ';'",
            "",
            "Try it without a key:  openweather-exporter --demo",
        ]
        return lines.joined(separator: "\n")
    }
}
