import Glibc
import HTTPClient

/// What the command line asks for.
public enum Command: Sendable {
    case run(Configuration)
    case help(String)
    case version(String)
    /// `--config.check`: the configuration, loaded as for a run, to check and describe instead (`ConfigCheck`).
    case check(Configuration)
    /// `openweather-exporter backfill ...`: the past, written to a file (`BackfillCommand`).
    case backfill(Configuration, BackfillOptions)
    /// `openweather-exporter healthcheck ...`: asks a running exporter's `/-/healthy` (`HealthCheck`).
    case healthcheck(HealthCheck)
}

/// Turns arguments, environment and the config file into a validated
/// `Configuration`, or the first mistake with a message that says how to fix it.
public struct ConfigurationLoader: Sendable {
    let arguments: [String]
    let environment: [String: String]

    /// `arguments` without the program name.
    public init(arguments: [String], environment: [String: String]) {
        self.arguments = arguments
        self.environment = environment
    }

    public func load() throws(ConfigError) -> Command {
        if let subcommand = Subcommand.named(arguments.first) {
            return try subcommand.load(self, Array(arguments.dropFirst()))
        }
        let flags = try CommandLineFlags.parse(arguments)
        if flags.isSet(Settings.help) {
            return .help(([Flag.helpText] + Subcommand.all.map(\.pointer)).joined(separator: "\n"))
        }
        if flags.isSet(Settings.version) { return .version(BuildInfo.versionLine) }

        var settings = try layered(flags)
        let unknown = unknownEnvironmentVariables()
        settings.warnings += unknown
        do {
            let configuration = try build(settings)
            return flags.isSet(Settings.configCheck) ? .check(configuration) : .run(configuration)
        } catch {
            // A misspelled variable is the likely cause of a missing setting: say it with the error.
            throw unknown.isEmpty
                ? error : ConfigError("\(error.description); note: \(unknown.joined(separator: "; "))")
        }
    }

    /// The same environment with other arguments (a subcommand's, without its own flags).
    func with(arguments: [String]) -> ConfigurationLoader {
        ConfigurationLoader(arguments: arguments, environment: environment)
    }

    private func build(_ settings: RawSettings) throws(ConfigError) -> Configuration {
        var config = Configuration()
        config.configFile = settings.configFile
        config.warnings = settings.warnings
        config.demo = try settings.resolved(Settings.demo)
        try loadServer(settings, into: &config)
        for setting in Settings.alertDefaults {
            config.alertDefaults = try settings.resolved(setting).merged(over: config.alertDefaults)
        }
        try loadOpenWeather(settings, into: &config)
        try collectors(settings, into: &config)
        config.storagePath = try settings.resolved(Settings.storagePath)
        config.logLevel = try settings.resolved(Settings.logLevel)
        config.logFormat = try settings.resolved(Settings.logFormat)
        config.locations = try locations(settings)
        if config.locations.isEmpty {
            guard config.demo else {
                throw ConfigError(
                    """
                    no location configured: add one or more --location NAME=LAT,LON (for example --location \
                    "London=51.5074,-0.1278") or a "locations" list in --config.file; to try the exporter without \
                    a key run with --demo
                    """
                )
            }
            config.locations = DemoLocations.all
        }
        try loadKey(settings, into: &config)
        try shard(settings, into: &config)
        config.warnings += Self.invertedThresholds(config)
        config.warnings += Self.pacingWarnings(config)
        return config
    }

    /// Where and how the exporter serves: addresses or systemd's sockets, path, limits and timeouts.
    private func loadServer(_ settings: RawSettings, into config: inout Configuration) throws(ConfigError) {
        config.listenAddresses = try settings.resolved(Settings.listenAddress)
        if try settings.resolved(Settings.systemdSocket) {
            config.systemdSockets = try SystemdSockets.handedOver(environment: environment, pid: getpid())
            if let given = settings.values[Settings.listenAddress.flag.name] {
                config.warnings.append(
                    """
                    \(given.origin) is not used: --web.systemd-socket serves on the sockets systemd hands over instead \
                    (the socket unit's ListenStream= says where)
                    """
                )
            }
        }
        config.telemetryPath = try settings.resolved(Settings.telemetryPath)
        config.maxConnections = try settings.resolved(Settings.maxConnections)
        config.readTimeout = try settings.resolved(Settings.readTimeout)
        config.idleTimeout = try settings.resolved(Settings.idleTimeout)
        config.webConfigFile = try settings.resolved(Settings.webConfigFile)
        config.enableLifecycle = try settings.resolved(Settings.enableLifecycle)
    }

