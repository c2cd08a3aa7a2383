/// Everything the exporter runs with, validated. Built by `ConfigurationLoader`
/// from defaults, the config file, the environment and flags (in rising order).
public struct Configuration: Sendable {
    public enum LogLevel: String, Sendable, CaseIterable, Comparable {
        case debug, info, warn, error
        var rank: Int { Self.allCases.firstIndex(of: self)! }
        public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
    }

    public enum LogFormat: String, Sendable, CaseIterable {
        case logfmt, json
    }

    /// Where the HTTP server listens.
    public var listenAddress = ListenAddress(host: "", port: 9755)
    /// The path of the exposition.
    public var telemetryPath = "/metrics"
    /// Connections beyond it displace the longest-idle one.
    public var maxConnections = 4096
    /// Time a client has to send a whole request.
    public var readTimeout: Duration = .seconds(10)
    /// Time a keep-alive connection may sit between requests.
    public var idleTimeout: Duration = .seconds(60)
    /// The exporter-toolkit web config (TLS, basic auth, headers), if any.
    public var webConfigFile: String?
    /// Whether POST /-/reload may reload (SIGHUP always does).
    public var enableLifecycle = false
    /// The places to poll, in the order given.
    public var locations: [Location] = []
    /// Thresholds for locations that set none of their own.
    public var alertDefaults = TemperatureThresholds()
    /// The key; never printed (see `Secret`).
    public var apiKey = Secret("")
    /// Where the key came from, for messages: an environment variable or a file path.
    public var apiKeySource = ""
    /// Base URL of the OpenWeather API (or a proxy, or the simulator).
    public var openWeatherURL = "https://api.openweathermap.org"
    /// Deadline of one request, connect to last byte.
    public var requestTimeout: Duration = .seconds(10)
    /// Language of the condition description.
    public var language = "en"
    /// How often each location is fetched.
    public var pollInterval: Duration = .seconds(600)
    /// The plan's request budget.
    public var maxRequestsPerMinute = 60
    /// Without a success for this long, a location's weather series leave /metrics. Nil: 3 intervals.
    public var maxStaleness: Duration?
    public var logLevel = LogLevel.info
    public var logFormat = LogFormat.logfmt
    /// Serve simulated data from the built-in simulator; no key, no network.
    public var demo = false
    /// The JSON file read at start and on reload, if any.
    public var configFile: String?
    /// Things worth a warning line at start (a short interval, a key file others can read).
    public var warnings: [String] = []
    /// From this many bytes of plain exposition on it is kept gzipped; not a flag, lowered by tests.
    var gzipAbove = WeatherRendering.gzipAbove

    public init() {}

    /// The interval actually used: stretched so that every location fits the
    /// request budget, at the poller's spacing of 61 s / limit between requests.
    public var effectivePollInterval: Duration {
        let minimum = Duration.milliseconds(Int64((61_000.0 * Double(locations.count) / Double(maxRequestsPerMinute)).rounded(.up)))
        return max(pollInterval, minimum)
    }

    public var effectiveMaxStaleness: Duration { maxStaleness ?? effectivePollInterval * 3 }

    /// Each location's thresholds after the defaults are applied.
    public func thresholds(for location: Location) -> TemperatureThresholds {
        location.alerts.resolved(defaults: alertDefaults)
    }
}

/// A string that never shows itself in logs, errors or dumps.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let value: String

    public init(_ value: String) { self.value = value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}
