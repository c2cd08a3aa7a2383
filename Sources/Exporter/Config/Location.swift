import Glibc
import OpenWeather

/// A place to poll, as the user configured it.
struct Location: Sendable, Equatable {
    /// Where the place is: coordinates, or a name or postal code the `geocoding` source resolves.
    enum Place: Sendable, Equatable, CustomStringConvertible {
        case coordinates(latitude: Double, longitude: Double)
        case query(PlaceQuery)

        var description: String {
            switch self {
            case .coordinates(let latitude, let longitude): "\(latitude),\(longitude)"
            case .query(let query): query.description
            }
        }
    }

    /// The `location` label; unique.
    var name: String
    var place: Place
    /// What this location says about alert thresholds; resolved against the global defaults.
    var alerts: AlertSetting

    init(name: String, place: Place, alerts: AlertSetting = .inherit) {
        self.name = name
        self.place = place
        self.alerts = alerts
    }

    init(name: String, latitude: Double, longitude: Double, alerts: AlertSetting = .inherit) {
        self.init(name: name, place: .coordinates(latitude: latitude, longitude: longitude), alerts: alerts)
    }

    /// The positions of `locations` in the exposition's order: by the bytes of their `location`
    /// label, which every per-location series carries first.
    static func labelOrder(_ locations: [Location]) -> [Int] {
        locations.indices.sorted { bytesPrecede(locations[$0].name, locations[$1].name) }
    }

    /// Byte order of the names' UTF-8, compared with memcmp where the bytes are contiguous.
    private static func bytesPrecede(_ lhs: String, _ rhs: String) -> Bool {
        let fast = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order != 0 ? order < 0 : left.count < right.count
            }
        }
        return (fast ?? nil) ?? lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// What makes a location the same one across a reload or a restart: its name and its place,
    /// coordinates or query (a location whose name or place changed starts afresh). The state file
    /// holds it as this text, so changing the text forgets every saved location.
    var identity: String {
        switch place {
        case .coordinates: "\(name)\u{0}at:\(place)"
        case .query: "\(name)\u{0}query:\(place)"
        }
    }

    /// A source at the location with this `identity`: a schedule job's key, a kept body's.
    static func identity(_ identity: String, source: String) -> String { identity + "\u{0}" + source }

    /// The configured coordinates; nil for a place given by name.
    var coordinates: Coordinates? {
        if case .coordinates(let latitude, let longitude) = place {
            return Coordinates(latitude: latitude, longitude: longitude)
        }
        return nil
    }

    /// The geocoder's question; nil for a place given by coordinates.
    var query: PlaceQuery? {
        if case .query(let query) = place { return query }
        return nil
    }
}

struct Coordinates: Sendable, Equatable {
    var latitude: Double
    var longitude: Double
}
