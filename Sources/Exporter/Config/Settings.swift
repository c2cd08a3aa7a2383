import HTTPClient

/// The table of settings. A key is the setting's path in the config file (`web.listen_address` is
/// `listen_address` under `web`); nil for what only a flag can say (the file cannot name itself, a
/// replica's shard is the replica's, not the file's).
enum Settings {
    static let listenAddress = Setting<[ListenAddress]>(
        "web.listen-address", key: "web.listen_address", kind: .repeated, placeholder: "ADDRESS",
        doc:
            """
            Address to listen on: :9755, 127.0.0.1:9755, [::]:9755. Repeatable: the same server on each (the file: a \
            list; the variable: addresses separated by commas).
            """,
        default: [ListenAddress(host: "", port: 9755)], shown: ":9755", group: .startHere
    ) { entry throws(ConfigError) in try ListenAddress.parseList(entry.text, origin: entry.origin) }

    static let systemdSocket = Setting<Bool>.boolean(
        "web.systemd-socket", key: "web.systemd_socket",
        doc:
            """
            Serve on the sockets systemd hands over (socket activation: $LISTEN_FDS for this $LISTEN_PID) instead of \
            --web.listen-address.
            """
    )

    static let telemetryPath = Setting<String>.text(
        "web.telemetry-path", key: "web.telemetry_path", placeholder: "PATH",
        doc: "Path under which to expose metrics.", default: "/metrics"
    ) { entry throws(ConfigError) in
        guard entry.text.hasPrefix("/"), !entry.text.hasPrefix("/-/"), entry.text != "/", !entry.text.contains(" ")
        else {
            throw ConfigError(
                """
                \(entry.origin) "\(entry.text)" is not a usable path: start it with / (for example /metrics); / and \
                /-/... are taken
                """
            )
        }
    }

    static let maxConnections = Setting<Int>.integer(
        "web.max-connections", key: "web.max_connections",
        doc: "Open connections at most; beyond it the longest-idle one is closed.", default: 4096, in: 1...1_000_000)

    static let readTimeout = Setting<Duration>.duration(
        "web.read-timeout", key: "web.read_timeout", doc: "Time a client has to send a whole request.",
        default: .seconds(10), minimum: .milliseconds(100))

    static let idleTimeout = Setting<Duration>.duration(
        "web.idle-timeout", key: "web.idle_timeout", doc: "Time a keep-alive connection may wait between requests.",
        default: .seconds(60), minimum: .milliseconds(100))

    static let webConfigFile = Setting<String?>(
        "web.config.file", key: "web.config_file", placeholder: "PATH",
        doc: "Exporter-toolkit web config (YAML) for TLS, basic auth and response headers.", default: nil, shown: ""
    ) { entry throws(ConfigError) in entry.text.isEmpty ? nil : entry.text }

    static let enableLifecycle = Setting<Bool>.boolean(
        "web.enable-lifecycle", key: "web.enable_lifecycle",
        doc: "Allow reloading through POST /-/reload (SIGHUP always works).")

    static let configFile = Setting<String?>.optional(
        "config.file", key: nil, placeholder: "PATH",
        doc: "YAML config file (JSON works too); flags win over it. Re-read on SIGHUP and POST /-/reload.",
        group: .startHere)

    /// Locations are a list: read by `LocationSpec` from a flag, or as structured items from the file's `locations`.
    static let location = Flag(
        name: "location", kind: .repeatable,
        placeholder:
            """
            PLACE[,above=TEMP][,below=TEMP][,hysteresis=C][,gust=M/S][,rain=MM][,heat_index=TEMP][,wet_bulb=TEMP]\
            [,wind_chill=TEMP][,alerts=off]
            """,
        help:
            """
            A place to poll (repeatable): NAME=LAT,LON, NAME=CITY[,STATE][,COUNTRY], NAME=zip:CODE,COUNTRY or a bare \
            CITY[,STATE][,COUNTRY]; optional alert thresholds (TEMP: 35 or 35C in °C, 95F in °F).
            """,
        defaultText: "", key: "locations", group: .startHere)

