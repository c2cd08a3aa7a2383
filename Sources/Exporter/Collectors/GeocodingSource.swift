import Exposition
import OpenWeather

/// Places given by name or postal code, resolved to coordinates through `/geo/1.0/direct` or
/// `/geo/1.0/zip`, once: a place does not move. Its metrics are its health and the names it
/// gives `openweather_location_info`.
struct GeocodingSource: Source {
    static let name = "geocoding"
    static let summary =
        """
        Places given by name or postal code (/geo/1.0/direct, /geo/1.0/zip), resolved once; a name with no match is \
        retried at this interval.
        """
    static let enabledByDefault = true
    static let defaultInterval = Duration.seconds(3600)
    static let resolves = true

    func request(for poll: PollFacts) -> APIRequest {
        Geocoding.request(poll.location.query ?? .name(poll.location.name))
    }

    /// None of its own: the place it finds is the location's coordinates, and `openweather_location_info`
    /// (the weather's) shows its name.
    var families: [MetricFamily] { [] }
    func appendSeries(of shard: ShardSeries, readings: ShardReadings<ResolvedPlace>, to lines: CollectorLines) {}

    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> ResolvedPlace {
        let query = location.query ?? .name(location.name)
        let places = try Geocoding.decode(body, for: query)
        guard let first = places.first else {
            throw .noMatch(
                """
                no place matches \"\(query)\": check the spelling, add a state or country code (Springfield,IL,US), or \
                give coordinates as NAME=LAT,LON
                """
            )
        }
        return ResolvedPlace(place: first, others: places.count - 1)
    }

    func resolvedPlace(of reading: ResolvedPlace) -> ResolvedPlace? { reading }
}

/// What the geocoder made of a location: its best match, and how many others it offered.
struct ResolvedPlace: Sendable, Equatable {
    var place: Place
    var others: Int
}
