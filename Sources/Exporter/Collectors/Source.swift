import Exposition
import OpenWeather

/// One OpenWeather endpoint polled per location, typed by what it reads, and the metric families it
/// writes. Adding an endpoint is one of these in its own file (its decoding lives in `OpenWeather`)
/// and its line in `Sources.all`; the schedule, the budget, the store, the renderer and the settings
/// take any source alike, through the erased view in `SourceAdapter.swift`.
protocol Source: Sendable {
    // MARK: Required: what every source writes.

    /// What one answer decodes to; the collector writes from it.
    associatedtype Reading: Sendable

    /// The collector word: `--collector.NAME`, the `source` label and the config file's `collector.NAME`.
    static var name: String { get }
    /// One line for `--help`.
    static var summary: String { get }
    static var enabledByDefault: Bool { get }
    /// How often a location is polled; a resolver's retry after an answer that found nothing.
    static var defaultInterval: Duration { get }

    /// The request for one poll, built from its facts: where (no coordinates only for a resolver), in
    /// which language, and when (an endpoint that asks for a date reads `poll.now`).
    func request(for poll: PollFacts) -> APIRequest
    /// The reading the collector writes, from an answer or from the body `fetch` kept; absurd values are `.decode`.
    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> Reading
    /// Every family it writes, with HELP and TYPE, each series with `location` as its first label.
    /// Required, as `appendSeries` is: a source that forgot them would export nothing, silently.
    var families: [MetricFamily] { get }
    /// `shard`'s lines of `families`, from each location's fresh reading.
    func appendSeries(of shard: ShardSeries, readings: ShardReadings<Reading>, to lines: CollectorLines)

    // MARK: Defaulted: what a source may write; each says its default, given in the extension below.

    /// The values of its own settings (`settings`). Default: `NoOptions`, for a source without any.
    associatedtype Options: Sendable = NoOptions
    /// Its settings beyond its switch and interval (`--collector.NAME.*`), which make `options`.
    /// Default (with `NoOptions`): none.
    static var settings: SourceSettings<Options> { get }
    /// With the default options; the loader sets them from `settings`. A struct whose stored properties
    /// all have defaults gets it from Swift.
    init()
    /// Its settings' values, as the loader read them. Default (with `NoOptions`): `NoOptions()`.
    var options: Options { get set }
    /// The interval with `--demo`, short enough that every family shows within a minute. Default: `defaultInterval`.
    static var demoInterval: Duration { get }
    /// A resolver turns a location's name into coordinates, once; the other sources of that location
    /// wait for it. A resolver applies only to locations given by name, the others to every location.
    /// Default: false.
    static var resolves: Bool { get }
    /// The name it had before it took its config-file word: still read in flags and state files. Default: nil.
    static var formerName: String? { get }
    /// The sources whose requests this one makes unnecessary (One Call for weather and forecast), and
    /// how their readings come out of its own: while it works their jobs are not scheduled. Default: none.
    static var standsIn: [StandIn<Reading>] { get }
    /// One poll: its requests, each sent through `get` (which counts it under the budgets), and the
    /// reading with the body the state file keeps (`decode` reads it back). Default: one request
    /// (`request(for: poll.facts)`), decoded. Only a source that asks in parts writes its own (One Call
    /// 4.0 asks only for the parts due, from `poll.previous`): a request that needs the date has it in its facts.
    func fetch(
        _ poll: Poll<Reading>, get: (APIRequest) throws(OpenWeatherError) -> [UInt8]
    ) throws(OpenWeatherError) -> Fetched<Reading>
    /// The requests one poll sends on average, by part, when polled every `interval`: what the request
    /// plan counts. Default: one request (`[]`); a source whose `fetch` sends several says how many.
    func requestsPerPoll(every interval: Duration) -> [(part: String, requests: Double)]
    /// The most requests one poll can send: a poll starts only while the day's allowances have room
    /// for all of them, so none is ever exceeded. Default: 1.
    var maxRequestsPerPoll: Int { get }
    /// Requests it may send in a UTC day (an endpoint billed or capped per day, One Call). Default: nil, no limit.
    var maxRequestsPerDay: Int? { get }
    /// Set when its lines depend on the render's `now` (a forecast read at now + H): a location with
    /// a fresh reading of it is re-rendered whenever `floor(now / timePeriod)` moves. Default: nil.
    var timePeriod: Double? { get }
    /// For an answer that says the key cannot use this source at all (a subscription missing), what
    /// makes it usable, for the error line; nil for any other failure. While it is unusable the sources
    /// it stands in for run themselves, and it is retried every `Sources.unavailableRetry`. Default: nil, never.
    func unavailableHint(for error: OpenWeatherError) -> String?
    /// What the answer a reading came from lacked (optional fields left out, list entries skipped):
    /// counted per poll and logged once. Every source that decodes an answer gives its reading's.
    /// Default: nothing lacked.
    func gaps(of reading: Reading) -> AnswerGaps
    /// The landing page's glance at a location (its temperature), from a reading. Default: nil, none.
    func glance(at reading: Reading) -> String?
    /// A resolver's answer read as the place it found (where the location is polled, what the poller
    /// logs). The engine asks this instead of casting readings. Default: nil, for a source that does not resolve.
    func resolvedPlace(of reading: Reading) -> ResolvedPlace?
}

