/// A setting as the flag parser, the environment mapping, the config-file reader and `--help` see it,
/// whatever its type; built by `Setting` (Setting.swift) from the table (Settings.swift), where each setting's
/// name, default and doc live.
struct Flag: Sendable {
    /// `.list` is a value that the file may also give as a YAML sequence (`[3h, 6h]`); `.repeated` is a
    /// list that the command line also gives by repeating the flag (the values joined with commas, as the
    /// variable takes them). `.repeatable` is the locations' own list (`RawSettings.locations`).
    enum Kind: Sendable { case value, list, repeated, repeatable, boolean }

    let name: String
    let kind: Kind
    let placeholder: String
    let help: String
    /// Shown in --help; "" for none.
    let defaultText: String
    /// The path in the config file, `web.listen_address`; nil: only a flag can set it.
    var key: String? = nil
    /// Set on a former name: the flag it is now (its value is read as that one's, with a warning).
    var renamedTo: String? = nil
    /// Its heading in `--help`; nil for the one its name's namespace gives (`Group.of`).
    var group: Group? = nil

    /// The headings of `--help`, in the order shown: what a newcomer needs first, then by namespace.
    enum Group: CaseIterable, Sendable {
        case startHere, alerts, collectors, api, web, loggingAndState, sharding, other, formerNames

        var heading: String {
            switch self {
            case .startHere: "Start here"
            case .alerts:
                "Alert thresholds (per place: --location ...,above=TEMP,below=TEMP,gust=M/S,rain=MM,alerts=off)"
            case .collectors: "Collectors: what is polled, and how often"
            case .api: "OpenWeather API: key, budget, network"
            case .web: "Web server"
            case .loggingAndState: "Logging and state"
            case .sharding: "Sharding (one place list split among replicas)"
            case .other: "Other"
            case .formerNames: "Former names (still read, with a warning)"
            }
        }

        /// A flag's group from its namespace: `web.read-timeout` is the web server's.
        static func of(_ name: String) -> Group {
            switch name.split(separator: ".").first.map(String.init) ?? name {
            case "web": .web
            case "alerts": .alerts
            case "collector": .collectors
            case "openweather": .api
            case "log", "storage": .loggingAndState
            case "total-shards", "shard", "pod": .sharding
            default: .other
            }
        }
    }

    /// Where `--help` lists it.
    var helpGroup: Group { renamedTo != nil ? .formerNames : group ?? .of(name) }

    /// `name`, the former name of `current`: read as it in flags, the environment and the config file
    /// (under `key`), listed last in `--help`, never offered as a spelling suggestion.
    static func formerName(_ name: String, key: String, of current: Flag) -> Flag {
        Flag(
            name: name, kind: current.kind, placeholder: current.placeholder,
            help: "Deprecated: the old name of --\(current.name).",
            defaultText: "", key: key, renamedTo: current.name)
    }

    /// `OPENWEATHER_EXPORTER_POLL_INTERVAL` for `poll.interval`.
    var environmentName: String {
        "OPENWEATHER_EXPORTER_" + String(name.map { $0 == "." || $0 == "-" ? "_" : Character($0.uppercased()) })
    }

    /// The start-here flags first, then the web server, the alert defaults, the API, each collector with
    /// its own settings (in `source` label order), logging and state, sharding; former names last.
    /// `--help` shows them by `helpGroup`, in this order within each.
    static let all: [Flag] = {
        let flags = current + Sources.all.flatMap(\.settingFlags).filter { $0.renamedTo != nil }
        return flags.filter { $0.renamedTo == nil } + flags.filter { $0.renamedTo != nil }
    }()

    private static let current: [Flag] =
        [
            Settings.demo.flag, Settings.location, Settings.configFile.flag, Settings.listenAddress.flag,
            Settings.systemdSocket.flag, Settings.telemetryPath.flag, Settings.maxConnections.flag,
            Settings.readTimeout.flag,
            Settings.idleTimeout.flag, Settings.webConfigFile.flag, Settings.enableLifecycle.flag,
            Settings.temperatureAbove.flag,
            Settings.temperatureBelow.flag, Settings.hysteresis.flag, Settings.gust.flag, Settings.rain.flag,
            Settings.heatIndexAbove.flag, Settings.wetBulbAbove.flag, Settings.windChillBelow.flag,
            Settings.apiKeyFile.flag,
            Settings.url.flag, Settings.proxyURL.flag, Settings.tlsCAFile.flag, Settings.maxIdleConnections.flag,
            Settings.timeout.flag,
            Settings.language.flag, Settings.maxRequestsPerMinute.flag, Settings.maxRequestsPerDay.flag,
            Settings.maxStaleness.flag,
        ]
        + Sources.all.filter { !$0.resolves }.flatMap { source in
            [Settings.collector(source).flag, Settings.collectorInterval(source).flag]
                + source.settingFlags.filter { $0.renamedTo == nil }
        } + [
            Settings.logLevel.flag, Settings.logFormat.flag, Settings.storagePath.flag, Settings.totalShards.flag,
            Settings.shard.flag, Settings.pod.flag, Settings.configCheck.flag, Settings.help.flag,
            Settings.version.flag,
        ]

    static func named(_ name: String) -> Flag? { all.first { $0.name == name } }

    static var helpText: String {
        var lines = ["usage: openweather-exporter [flags]"]
        for subcommand in Subcommand.all {
            let usage = "openweather-exporter \(subcommand.name) \(subcommand.usage)"
            lines.append("       \(usage)   (\(subcommand.purpose); \(subcommand.name) --help)")
        }
        lines += [
            "",
            "Prometheus exporter for OpenWeather: current weather, forecast, air quality, One Call, places by name.",
        ]
        for group in Group.allCases {
            let flags = all.filter { $0.helpGroup == group }
            guard !flags.isEmpty else { continue }
            lines += ["", "\(group.heading):"]
            for flag in flags {
                let form = flag.kind == .boolean ? "--\(flag.name)" : "--\(flag.name)=\(flag.placeholder)"
                let defaultNote = flag.defaultText.isEmpty ? "" : " (default: \(flag.defaultText))"
                lines.append("  \(form)")
                lines.append("      \(flag.help)\(defaultNote)")
            }
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