    static let apiKeyFile = Setting<String?>.optional(
        "openweather.api-key-file", key: "openweather.api_key_file", placeholder: "PATH",
        doc: "File holding the API key (else $OPENWEATHER_API_KEY).")

    static let url = Setting<String>.text(
        "openweather.url", key: "openweather.url", placeholder: "URL",
        doc:
            """
            Base URL of the OpenWeather API, or of a gateway serving the same paths (an HTTP proxy goes in \
            --openweather.proxy-url).
            """,
        default: "https://api.openweathermap.org"
    ) { entry throws(ConfigError) in
        guard entry.text.hasPrefix("http://") || entry.text.hasPrefix("https://"), !entry.text.contains("?") else {
            throw ConfigError(
                """
                \(entry.origin) "\(entry.text)" is not a base URL: give scheme and host, like \
                https://api.openweathermap.org
                """
            )
        }
        // What a request can use is the client's to say; checked here so the message names where the URL came from.
        do throws(HTTPClientError) {
            _ = try RequestURL(parsing: entry.text)
        } catch {
            throw ConfigError(
                """
                \(entry.origin) is not a usable base URL (\(error.description)): give scheme and host, like \
                https://api.openweathermap.org
                """
            )
        }
    }

    static let proxyURL = Setting<String?>.optional(
        "openweather.proxy-url", key: "openweather.proxy_url", placeholder: "URL",
        doc:
            """
            Proxy for API requests, http://[user:password@]host:port; wins over HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and \
            NO_PROXY.
            """,
        shown: "from the environment")

    static let tlsCAFile = Setting<String?>.optional(
        "openweather.tls-ca-file", key: "openweather.tls_ca_file", placeholder: "PATH",
        doc:
            """
            PEM file of CA certificates trusted besides the system bundle (a proxy that re-signs TLS, a private API \
            gateway).
            """
    )

    static let maxIdleConnections = Setting<Int>.integer(
        "openweather.max-idle-connections", key: "openweather.max_idle_connections",
        doc:
            """
            Keep-alive connections to the API kept open between requests; 0: a new connection and TLS handshake per \
            request.
            """,
        default: 16, in: 0...1024)

    static let timeout = Setting<Duration>.duration(
        "openweather.timeout", key: "openweather.timeout", doc: "Deadline of one API request.", default: .seconds(10),
        minimum: .milliseconds(100))

