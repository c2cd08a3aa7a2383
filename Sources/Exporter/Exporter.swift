import HTTPServer
import Locking
import OpenWeather
import Platform
import Synchronization

/// The running product: server, poller and metrics, wired from a `Configuration`.
public final class Exporter: Sendable {
    public typealias Reloader = @Sendable () throws(ConfigError) -> Configuration

    private let server: HTTPServer
    private let poller: Poller
    private let publisher: MetricsPublisher
    private let keeper: StateKeeper?
    private let reloading: Reloading
    /// The config file, then the web config file.
    private let reloadAll: @Sendable () -> String?
    private let ticking = Atomic<Bool>(true)

    /// Binds the listening socket, so a taken address fails here, before anything runs; reads the state file, so the
    /// first scrape already shows what the last run knew. Throws `HTTPServerError`, or `StateStorageError` for a state
    /// directory it cannot use. Untyped on purpose: a class initializer with typed throws miscompiles in Swift 6.3 (the
    /// allocating thunk crashes when it throws).
    public convenience init(configuration: Configuration, logger: Logger, reloader: Reloader?) throws {
        try self.init(configuration: configuration, logger: logger, reloader: reloader, time: SystemTime())
    }

    init(
        configuration: Configuration, logger: Logger, reloader: Reloader? = nil, time: any TimeSource = SystemTime()
    ) throws {
        let setup = configuration.pollerSetup(transport: try configuration.openWeatherClient())
        let store = ReadingStore(layout: setup.layout, now: time.wall())
        let publisher = MetricsPublisher(
            store: store, time: time, gzipAbove: configuration.gzipAbove ?? MetricsRendering.gzipAbove,
            alsoGzipAbove: configuration.alsoGzipAbove ?? MetricsPublisher.alsoGzipAbove)
        let state = try Self.keptState(
            configuration: configuration, store: store, publisher: publisher, logger: logger, time: time)
        let keeper = state?.keeper
        var keepBody: (@Sendable (Location, any Source, [UInt8]) -> Void)?
        if let keeper {
            keepBody = { location, source, body in keeper.keep(body: body, location: location, source: source) }
        }
        let poller = Poller(
            setup: setup, store: store, logger: logger, time: time, sharedDay: state?.sharedDay, keepBody: keepBody
        ) {
            publisher.weatherChanged()
            keeper?.changed()
        }
        if let keeper {
            keeper.load(into: poller)
            publisher.refreshWeather()
        }
        let web = try configuration.webConfigFile.map { path throws(ConfigError) in
            try WebSecurity(path: path, logger: logger)
        }
        let reloading = Reloading(
            configuration: configuration, reloader: reloader, web: web, store: store, publisher: publisher,
            poller: poller, logger: logger)
        let reloadAll: @Sendable () -> String? = { reloading.reload() }
        // Known once the server has bound them (port 0, the sockets systemd hands over).
        let listening = Locked<[String]>([])
        let landingPage = LandingPage(
            telemetryPath: configuration.telemetryPath, demo: configuration.demo,
            simulator: configuration.demo ? configuration.openWeatherURL : nil,
            listening: { listening.withLock { $0 } })
        let routes = WebHandler(
            telemetryPath: configuration.telemetryPath, publisher: publisher, store: store, landingPage: landingPage,
            reload: configuration.enableLifecycle ? reloadAll : nil)
        let serverConfiguration = Self.serverConfiguration(
            configuration, web: web, store: store, publisher: publisher, logger: logger)
        let server = try HTTPServer(
            configuration: serverConfiguration,
            handler: web.map { AuthenticatingHandler(routes: routes, web: $0) } ?? routes)
        if configuration.systemdSockets != nil { SystemdSockets.forget() }
        let addresses = Self.addresses(of: server, listeners: serverConfiguration.listeners)
        listening.withLock { $0 = addresses }
        self.server = server
        self.addresses = addresses
        self.reloadAll = reloadAll
        self.poller = poller
        self.publisher = publisher
        self.keeper = keeper
        self.reloading = reloading
    }

