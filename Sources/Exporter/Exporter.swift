import HTTPServer
import OpenWeather
import Synchronization

/// The running product: server, poller and metrics, wired from a `Configuration`.
public final class Exporter: Sendable {
    public typealias Reloader = @Sendable () throws(ConfigError) -> Configuration

    private let server: HTTPServer
    private let poller: Poller
    private let publisher: MetricsPublisher
    private let reloading: Reloading
    private let ticking = Atomic<Bool>(true)

    /// Binds the listening socket, so a taken address fails here, before anything runs.
    /// Throws `HTTPServerError`. Untyped on purpose: a class initializer with typed
    /// throws miscompiles in Swift 6.3 (the allocating thunk crashes when it throws).
    public init(configuration: Configuration, logger: Logger, reloader: Reloader? = nil, time: any TimeSource = SystemTime()) throws {
        let plan = configuration.pollerPlan()
        let store = WeatherStore(
            locations: plan.locations, sources: plan.sources, intervals: plan.intervals, maxStaleness: plan.maxStaleness,
            thresholds: plan.thresholds, now: time.wall())
        let publisher = MetricsPublisher(store: store, time: time, gzipAbove: configuration.gzipAbove)
        let poller = Poller(plan: plan, store: store, logger: logger, time: time) { publisher.weatherChanged() }
        let reloading = Reloading(
            configuration: configuration, reloader: reloader, store: store, publisher: publisher, poller: poller, logger: logger)

        var serverConfiguration = HTTPServerConfiguration(host: configuration.listenAddress.host, port: configuration.listenAddress.port)
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.readTimeout = configuration.readTimeout
        serverConfiguration.idleTimeout = configuration.idleTimeout
        serverConfiguration.onError = { message in logger.warn("http server", [("event", message)]) }
        let landingPage = LandingPage(telemetryPath: configuration.telemetryPath, demo: configuration.demo)
        server = try HTTPServer(
            configuration: serverConfiguration,
            handler: WebHandler(
                telemetryPath: configuration.telemetryPath, publisher: publisher, store: store, landingPage: landingPage,
                reload: { reloading.reload() }))
        self.poller = poller
        self.publisher = publisher
        self.reloading = reloading
    }

    /// The port the server listens on (useful with port 0).
    public var port: UInt16 { server.port }

    public func start() {
        server.start()
        poller.start()
        Threads.spawn(name: "metrics-tick") { [self] in
            publisher.runTimers { ticking.load(ordering: .relaxed) }
        }
    }

    /// Stops polling, then lets the server finish responses in flight.
    public func shutdown() {
        ticking.store(false, ordering: .relaxed)
        poller.stop()
        server.shutdown(gracePeriod: .milliseconds(1500))
    }

    /// Re-reads the configuration (SIGHUP, POST /-/reload). Returns nil on success, else the problem.
    @discardableResult
    public func reload() -> String? { reloading.reload() }
}

/// Applies a re-read configuration: locations, thresholds, polling and API
/// settings change in place; a bad config is refused and the old one stays.
private final class Reloading: Sendable {
    private let reloader: Exporter.Reloader?
    private let store: WeatherStore
    private let publisher: MetricsPublisher
    private let poller: Poller
    private let logger: Logger
    private let current: Mutex<Configuration>
    /// SIGHUP and /-/reload may arrive together; reloads run one at a time.
    private let inProgress = Mutex(())

    init(
        configuration: Configuration, reloader: Exporter.Reloader?, store: WeatherStore, publisher: MetricsPublisher,
        poller: Poller, logger: Logger
    ) {
        self.current = Mutex(configuration)
        self.reloader = reloader
        self.store = store
        self.publisher = publisher
        self.poller = poller
        self.logger = logger
    }

    func reload() -> String? {
        inProgress.withLock { _ in apply() }
    }

    private func apply() -> String? {
        guard let reloader else { return "no configuration to reload" }
        let next: Configuration
        do {
            next = try reloader()
        } catch {
            store.recordReload(successful: false, now: Clock.wallSeconds())
            publisher.refreshWeather()
            logger.error("reload refused; the previous configuration stays in force", [("reason", error.description)])
            return error.description
        }
        let previous = current.withLock { config in defer { config = next }; return config }
        for (name, changed) in [
            ("--web.listen-address", previous.listenAddress != next.listenAddress),
            ("--web.telemetry-path", previous.telemetryPath != next.telemetryPath),
            ("--log.level or --log.format", previous.logLevel != next.logLevel || previous.logFormat != next.logFormat),
        ] where changed {
            logger.warn("a changed setting needs a restart to take effect", [("setting", name)])
        }
        store.recordReload(successful: true, now: Clock.wallSeconds())
        poller.apply(next.pollerPlan())
        for warning in next.warnings { logger.warn(warning) }
        logger.info("configuration reloaded", [("locations", String(next.locations.count)), ("requests", next.requestPlan.summary)])
        return nil
    }
}

extension Configuration {
    /// What the poller runs: the locations, the active sources with their intervals and staleness,
    /// the budget, and the client (or a fake in tests).
    func pollerPlan(transport: (any OpenWeatherTransport)? = nil) -> Poller.Plan {
        let client = OpenWeatherClient(
            settings: .init(baseURL: openWeatherURL, apiKey: apiKey.value, language: language, timeout: requestTimeout),
            userAgent: "openweather-exporter/\(BuildInfo.version)")
        return Poller.Plan(
            locations: locations, sources: activeSources, intervals: effectiveIntervals, maxStaleness: effectiveMaxStaleness,
            requestsPerMinute: maxRequestsPerMinute, language: language, transport: transport ?? client,
            thresholds: { [self] in thresholds(for: $0) })
    }
}
