import HTTPClient

/// Everything the exporter runs with, validated. Built by `ConfigurationLoader`
/// from defaults, the config file, the environment and flags (in rising order).
public struct Configuration: Sendable {
    enum LogLevel: String, Sendable, CaseIterable, Comparable {
        case debug, info, warn, error
        var rank: Int { Self.allCases.firstIndex(of: self)! }
        static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
    }

    enum LogFormat: String, Sendable, CaseIterable {
        case logfmt, json
    }

    /// Where the HTTP server listens, each address served alike, unless `systemdSockets` says otherwise.
    var listenAddresses = Settings.listenAddress.defaultValue
    /// With --web.systemd-socket, the descriptors systemd handed over (`SystemdSockets`), served instead
    /// of `listenAddresses`; nil without.
    var systemdSockets: Range<Int32>?

    /// With --web.systemd-socket, checks that the descriptors handed over are open (and makes them
    /// close-on-exec): to be called at startup, before the process opens a descriptor of its own.
    public func claimSystemdSockets() throws(ConfigError) {
        if let systemdSockets { try SystemdSockets.claim(systemdSockets) }
    }
    /// The path of the exposition.
    var telemetryPath = Settings.telemetryPath.defaultValue
    /// Connections beyond it displace the longest-idle one.
    var maxConnections = Settings.maxConnections.defaultValue
    /// Time a client has to send a whole request.
    var readTimeout = Settings.readTimeout.defaultValue
    /// Time a keep-alive connection may sit between requests.
    var idleTimeout = Settings.idleTimeout.defaultValue
    /// The exporter-toolkit web config (TLS, basic auth, headers), if any.
    var webConfigFile: String?
    /// Whether POST /-/reload may reload (SIGHUP always does).
    var enableLifecycle = false
    /// The places to poll, in the order given: this shard's share of those configured.
    var locations: [Location] = []
    /// Thresholds for locations that set none of their own.
    var alertDefaults = AlertThresholds()
    /// The key; never printed (see `Secret`).
    var apiKey = Secret("")
    /// Where the key came from, for messages: an environment variable or a file path.
    var apiKeySource = ""
    /// Base URL of the OpenWeather API (or a proxy, or the simulator).
    public var openWeatherURL = Settings.url.defaultValue
    /// Which proxy API requests go through: --openweather.proxy-url, else the *_PROXY variables.
    var proxy = ProxyConfiguration.direct
    /// What no log line may show: the key and the proxies' credentials, in each form they are echoed.
    var secrets: [String] { [apiKey.value] + proxy.secrets }
    /// CA certificates trusted besides the system bundle.
    var tlsCAFile: String?
    /// Keep-alive connections to the API kept between requests.
    var maxIdleConnections = Settings.maxIdleConnections.defaultValue
    /// Deadline of one request, connect to last byte.
    var requestTimeout = Settings.timeout.defaultValue
    /// Language of the condition description.
    var language = Settings.language.defaultValue
    /// Every source as configured, in `Sources.all` order: one record each, so a source, its switch
    /// and its interval cannot fall out of step.
    var collectors: [ConfiguredSource] = Sources.all.map(ConfiguredSource.init(defaultsOf:))
    /// Every source with its own settings applied (a forecast's horizons), in `Sources.all` order.
    var sources: [any Source] { collectors.map(\.source) }
    /// This replica's request budget: the key's, divided by `shard.total` (the key's budget is shared).
    var maxRequestsPerMinute = Settings.maxRequestsPerMinute.defaultValue
    /// This replica's share of the key's requests a UTC day (`--openweather.max-requests-per-day`); nil for no limit.
    var maxRequestsPerDay: Int?
    /// Which share of the configured locations this replica keeps in `locations` (`--shard` of `--total-shards`).
    var shard = Shard.whole
    /// Without a success for this long, a source's series of a location leave /metrics.
    var maxStaleness = Settings.maxStaleness.defaultValue
    var logLevel = Settings.logLevel.defaultValue
    var logFormat = Settings.logFormat.defaultValue
    /// The directory of the state file; nil keeps no state.
    var storagePath: String?
    /// Serve simulated data from the built-in simulator; no key, no network.
    public var demo = false
    /// The config file (YAML or JSON) read at start and on reload, if any.
    var configFile: String?
    /// Things worth a warning line at start (a short interval, a key file others can read).
    var warnings: [String] = []
    /// From this many bytes of plain exposition on it is kept gzipped; not a flag, lowered by tests;
    /// nil: the renderer's own threshold (the configuration knows nothing of rendering).
    var gzipAbove: Int?
    /// From this many bytes on a plain exposition is also kept gzipped for clients that take it; as
    /// `gzipAbove`, lowered by tests, nil: the publisher's own.
    var alsoGzipAbove: Int?

    init() {}

    /// The sources that run, in slot order: the switched-on ones, those a switched-on one stands in
    /// for (their families are filled from it, and they run themselves when it cannot), and the
    /// resolver when a place is given by name.
    var activeCollectors: [ConfiguredSource] {
        let needsResolver = locations.contains { $0.query != nil }
        let stoodIn = Set(collectors.filter(\.enabled).flatMap(\.source.standsIn))
        return collectors.filter { collector in
            collector.source.resolves ? needsResolver : collector.enabled || stoodIn.contains(collector.name)
        }
    }

