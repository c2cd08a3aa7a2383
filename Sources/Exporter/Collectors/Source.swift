import Exposition
import OpenWeather

/// One OpenWeather endpoint polled per location, typed by what it reads, and the metric families it
/// writes. Adding an endpoint is one of these in its own file (its decoding lives in `OpenWeather`)
/// and its line in `Sources.all`; the schedule, the budget, the store, the renderer and the settings
/// take any source alike, through the erased view in `SourceAdapter.swift`.
protocol Source: Sendable {
    /// What one answer decodes to; the collector writes from it.
    associatedtype Reading: Sendable
    /// The values of its own settings (`settings`); `NoOptions` for a source without any.
    associatedtype Options: Sendable = NoOptions

    /// The collector word: `--collector.NAME`, the `source` label and the config file's `collector.NAME`.
    static var name: String { get }
    /// One line for `--help`.
    static var summary: String { get }
    static var enabledByDefault: Bool { get }
    /// How often a location is polled; a resolver's retry after an answer that found nothing.
    static var defaultInterval: Duration { get }
    /// The interval with `--demo`, short enough that every family shows within a minute.
    static var demoInterval: Duration { get }
    /// A resolver turns a location's name into coordinates, once; the other sources of that location
    /// wait for it. A resolver applies only to locations given by name, the others to every location.
    static var resolves: Bool { get }
    /// The name it had before it took its config-file word: still read in flags and state files.
    static var formerName: String? { get }
    /// Its settings beyond its switch and interval (`--collector.NAME.*`), which make `options`.
    static var settings: SourceSettings<Options> { get }
    /// The sources whose requests this one makes unnecessary (One Call for weather and forecast), and
    /// how their readings come out of its own: while it works their jobs are not scheduled.
    static var standsIn: [StandIn<Reading>] { get }

    /// With the default options; the loader sets them from `settings`.
    init()
    var options: Options { get set }

    /// The request for `location`, at `coordinates` (nil only for a resolver).
    func request(for location: Location, at coordinates: Coordinates?, language: String) -> APIRequest
    /// The reading the collector writes, from an answer or from the body `fetch` kept; absurd values are `.decode`.
    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> Reading
    /// One poll: its requests, each sent through `get` (which counts it under the budgets), and the
    /// reading with the body the state file keeps (`decode` reads it back). By default one request,
    /// decoded; a source billed per part (One Call 4.0) asks only for the parts due, from `poll.previous`.
    func fetch(
        _ poll: Poll<Reading>, get: (APIRequest) throws(OpenWeatherError) -> [UInt8]
    ) throws(OpenWeatherError) -> Fetched<Reading>
    /// The requests one poll sends on average, by part, when polled every `interval`: what the request
    /// plan counts. One request (`[]`) unless `fetch` sends several.
    func requestsPerPoll(every interval: Duration) -> [(part: String, requests: Double)]
    /// Every family it writes, with HELP and TYPE, each series with `location` as its first label.
    /// Required, as `appendSeries` is: a source that forgot them would export nothing, silently.
    var families: [MetricFamily] { get }
    /// Set when its lines depend on the render's `now` (a forecast read at now + H): a location with
    /// a fresh reading of it is re-rendered whenever `floor(now / timePeriod)` moves.
    var timePeriod: Double? { get }
    /// `shard`'s lines of `families`, from each location's fresh reading.
    func appendSeries(of shard: ShardSeries, readings: ShardReadings<Reading>, to lines: CollectorLines)
    /// An answer that says the key cannot use this source at all (a subscription missing): the
    /// sources it stands in for then run themselves, and it is retried every `Sources.unavailableRetry`.
    func isUnavailable(_ error: OpenWeatherError) -> Bool
    /// What makes it usable, for the error line when it is not.
    var unavailableHint: String { get }
    /// The landing page's glance at a location (its temperature), from a reading; nil for none.
    func glance(at reading: Reading) -> String?
    /// What the answer a reading came from lacked (optional fields left out, list entries skipped):
    /// counted per poll and logged once. Every source that decodes an answer gives its reading's.
    func gaps(of reading: Reading) -> AnswerGaps
    /// A resolver's answer read as the place it found (where the location is polled, what the poller
    /// logs); nil for a source that does not resolve. The engine asks this instead of casting readings.
    func resolvedPlace(of reading: Reading) -> ResolvedPlace?
    /// Requests it may send in a UTC day (an endpoint billed or capped per day, One Call); nil for no limit.
    var maxRequestsPerDay: Int? { get }
    /// The most requests one poll can send: a poll starts only while the day's allowances have room
    /// for all of them, so none is ever exceeded.
    var maxRequestsPerPoll: Int { get }
}