    static let language = Setting<String>.text(
        "openweather.language", key: "openweather.language", placeholder: "CODE",
        doc: "Language of the condition description (en, es, de, zh_cn...).", default: "en"
    ) { entry throws(ConfigError) in
        guard !entry.text.isEmpty, entry.text.count <= 10,
            entry.text.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "_" || $0 == "-") })
        else {
            throw ConfigError(
                "\(entry.origin) \"\(entry.text)\" is not a language code: use one like en, es, de or zh_cn")
        }
    }

    static let maxRequestsPerMinute = Setting<Int>.integer(
        "openweather.max-requests-per-minute", key: "openweather.max_requests_per_minute",
        doc: "Request budget of your plan; the poll interval stretches to fit it.", default: 60, in: 1...1_000_000,
        shown: "60 (\(demoMaxRequestsPerMinute) with --demo)")

    /// The demo's own simulator is not OpenWeather and bills nothing: its default budget is far above
    /// anything the demo asks, so neither the demo's first round nor a `backfill --demo` is paced
    /// against itself. A budget given explicitly still holds there.
    static let demoMaxRequestsPerMinute = 6000

    static let maxRequestsPerDay = Setting<Int>.integer(
        "openweather.max-requests-per-day", key: "openweather.max_requests_per_day",
        doc:
            """
            Requests a UTC day for the key as a whole (every source together); the intervals stretch to fit, and \
            polling pauses until 00:00 UTC when they are spent. 0 for no limit.
            """,
        default: 0, in: 0...1_000_000_000, shown: "0: no limit")

    static let maxStaleness = Setting<Staleness>(
        "openweather.max-staleness", key: "openweather.max_staleness", placeholder: "Nx|DURATION",
        doc:
            """
            Drop a source's series of a location after this long without success: N intervals of that source, or a \
            duration.
            """,
        default: .intervals(3)
    ) { entry throws(ConfigError) in
        if entry.text.hasSuffix("x"), let count = Double(entry.text.dropLast()), count.isFinite, count >= 1,
            count <= 1000
        {
            return .intervals(count)
        }
        return .duration(try Parse.duration(entry, minimum: .seconds(1)))
    }

    static let logLevel = Setting<Configuration.LogLevel>.choice(
        "log.level", key: "log.level", placeholder: "LEVEL", what: "log level", default: .info)

    static let logFormat = Setting<Configuration.LogFormat>.choice(
        "log.format", key: "log.format", placeholder: "FORMAT", what: "log format", default: .logfmt)

    static let storagePath = Setting<String?>(
        "storage.path", key: "storage.path", placeholder: "DIR",
        doc:
            """
            Directory for the state file (readings, resolved places, schedule, 429 pause), so a restart resumes where \
            it was.
            """,
        default: nil, shown: "none: state is not kept"
    ) { entry throws(ConfigError) in
        guard !entry.text.isEmpty, !entry.text.contains("\u{0}") else {
            throw ConfigError(
                "\(entry.origin) \"\(entry.text)\" is not a directory path: give one like /var/lib/openweather-exporter"
            )
        }
        return entry.text
    }

    static let demo = Setting<Bool>.boolean(
        "demo", key: nil, doc: "Serve simulated weather from a built-in server: no key, no network.", group: .startHere)

    static let totalShards = Setting<Int>.integer(
        "total-shards", key: nil,
        doc:
            """
            Split the locations among N replicas by a stable hash of their names; each polls and serves its own and \
            gets 1/N of the request budget.
            """,
        default: 1, in: 1...1000, shown: "1, no sharding")

    /// Checked against `totalShards` by the loader, which knows both.
    static let shard = Setting<String?>.optional(
        "shard", key: nil, placeholder: "I", doc: "This replica's shard, 0 to N-1 (see --total-shards).", shown: "0")

    static let pod = Setting<String?>.optional(
        "pod", key: nil, placeholder: "NAME",
        doc: "Take --shard from a StatefulSet pod name's ordinal (NAME-2 is shard 2), e.g. --pod=$(POD_NAME).")

    /// `--collector.NAME`; in the file `collector.NAME: true` or `collector.NAME.enabled`.
    static func collector(_ source: any Source) -> Setting<Bool> {
        Setting<Bool>.boolean(
            "collector.\(source.name)", key: "collector.\(source.name).enabled",
            doc: "\(source.summary) Off: --no-collector.\(source.name).",
            shown: (source.enabledByDefault ? "enabled" : "disabled")
                + (source.enabledByDefault || !source.standsIn.isEmpty ? "" : "; enabled with --demo"))
    }

    static func collectorInterval(_ source: any Source) -> Setting<Duration> {
        Setting<Duration>.duration(
            "collector.\(source.name).interval", key: "collector.\(source.name).interval",
            doc: "How often each location is polled from \(source.name); stretched to fit the request budget.",
            default: source.defaultInterval, minimum: .seconds(1),
            shown: PrometheusDuration.format(source.defaultInterval)
                + (source.demoInterval == source.defaultInterval
                    ? "" : " (\(PrometheusDuration.format(source.demoInterval)) with --demo)"))
    }

    static let help = Setting<Bool>.boolean("help", key: nil, doc: "Show this help and exit.")
    /// blackbox_exporter's name, so the same CI step checks both.
    static let configCheck = Setting<Bool>.boolean(
        "config.check", key: nil,
        doc: "Check the configuration and the web config file, log what they set, and exit: 0 if valid, else 2.")
    static let version = Setting<Bool>.boolean("version", key: nil, doc: "Show the version and exit.")

    /// `listenAddress` → `listen_address`, `config.file` → `config_file`:
    /// file keys are snake_case as in every Prometheus config, and the camelCase keys of old JSON files map onto them.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        for character in name {
            if character == "-" || character == "." {
                out.append("_")
            } else if character.isUppercase {
                out.append("_")
                out.append(contentsOf: character.lowercased())
            } else {
                out.append(character)
            }
        }
        return out
    }
}