    /// `activeCollectors`' sources.
    var activeSources: [any Source] { activeCollectors.map(\.source) }

    /// How the active sources are polled: what they ask and how often, worked out together once (the poller setup reads
    /// it all).
    struct SourcePolling {
        /// `activeSources`.
        let sources: [any Source]
        /// Requests a minute each polling source needs, and the intervals stretched to fit the budget.
        /// A source another stands in for needs no requests of its own.
        let requests: RequestPlan
        /// The plan while the sources that stand in for others cannot be used (One Call without its
        /// subscription): the sources they stand in for poll themselves. Nil without such a source.
        let fallback: RequestPlan?
        /// Per source: the interval used (stretched to the budget; a resolver's retry as configured). A
        /// source another stands in for polls only when that one cannot be used: at the fallback's interval.
        let intervals: [Duration]
        /// Per source, seconds without success after which its readings are not shown.
        let maxStaleness: [Double]
        /// Per source: the interval as configured (`--collector.NAME.interval`), before any stretch.
        let configured: [Duration]
    }

    var sourcePolling: SourcePolling {
        let active = activeCollectors
        let sources = active.map(\.source)
        let readFrom = Dictionary(
            sources.flatMap { source in source.standsIn.map { ($0, source.name) } },
            uniquingKeysWith: { first, _ in first })
        let requests = RequestPlan(
            sources: active.filter { !$0.source.resolves }.map { demand(of: $0, readFrom: readFrom[$0.name]) },
            budgetPerMinute: maxRequestsPerMinute, budgetPerDay: maxRequestsPerDay)
        let standIns = Set(sources.filter { !$0.standsIn.isEmpty }.map(\.name))
        let fallback =
            standIns.isEmpty
            ? nil
            : RequestPlan(
                sources: active.filter { !$0.source.resolves && !standIns.contains($0.name) }.map {
                    demand(of: $0, readFrom: nil)
                },
                budgetPerMinute: maxRequestsPerMinute, budgetPerDay: maxRequestsPerDay)
        // A resolver is in neither request plan: it retries at its configured interval.
        let intervals = active.map { collector in
            (readFrom[collector.name] != nil ? fallback?.interval(of: collector.name) : nil) ?? requests.interval(
                of: collector.name) ?? collector.interval
        }
        let maxStaleness = intervals.map { interval in
            switch self.maxStaleness {
            case .intervals(let count): interval.seconds * count
            case .duration(let duration): duration.seconds
            }
        }
        return SourcePolling(
            sources: sources, requests: requests, fallback: fallback, intervals: intervals, maxStaleness: maxStaleness,
            configured: active.map(\.interval))
    }

    /// What `collector` asks of the budgets: every location, or none when `readFrom` stands in for it.
    private func demand(of collector: ConfiguredSource, readFrom: String?) -> RequestPlan.Demand {
        RequestPlan.Demand(
            name: collector.name, interval: collector.interval, locations: readFrom == nil ? locations.count : 0,
            readFrom: readFrom,
            dailyLimit: dailyLimit(of: collector.source),
            parts: collector.source.requestsPerPoll(every: collector.interval).map {
                RequestPlan.Part(name: $0.part, perPoll: $0.requests)
            })
    }

    /// This replica's share of `source`'s own limit of requests a UTC day (the key's, split among the
    /// shards as the per-minute budget is); nil for none.
    func dailyLimit(of source: any Source) -> Int? { source.maxRequestsPerDay.map { max($0 / shard.total, 1) } }

    var requestPlan: RequestPlan { sourcePolling.requests }
    var fallbackRequestPlan: RequestPlan? { sourcePolling.fallback }

    /// With the demo's own places, the cold spell the simulator is to forecast for its showcase
    /// (`DemoLocations.coldSpell`); nil for any other configuration.
    public var demoColdSpell: (place: String, latitude: Double, celsius: Double, hoursAhead: Double)? {
        demo && locations == DemoLocations.all ? DemoLocations.coldSpell : nil
    }

    /// Each location's thresholds after the defaults are applied.
    func thresholds(for location: Location) -> AlertThresholds {
        location.alerts.resolved(defaults: alertDefaults)
    }
}

/// A source as configured: itself with its own settings applied, its switch (`--collector.NAME`) and
/// its interval (`--collector.NAME.interval`).
struct ConfiguredSource: Sendable {
    var source: any Source
    var enabled: Bool
    var interval: Duration

    var name: String { source.name }

    /// As shipped: a resolver is always on (it runs only for places given by name).
    init(defaultsOf source: any Source) {
        self.source = source
        enabled = source.enabledByDefault || source.resolves
        interval = source.defaultInterval
    }
}

/// How long a source's reading is shown without a newer success: a multiple of its interval, or a duration.
enum Staleness: Sendable, Equatable, CustomStringConvertible {
    case intervals(Double)
    case duration(Duration)

    var description: String {
        switch self {
        case .intervals(let count): count == count.rounded() && count < 1e15 ? "\(Int64(count))x" : "\(count)x"
        case .duration(let duration): PrometheusDuration.format(duration)
        }
    }
}

/// A string that never shows itself in logs, errors or dumps.
struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    let value: String

    init(_ value: String) { self.value = value }

    var description: String { Redaction.marker }
    var debugDescription: String { Redaction.marker }
}