    /// How OpenWeather is asked: URL, timeout, transport, language, request budgets and staleness.
    private func loadOpenWeather(_ settings: RawSettings, into config: inout Configuration) throws(ConfigError) {
        config.openWeatherURL = try settings.resolved(Settings.url)
        config.requestTimeout = try settings.resolved(Settings.timeout)
        try loadTransport(settings, into: &config)
        config.language = try settings.resolved(Settings.language)
        config.maxRequestsPerMinute =
            try settings.value(Settings.maxRequestsPerMinute)
            ?? (config.demo ? Settings.demoMaxRequestsPerMinute : Settings.maxRequestsPerMinute.defaultValue)
        let perDay = try settings.resolved(Settings.maxRequestsPerDay)
        config.maxRequestsPerDay = perDay == 0 ? nil : perDay
        config.maxStaleness = try settings.resolved(Settings.maxStaleness)
    }

    /// What the configured polling costs beside what the key allows, and staleness shorter than a poll:
    /// each would surprise the user later, so it is said at start.
    private static func pacingWarnings(_ config: Configuration) -> [String] {
        var warnings: [String] = []
        let active = config.sourcePolling
        let plan = active.requests
        if plan.stretched {
            let budget =
                config.shard.total == 1
                ? "\(config.maxRequestsPerMinute)"
                : "this shard's \(config.maxRequestsPerMinute) (1/\(config.shard.total) of the key's)"
            warnings.append(
                """
                \(config.locations.count) locations need \(RequestPlan.rate(plan.configuredRequestsPerMinute)) \
                requests a minute at the configured intervals, more than \(budget) allows: every interval is stretched \
                by the same factor (\(plan.summary)); raise --openweather.max-requests-per-minute if your plan allows \
                more
                """
            )
        }
        if !plan.stretchedForDay.isEmpty {
            let limits = plan.entries.filter { plan.stretchedForDay.contains($0.name) }.map { entry in
                "\(entry.name) needs \(RequestPlan.count(entry.neededPerDay)) a day at its configured interval"
                    + (entry.dailyLimit.map { limit in
                        ", \(limit) allowed (--collector.\(entry.name).max-requests-per-day)"
                    } ?? "")
            }
            let key =
                config.maxRequestsPerDay.map {
                    "; the key allows \($0) a day in all (--openweather.max-requests-per-day)"
                } ?? ""
            warnings.append(
                """
                the daily request limits stretch the intervals (OpenWeather's day starts at 00:00 UTC): \
                \(limits.joined(separator: "; "))\(key); now \(plan.summary); raise the limits if your plan allows \
                more, or poll fewer locations
                """
            )
        }
        if case .duration(let duration) = config.maxStaleness {
            for (source, interval) in zip(active.sources, active.intervals)
            where !source.resolves && interval >= duration {
                warnings.append(
                    """
                    --openweather.max-staleness=\(PrometheusDuration.format(duration)) is not longer than the \
                    \(source.name) interval (\(PrometheusDuration.format(interval))): its series will leave /metrics \
                    between polls; use a multiple of the intervals instead, like 3x
                    """
                )
            }
        }
        return warnings
    }

