import Exposition
import OpenWeather

/// One OpenWeather endpoint polled per location, and the metric families it writes. Adding an
/// endpoint is adding one of these (its decoding lives in `OpenWeather`) and listing it in `all`:
/// the schedule, the budget, the store and the renderer take any source alike.
protocol Source: Sendable {
    /// The collector word: `--collector.NAME`, the `source` label and the config file's `collector.NAME`.
    var name: String { get }
    /// One line for `--help`.
    var summary: String { get }
    var enabledByDefault: Bool { get }
    /// How often a location is polled; a resolver's retry after an answer that found nothing.
    var defaultInterval: Duration { get }
    /// The interval with `--demo`, short enough that every family shows within a minute.
    var demoInterval: Duration { get }
    /// A resolver turns a location's name into coordinates, once; the other sources of that location
    /// wait for it. A resolver applies only to locations given by name, the others to every location.
    var resolves: Bool { get }
    /// The request for `location`, at `coordinates` (nil only for a resolver).
    func request(for location: Location, at coordinates: Coordinates?, language: String) -> APIRequest
    /// The reading the collector writes (a resolver's is a `ResolvedPlace`); absurd values are `.decode`.
    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> any Sendable
    /// Every family it writes, with HELP and TYPE, each series with `location` as its first label.
    var families: [MetricFamily] { get }
    /// Set when its lines depend on the render's `now` (a forecast read at now + H): a location with
    /// a fresh reading of it is re-rendered whenever `floor(now / timePeriod)` moves.
    var timePeriod: Double? { get }
    /// `shard`'s lines of `families`, from each location's fresh reading in `slot`.
    func appendSeries(of shard: ShardSeries, slot: Int, to lines: inout FamilyLines)
    /// The sources whose requests this one makes unnecessary (One Call for weather and forecast):
    /// while it works their jobs are not scheduled, and `readings(standingIn:)` fills their slots.
    var standsIn: [String] { get }
    /// From one of its readings, the readings of the sources it stands in for, by name.
    func readings(standingIn reading: any Sendable) -> [String: any Sendable]
    /// An answer that says the key cannot use this source at all (a subscription missing): the
    /// sources it stands in for then run themselves, and it is retried every `Sources.unavailableRetry`.
    func isUnavailable(_ error: OpenWeatherError) -> Bool
    /// What makes it usable, for the error line when it is not.
    var unavailableHint: String { get }
}

extension Source {
    var resolves: Bool { false }
    var demoInterval: Duration { defaultInterval }
    var families: [MetricFamily] { [] }
    var timePeriod: Double? { nil }
    var standsIn: [String] { [] }
    func readings(standingIn reading: any Sendable) -> [String: any Sendable] { [:] }
    func isUnavailable(_ error: OpenWeatherError) -> Bool { false }
    var unavailableHint: String { "" }
    func appendSeries(of shard: ShardSeries, slot: Int, to lines: inout FamilyLines) {}
}

/// Every source, in `source` label order (the order a location's health lines are written in).
enum Sources {
    static let all: [any Source] = [AirPollutionSource(), ForecastSource(), GeocodingSource(), OneCallSource(), WeatherSource()]

    /// How often a source that said it cannot be used (`isUnavailable`) is tried again.
    static let unavailableRetry = Duration.seconds(3600)

    static func named(_ name: String) -> (any Source)? { all.first { $0.name == name } }

    /// Names a source had before it took its config-file word: still read in flags and state files.
    static let formerNames = ["air-pollution": "air_pollution"]
}