    /// The state file's keeper and the shared day count, when `--storage.path` asks for them.
    private static func keptState(
        configuration: Configuration, store: ReadingStore, publisher: MetricsPublisher, logger: Logger,
        time: any TimeSource
    ) throws -> (keeper: StateKeeper, sharedDay: SharedDay)? {
        guard let path = configuration.storagePath else { return nil }
        let storage = try StateStorage(directory: path)
        let keeper = StateKeeper(storage: storage, store: store, logger: logger, time: time) {
            publisher.weatherChanged()
        }
        let shared = SharedDay(storage: storage)
        // Sharing was asked for: a day file that cannot be the shared count would let the limits go.
        do throws(SharedDay.Failure) {
            try shared.check()
        } catch {
            throw StateStorageError(description: "--storage.path \"\(path)\": \(error.description)")
        }
        return (keeper, shared)
    }

    /// Where the server listens, its limits and TLS, and where its own errors go.
    private static func serverConfiguration(
        _ configuration: Configuration, web: WebSecurity?, store: ReadingStore, publisher: MetricsPublisher,
        logger: Logger
    ) -> HTTPServerConfiguration {
        var server = HTTPServerConfiguration()
        server.listeners =
            configuration.systemdSockets.map { sockets in
                sockets.map { .socket(fd: $0, origin: "systemd ($LISTEN_FDS)") }
            } ?? configuration.listenAddresses.map { .address(host: $0.host, port: $0.port) }
        server.maxConnections = configuration.maxConnections
        server.readTimeout = configuration.readTimeout
        server.idleTimeout = configuration.idleTimeout
        server.onError = { message in logger.warn("http server", [("event", message)]) }
        server.onListenerDropped = { message in
            logger.error("http server", [("event", message)])
            store.recordListenerDropped()
            publisher.refreshWeather()
        }
        server.tls = web?.tls
        server.extraHeaders = web?.headers
        return server
    }

    /// Each listener as configured (a name, the empty host of every interface) with the port bound;
    /// a socket systemd handed over as bound.
    private static func addresses(of server: HTTPServer, listeners: [HTTPServerConfiguration.Listen]) -> [String] {
        let bound = server.addresses
        return listeners.indices.map { index in
            guard case .address(let host, _) = listeners[index] else { return bound[index] }
            return ListenAddress(host: host, port: server.ports[index]).description
        }
    }

    /// The port the server listens on first (useful with port 0).
    public var port: UInt16 { server.port }

    /// Every address the server listens on, as configured with the port bound, or as bound for the
    /// sockets systemd handed over.
    public let addresses: [String]

    public func start() {
        Threads.startDispatch()
        server.start()
        poller.start()
        keeper?.start(poller)
        Threads.spawn(name: "metrics-tick") { [self] in
            publisher.runTimers { ticking.load(ordering: .relaxed) }
        }
    }

    /// Stops polling and saves the state, then lets the server finish responses in flight.
    /// `progress` names each part as it starts to stop, so a stop that hangs can say where.
    public func shutdown(progress: (String) -> Void = { _ in }) {
        ticking.store(false, ordering: .relaxed)
        progress("the poller")
        poller.stop()
        if let keeper {
            progress("the last state write")
            poller.settle(grace: StateKeeper.settleGrace)
            keeper.stop(poller)
        }
        progress("the HTTP server")
        server.shutdown(gracePeriod: .milliseconds(1500))
    }

    /// Re-reads the configuration (SIGHUP, POST /-/reload). Returns nil on success, else the problem.
    @discardableResult
    public func reload() -> String? { reloadAll() }
}

/// Applies a re-read configuration: locations, thresholds, polling and API
/// settings change in place; a bad config or web config is refused and the old ones stay.
private final class Reloading: Sendable {
    private let reloader: Exporter.Reloader?
    private let web: WebSecurity?
    private let store: ReadingStore
    private let publisher: MetricsPublisher
    private let poller: Poller
    private let logger: Logger
    private let current: Locked<Configuration>
    /// SIGHUP and /-/reload may arrive together; reloads run one at a time.
    private let inProgress = Locked(())

