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
    /// The config file, then the web config file.
    private let reloadAll: @Sendable () -> String?
    private let ticking = Atomic<Bool>(true)

    /// Binds the listening socket, so a taken address fails here, before anything runs.
    /// Throws `HTTPServerError`. Untyped on purpose: a class initializer with typed
    /// throws miscompiles in Swift 6.3 (the allocating thunk crashes when it throws).
    public init(configuration: Configuration, logger: Logger, reloader: Reloader? = nil) throws {
        let store = WeatherStore(locations: configuration.locations, thresholds: configuration.thresholds(for:), now: Clock.wallSeconds())
        let publisher = MetricsPublisher(
            store: store, maxStaleness: configuration.effectiveMaxStaleness, gzipAbove: configuration.gzipAbove)
        let poller = Poller(plan: Reloading.plan(configuration), store: store, logger: logger) { publisher.weatherChanged() }
        let reloading = Reloading(
            configuration: configuration, reloader: reloader, store: store, publisher: publisher, poller: poller, logger: logger)

        var serverConfiguration = HTTPServerConfiguration(host: configuration.listenAddress.host, port: configuration.listenAddress.port)
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.readTimeout = configuration.readTimeout
        serverConfiguration.idleTimeout = configuration.idleTimeout
        serverConfiguration.onError = { message in logger.warn("http server", [("event", message)]) }
        let web = try configuration.webConfigFile.map { path throws(ConfigError) in try WebSecurity(path: path, logger: logger) }
        serverConfiguration.tls = web?.tls
        serverConfiguration.extraHeaders = web?.headers
        let reloadAll: @Sendable () -> String? = { reloading.reload() ?? web?.reload() }
        let landingPage = LandingPage(
            telemetryPath: configuration.telemetryPath, demo: configuration.demo, interval: configuration.effectivePollInterval)
        let routes = WebHandler(
            telemetryPath: configuration.telemetryPath, publisher: publisher, store: store, landingPage: landingPage,
            reload: configuration.enableLifecycle ? reloadAll : nil)
        server = try HTTPServer(
            configuration: serverConfiguration, handler: web.map { AuthenticatingHandler(routes: routes, web: $0) } ?? routes)
        self.reloadAll = reloadAll
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
    public func reload() -> String? { reloadAll() }
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
        store.replaceLocations(next.locations, thresholds: next.thresholds(for:))
        store.recordReload(successful: true, now: Clock.wallSeconds())
        publisher.setMaxStaleness(next.effectiveMaxStaleness)
        poller.apply(Self.plan(next))
        for warning in next.warnings { logger.warn(warning) }
        logger.info("configuration reloaded", [("locations", String(next.locations.count))])
        return nil
    }

    static func plan(_ configuration: Configuration) -> Poller.Plan {
        let client = OpenWeatherClient(
            settings: .init(
                baseURL: configuration.openWeatherURL, apiKey: configuration.apiKey.value,
                language: configuration.language, timeout: configuration.requestTimeout),
            userAgent: "openweather-exporter/\(BuildInfo.version)")
        return Poller.Plan(
            locations: configuration.locations, interval: configuration.effectivePollInterval,
            requestsPerMinute: configuration.maxRequestsPerMinute, fetcher: client)
    }
}