    /// Thresholds the wrong way round (above -10, below 40) make both alerts fire at nearly every
    /// temperature; likely a swap, so name where and how to fix it, in the units and numbers the user
    /// wrote. Inherited defaults are named once.
    static func invertedThresholds(_ config: Configuration) -> [String] {
        func inverted(_ thresholds: AlertThresholds) -> (above: TemperatureThreshold, below: TemperatureThreshold)? {
            guard let above = thresholds.above, let below = thresholds.below, above.celsius < below.celsius else {
                return nil
            }
            return (above, below)
        }
        // Bounds in two units are compared in °C, which the message then says (to 0.01 °C).
        func compared(_ above: TemperatureThreshold, _ below: TemperatureThreshold) -> String {
            guard above.unit != below.unit else { return "" }
            let celsius = [above, below].map { TemperatureThreshold(celsius: ($0.celsius * 100).rounded() / 100).shown }
            return " (\(celsius[0]) < \(celsius[1]))"
        }
        var warnings: [String] = []
        if let (above, below) = inverted(config.alertDefaults) {
            warnings.append(
                """
                --alerts.temperature-above-celsius=\(above.option) is below \
                --alerts.temperature-below-celsius=\(below.option)\(compared(above, below)): both alerts fire at \
                nearly every temperature for the locations that set no thresholds; the above bound is the upper one, \
                so swap the two values
                """
            )
        }
        var count = 0
        for location in config.locations {
            guard case .custom = location.alerts, let (above, below) = inverted(config.thresholds(for: location)) else {
                continue
            }
            count += 1
            guard count <= 5 else { continue }
            warnings.append(
                """
                location "\(location.name)" has its temperature thresholds the wrong way round \
                (above=\(above.option) is below below=\(below.option)\(compared(above, below))), so both alerts fire \
                at nearly every temperature: swap them (above=\(below.option),below=\(above.option) in --location, or \
                temperature_above_celsius: \(below.option) and temperature_below_celsius: \(above.option) under its \
                alerts in the config file)
                """
            )
        }
        if count > 5 {
            warnings.append(
                "\(count - 5) more locations have their temperature thresholds the wrong way round; swap them as above")
        }
        return warnings
    }

    /// `--collector.NAME`, `--collector.NAME.interval` and each source's own settings.
    private func collectors(_ settings: RawSettings, into config: inout Configuration) throws(ConfigError) {
        for index in config.collectors.indices {
            config.collectors[index].source = try config.collectors[index].source.configured(by: settings)
        }
        for index in config.collectors.indices where !config.collectors[index].source.resolves {
            let source = config.collectors[index].source
            let name = source.name
            if let enabled = try settings.value(Settings.collector(source)) {
                config.collectors[index].enabled = enabled
            } else if config.demo && source.standsIn.isEmpty {
                // The demo shows every free source; one that stands in for others (One Call) stays opt-in.
                config.collectors[index].enabled = true
            }
            if let interval = try settings.value(Settings.collectorInterval(source)) {
                config.collectors[index].interval = interval
            } else if config.demo {
                config.collectors[index].interval = source.demoInterval
            }
            if !config.demo, config.collectors[index].enabled,
                config.collectors[index].interval < source.defaultInterval
            {
                config.warnings.append(
                    """
                    --collector.\(name).interval=\(PrometheusDuration.format(config.collectors[index].interval)) is \
                    shorter than \(PrometheusDuration.format(source.defaultInterval)): OpenWeather updates this data \
                    about every \(PrometheusDuration.format(source.defaultInterval)); you spend requests for no new data
                    """
                )
            }
        }
        guard config.collectors.contains(where: { $0.enabled && !$0.source.resolves }) else {
            throw ConfigError("every collector is switched off: keep at least one, for example --collector.weather")
        }
        // Two sources filling the same families (One Call 3.0 and 4.0) would each write them.
        let standing = config.collectors.filter { $0.enabled && !$0.source.standsIn.isEmpty }.map(\.source)
        for (index, first) in standing.enumerated() {
            for second in standing[(index + 1)...] where !Set(first.standsIn).isDisjoint(with: second.standsIn) {
                throw ConfigError(
                    """
                    --collector.\(first.name) and --collector.\(second.name) both stand in for \
                    \(Set(first.standsIn).intersection(second.standsIn).sorted().joined(separator: " and ")): switch \
                    one off (--no-collector.\(first.name) or --no-collector.\(second.name))
                    """
                )
            }
        }
    }

    private func locations(_ settings: RawSettings) throws(ConfigError) -> [Location] {
        var seen: [String: String] = [:]
        var result: [Location] = []
        for entry in settings.locations {
            let location: Location
            if let given = entry.location {
                location = given
            } else {
                location = try LocationSpec.parse(entry.text, origin: entry.origin)
            }
            if let first = seen[location.name] {
                throw ConfigError(
                    """
                    location "\(location.name)" is defined twice (\(first) and \(entry.origin)): give each location \
                    its own name
                    """
                )
            }
            seen[location.name] = entry.origin
            result.append(location)
        }
        return result
    }
}
