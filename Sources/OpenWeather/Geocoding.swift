/// What a user wrote to name a place instead of its coordinates.
public enum PlaceQuery: Sendable, Equatable, CustomStringConvertible {
    /// `city[,state][,country]`, as OpenWeather's direct geocoding reads it (`state` only for the US).
    case name(String)
    /// `code,country`, e.g. `94040,US`.
    case zip(String)

    /// As the user writes it in a `--location` flag.
    public var description: String {
        switch self {
        case .name(let query): query
        case .zip(let code): "zip:\(code)"
        }
    }
}

/// A place as the geocoder names it.
public struct Place: Sendable, Equatable {
    public var name: String
    /// nil when the geocoder gives none (it does for the US, and for many other countries).
    public var state: String?
    /// ISO 3166 code.
    public var country: String
    public var latitude: Double
    public var longitude: Double

    public init(name: String, state: String?, country: String, latitude: Double, longitude: Double) {
        self.name = name
        self.state = state
        self.country = country
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// `/geo/1.0/direct` (names) and `/geo/1.0/zip` (postal codes): a place resolved to coordinates.
public enum Geocoding {
    /// OpenWeather's cap on direct matches; enough to tell a user how ambiguous a name is.
    static let matchLimit = 5

    public static func request(_ query: PlaceQuery) -> APIRequest {
        switch query {
        case .name(let text):
            APIRequest(path: "/geo/1.0/direct", query: [.init("q", text), .init("limit", String(matchLimit))])
        case .zip(let code):
            APIRequest(path: "/geo/1.0/zip", query: [.init("zip", code)])
        }
    }

    /// By name: the matches, best first, empty when nothing matches. By postal code: the one
    /// place (an unknown code is a 404, thrown by the transport before this).
    public static func decode(_ body: [UInt8], for query: PlaceQuery) throws(OpenWeatherError) -> [Place] {
        switch query {
        case .name: try Fields.decode(body) { (root: Fields) throws(FieldError) in try root.elements().map(place) }
        case .zip: try Fields.decode(body) { (root: Fields) throws(FieldError) in [try place(root.requireObject())] }
        }
    }

    /// Field policy. Required in every match: `name`, `lat` and `lon`; a broken match fails the answer
    /// rather than being skipped, since the next one is another place, and a place is resolved once.
    /// Texts, `""` or none when absent or not strings: `state`, `country`. Not read: `local_names`.
    private static func place(_ fields: Fields) throws(FieldError) -> Place {
        Place(
            name: try fields.string("name"),
            state: fields.optionalText("state").flatMap { $0.isEmpty ? nil : $0 },
            country: fields.optionalText("country") ?? "",
            latitude: try fields.number("lat", -90...90),
            longitude: try fields.number("lon", -180...180)
        )
    }
}