/// The defaults of the second group, in its order (`settings` and `options` with `NoOptions`, below).
extension Source {
    static var demoInterval: Duration { defaultInterval }
    static var resolves: Bool { false }
    static var formerName: String? { nil }
    static var standsIn: [StandIn<Reading>] { [] }
    func fetch(
        _ poll: Poll<Reading>, get: (APIRequest) throws(OpenWeatherError) -> [UInt8]
    ) throws(OpenWeatherError) -> Fetched<Reading> {
        let body = try get(request(for: poll.facts))
        return Fetched(reading: try decode(body, for: poll.facts.location), body: body)
    }
    func requestsPerPoll(every interval: Duration) -> [(part: String, requests: Double)] { [] }
    var maxRequestsPerPoll: Int { 1 }
    var maxRequestsPerDay: Int? { nil }
    var timePeriod: Double? { nil }
    func unavailableHint(for error: OpenWeatherError) -> String? { nil }
    func gaps(of reading: Reading) -> AnswerGaps { AnswerGaps() }
    func glance(at reading: Reading) -> String? { nil }
    func resolvedPlace(of reading: Reading) -> ResolvedPlace? { nil }
}

/// Where a poll asks, in which language, and when: what every request is built from.
struct PollFacts: Sendable {
    var location: Location
    /// Nil only for a resolver.
    var coordinates: Coordinates?
    var language: String
    /// Wall-clock Unix seconds when the poll starts.
    var now: Double

    /// Where a source asking by coordinates asks. The schedule polls such a source only once the place
    /// has coordinates, so 0 is never sent; it stands for a resolver's poll, which asks by name.
    var latitude: Double { coordinates?.latitude ?? 0 }
    var longitude: Double { coordinates?.longitude ?? 0 }
}

/// What a poll of one location starts from.
struct Poll<Reading: Sendable>: Sendable {
    var facts: PollFacts
    /// This source's last reading of the location, if any (a source asking in parts keeps the rest).
    var previous: Reading?
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

    /// How often a source that said it cannot be used (`unavailableHint(for:)`) is tried again.
    static let unavailableRetry = Duration.seconds(3600)

    static func named(_ name: String) -> (any Source)? { all.first { $0.name == name } }

    /// Names sources had before they took their config-file words: still read in flags and state files.
    static let formerNames = Dictionary(
        uniqueKeysWithValues: all.compactMap { source in source.formerName.map { ($0, source.name) } })
}
