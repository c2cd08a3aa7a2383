/// The real places the simulator knows, the one list behind every endpoint: current
/// weather names them, geocoding finds them, air pollution knows how polluted they are.
struct SimulatedPlace: Equatable {
    var name: String
    /// nil where OpenWeather's geocoder gives none.
    var state: String?
    /// The two-letter code for the US, which OpenWeather's `q` accepts for states.
    var stateCode: String?
    /// ISO 3166; nil only for the unnamed open sea.
    var country: String?
    var latitude: Double
    var longitude: Double
    /// How dirty the air is, compared with a typical mid-sized European city (1).
    var pollution: Double
    /// Metres above the sea, which the weather model cools by the standard lapse rate.
    var elevation: Double

    init(
        _ name: String, state: String? = nil, stateCode: String? = nil, country: String?,
        _ latitude: Double, _ longitude: Double, pollution: Double, elevation: Double = 0
    ) {
        self.elevation = elevation
        self.name = name
        self.state = state
        self.stateCode = stateCode
        self.country = country
        self.latitude = latitude
        self.longitude = longitude
        self.pollution = pollution
    }
}

enum Places {
    /// In geocoding rank order: for an ambiguous name the first listed is the best match,
    /// as OpenWeather ranks London, England before London, Ontario.
    static let all = [
        SimulatedPlace("London", state: "England", country: "GB", 51.5074, -0.1278, pollution: 1.3),
        SimulatedPlace("London", state: "Ontario", country: "CA", 42.9832406, -81.243372, pollution: 0.6),
        SimulatedPlace("London", state: "Ohio", stateCode: "OH", country: "US", 39.8864493, -83.448253, pollution: 0.5),
        SimulatedPlace("Paris", state: "Ile-de-France", country: "FR", 48.8566, 2.3522, pollution: 1.4),
        SimulatedPlace("Paris", state: "Texas", stateCode: "TX", country: "US", 33.6609, -95.5555, pollution: 0.5),
        SimulatedPlace("New York", state: "New York", stateCode: "NY", country: "US", 40.7128, -74.006, pollution: 1.4),
        SimulatedPlace(
            "Springfield", state: "Illinois", stateCode: "IL", country: "US", 39.7817, -89.6501, pollution: 0.7),
        SimulatedPlace(
            "Springfield", state: "Missouri", stateCode: "MO", country: "US", 37.2090, -93.2923, pollution: 0.7),
        SimulatedPlace(
            "Springfield", state: "Massachusetts", stateCode: "MA", country: "US", 42.1015, -72.5898, pollution: 0.8),
        SimulatedPlace("Tokyo", country: "JP", 35.6762, 139.6503, pollution: 1.2),
        SimulatedPlace("Sydney", state: "New South Wales", country: "AU", -33.8688, 151.2093, pollution: 0.7),
        SimulatedPlace("Barcelona", state: "Catalonia", country: "ES", 41.3888, 2.159, pollution: 1.2),
        SimulatedPlace("Zocca", state: "Emilia-Romagna", country: "IT", 44.34, 10.99, pollution: 0.4),
        SimulatedPlace("Longyearbyen", state: "Svalbard", country: "SJ", 78.2232, 15.6356, pollution: 0.15),
        SimulatedPlace("Athens", state: "Attica", country: "GR", 37.9838, 23.7275, pollution: 1.6),
        SimulatedPlace("Athens", state: "Georgia", stateCode: "GA", country: "US", 33.9519, -83.3576, pollution: 0.6),
        SimulatedPlace("Berlin", country: "DE", 52.52, 13.405, pollution: 1.0),
        SimulatedPlace("Madrid", state: "Community of Madrid", country: "ES", 40.4168, -3.7038, pollution: 1.5),
        SimulatedPlace("Rome", state: "Lazio", country: "IT", 41.9028, 12.4964, pollution: 1.3),
        SimulatedPlace("Seville", state: "Andalusia", country: "ES", 37.3891, -5.9845, pollution: 1.1),
        SimulatedPlace(
            "Mountain View", state: "California", stateCode: "CA", country: "US", 37.3861, -122.0839, pollution: 0.8),
        // The highest town on Earth: below 0 °C within any 24 hours of the year, the demo's frost.
        SimulatedPlace(
            "La Rinconada", state: "Puno", country: "PE", -14.6306, -69.4456, pollution: 0.3, elevation: 5100),
    ]

    /// Postal codes `/geo/1.0/zip` knows, keyed `CODE,COUNTRY`; its answers carry the code's own centre.
    static let zips: [String: SimulatedPlace] = [
        "94040,US": SimulatedPlace("Mountain View", country: "US", 37.3855, -122.088, pollution: 0.8),
        "10001,US": SimulatedPlace("New York", country: "US", 40.7484, -73.9967, pollution: 1.4),
        "62701,US": SimulatedPlace("Springfield", country: "US", 39.8017, -89.6436, pollution: 0.7),
        "75001,FR": SimulatedPlace("Paris", country: "FR", 48.8626, 2.3363, pollution: 1.4),
        "08001,ES": SimulatedPlace("Barcelona", country: "ES", 41.3799, 2.1732, pollution: 1.2),
    ]

    /// The known place at these coordinates (to a quarter of a degree), else the nameless open sea.
    static func near(latitude: Double, longitude: Double) -> SimulatedPlace {
        all.first { abs($0.latitude - latitude) < 0.25 && abs($0.longitude - longitude) < 0.25 }
            ?? SimulatedPlace(
                "", country: nil, latitude, longitude,
                pollution: 0.2 + 0.9 * WeatherModel.unitHash(latitude * 100, longitude * 100))
    }

    /// `/geo/1.0/direct`'s reading of `q`: `city`, `city,country` or `city,state,country`, any case;
    /// the state may be written out or (in the US) as its two-letter code.
    static func matching(_ query: String) -> [SimulatedPlace] {
        let parts = query.split(separator: ",", omittingEmptySubsequences: false).map { trimmed($0).lowercased() }
        guard let name = parts.first, !name.isEmpty else { return [] }
        let state = parts.count == 3 ? parts[1] : nil
        let country = parts.count >= 2 ? parts[parts.count - 1] : nil
        return all.filter { place in
            place.name.lowercased() == name
                && (country.map { $0.isEmpty || $0 == place.country?.lowercased() } ?? true)
                && (state.map { $0.isEmpty || $0 == place.state?.lowercased() || $0 == place.stateCode?.lowercased() }
                    ?? true)
        }
    }

    /// `/geo/1.0/zip`'s reading of `zip`: `code,country`, the country US when left out.
    static func zip(_ query: String) -> (code: String, place: SimulatedPlace)? {
        let parts = query.split(separator: ",", omittingEmptySubsequences: false).map { trimmed($0).uppercased() }
        guard let code = parts.first, parts.count <= 2 else { return nil }
        return zips["\(code),\(parts.count == 2 ? parts[1] : "US")"].map { (code, $0) }
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