    init(
        configuration: Configuration, reloader: Exporter.Reloader?, web: WebSecurity?, store: ReadingStore,
        publisher: MetricsPublisher, poller: Poller, logger: Logger
    ) {
        self.current = Locked(configuration)
        self.reloader = reloader
        self.web = web
        self.store = store
        self.publisher = publisher
        self.poller = poller
        self.logger = logger
    }

    public func reload() -> String? {
        inProgress.withLock { _ in apply() }
    }

    private func apply() -> String? {
        guard let reloader else { return "no configuration to reload" }
        let next: Configuration
        do {
            next = try reloader()
        } catch {
            return refuse(error.description)
        }
        let previous = current.withLock { $0 }
        // The same API settings keep the client, and with it its open connections and TLS sessions.
        let sameClient =
            previous.openWeatherURL == next.openWeatherURL && previous.apiKey == next.apiKey
            && previous.language == next.language && previous.requestTimeout == next.requestTimeout
            && previous.proxy == next.proxy
            && previous.tlsCAFile == next.tlsCAFile && previous.maxIdleConnections == next.maxIdleConnections
        let setup: Poller.Setup
        do {
            setup = next.pollerSetup(transport: sameClient ? poller.transport : try next.openWeatherClient())
        } catch {
            return refuse(error.description)
        }
        // The web config is applied whole or not at all, so it goes before anything else changes: a
        // revocation that did not load must look like a failed reload, not like one that worked.
        if let web, let problem = web.reload() {
            return refuse(problem)
        }
        current.withLock { $0 = next }
        // Before anything is logged or sent with them.
        logger.redact(next.secrets)
        for (name, changed) in [
            ("--web.listen-address", previous.listenAddresses != next.listenAddresses),
            ("--web.systemd-socket", (previous.systemdSockets == nil) != (next.systemdSockets == nil)),
            ("--web.telemetry-path", previous.telemetryPath != next.telemetryPath),
            ("--log.level or --log.format", previous.logLevel != next.logLevel || previous.logFormat != next.logFormat),
        ] where changed {
            logger.warn("a changed setting needs a restart to take effect", [("setting", name)])
        }
        store.recordReload(successful: true, now: SystemClock.wallSeconds())
        poller.apply(setup)
        // A scrape right after the reload must show it succeeded, not wait for the next poll's refresh.
        publisher.refreshWeather()
        for warning in next.warnings { logger.warn(warning) }
        logger.info(
            "configuration reloaded",
            [("locations", String(next.locations.count)), ("requests", next.requestPlan.summary)])
        return nil
    }

    private func refuse(_ problem: String) -> String {
        // The reason is in the log before a scrape can show the failure, so whoever sees the metric finds why.
        logger.error("reload refused; the previous configuration stays in force", [("reason", problem)])
        store.recordReload(successful: false, now: SystemClock.wallSeconds())
        publisher.refreshWeather()
        return problem
    }
}

extension Configuration {
    /// The API client this configuration asks for; it parses the base URL once, here.
    func openWeatherClient() throws(ConfigError) -> OpenWeatherClient {
        do {
            return try OpenWeatherClient(
                configuration: .init(
                    baseURL: openWeatherURL, apiKey: apiKey.value, language: language, timeout: requestTimeout,
                    http: .init(proxy: proxy, trustedCAFile: tlsCAFile, maxIdleConnections: maxIdleConnections)),
                userAgent: "openweather-exporter/\(BuildInfo.version)")
        } catch {
            throw ConfigError(
                "--openweather.url: \(error.description); give scheme and host, like https://api.openweathermap.org")
        }
    }

    /// What the poller runs: the locations, the active sources with their intervals and staleness,
    /// the budget, and the client (`openWeatherClient()`, or a fake in tests).
    func pollerSetup(transport client: any OpenWeatherTransport) -> Poller.Setup {
        let active = sourcePolling
        return Poller.Setup(
            locations: locations, sources: active.sources, intervals: active.intervals, configured: active.configured,
            maxStaleness: active.maxStaleness,
            requestsPerMinute: maxRequestsPerMinute, dailyLimits: active.sources.map(dailyLimit(of:)),
            requestsPerDay: maxRequestsPerDay, language: language,
            transport: client,
            thresholds: { [self] in thresholds(for: $0) })
    }
}