extension Source {
    func fetch(
        _ poll: Poll<Reading>, get: (APIRequest) throws(OpenWeatherError) -> [UInt8]
    ) throws(OpenWeatherError) -> Fetched<Reading> {
        let body = try get(request(for: poll.location, at: poll.coordinates, language: poll.language))
        return Fetched(reading: try decode(body, for: poll.location), body: body)
    }
    func requestsPerPoll(every interval: Duration) -> [(part: String, requests: Double)] { [] }
    static var demoInterval: Duration { defaultInterval }
    static var resolves: Bool { false }
    static var formerName: String? { nil }
    static var standsIn: [StandIn<Reading>] { [] }
    var timePeriod: Double? { nil }
    func isUnavailable(_ error: OpenWeatherError) -> Bool { false }
    var unavailableHint: String { "" }
    func glance(at reading: Reading) -> String? { nil }
    func gaps(of reading: Reading) -> AnswerGaps { AnswerGaps() }
    func resolvedPlace(of reading: Reading) -> ResolvedPlace? { nil }
    var maxRequestsPerDay: Int? { nil }
    var maxRequestsPerPoll: Int { 1 }
}

/// What a poll of one location starts from.
struct Poll<Reading: Sendable>: Sendable {
    var location: Location
    /// Nil only for a resolver.
    var coordinates: Coordinates?
    var language: String
    /// This source's last reading of the location, if any (a source asking in parts keeps the rest).
    var previous: Reading?
    /// Wall-clock Unix seconds when the poll starts.
    var now: Double
    /// Seconds between polls of the source as planned (its interval, stretched to the budgets).
    var interval: Double
    /// Seconds between polls as configured, before the plan stretched `interval`: parts with a pace of
    /// their own count it in polls of this, as the plan counted them, so they stretch alike.
    var configured: Double
}

/// A poll's reading, and the body the state file keeps for it.
struct Fetched<Reading: Sendable>: Sendable {
    var reading: Reading
    var body: [UInt8]
}

/// The options of a source without settings of its own.
struct NoOptions: Sendable {}

extension Source where Options == NoOptions {
    static var settings: SourceSettings<NoOptions> { SourceSettings(flags: []) { _, _ throws(ConfigError) in } }
    var options: NoOptions {
        get { NoOptions() }
        set {}
    }
}

/// A source's own settings: their flags (each declared with `Setting`, so `--help`, the config file
/// and the environment read them as they read every other), and how their values make its options.
struct SourceSettings<Options: Sendable>: Sendable {
    /// In `--help` order, after the source's switch and interval.
    let flags: [Flag]
    /// Sets `options` from what was given; what was not given keeps its default.
    let read: @Sendable (RawSettings, inout Options) throws(ConfigError) -> Void
}

/// A source whose reading another's answer holds (One Call's holds the weather's and the forecast's),
/// named by its type and derived with its reading's type, so a mismatch does not compile.
struct StandIn<Reading: Sendable>: Sendable {
    let name: String
    let derive: @Sendable (Reading) -> any Sendable

    static func `for`<Other: Source>(
        _ other: Other.Type, _ derive: @escaping @Sendable (Reading) -> Other.Reading
    ) -> StandIn {
        StandIn(name: Other.name, derive: derive)
    }
}

/// Every source, in `source` label order (the order a location's health lines are written in).
enum Sources {
    static let all: [any Source] = [
        WeatherSource(), ForecastSource(), AirPollutionSource(), AirPollutionForecastSource(), OneCallSource(),
        OneCall4Source(), GeocodingSource(),
    ].sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }

    /// How often a source that said it cannot be used (`isUnavailable`) is tried again.
    static let unavailableRetry = Duration.seconds(3600)

    static func named(_ name: String) -> (any Source)? { all.first { $0.name == name } }

    /// Names sources had before they took their config-file words: still read in flags and state files.
    static let formerNames = Dictionary(
        uniqueKeysWithValues: all.compactMap { source in source.formerName.map { ($0, source.name) } })
}
