import OpenWeather
import YAML

/// The `locations:` section: each item a place as --location takes it or a mapping of its keys, with its alerts.
extension ConfigFileReader {
    mutating func locations(_ node: YAMLNode, into settings: inout RawSettings) throws(ConfigError) {
        guard let items = node.sequence ?? (node.isNull ? [] : nil) else {
            throw fail(
                node.position,
                """
                `locations` must be a list of items (- London, or - name: London, then latitude: and longitude:, or \
                query:, or zip:), not \(node.kindDescription)
                """
            )
        }
        settings.locations = []
        for (index, item) in items.enumerated() {
            let key = "locations[\(index)]"
            let place = origin(item.position, key)
            let location: Location
            if let scalar = item.scalar, !scalar.isNull {
                // The text --location takes (a bare city, NAME=LAT,LON, ...), read as the flag reads it.
                location = try LocationSpec.parse(
                    scalar.text, origin: place,
                    example:
                        """
                        for example - London, - \"Home=Springfield,IL,US\", - \"London=51.5074,-0.1278\" or \
                        - {name: London, latitude: 51.5074, longitude: -0.1278}
                        """
                )
            } else {
                location = try self.location(item, at: key)
            }
            settings.locations.append(.init(text: location.name, origin: place, location: location))
        }
        settings.locationsOrigin = "config file \"\(file)\""
    }

    func number(_ node: YAMLNode, _ key: String) throws(ConfigError) -> String {
        guard let scalar = node.scalar, !scalar.isNull else {
            throw fail(node.position, "`\(key)` must be a number, not \(node.kindDescription)")
        }
        return scalar.text
    }

    mutating func location(_ item: YAMLNode, at key: String) throws(ConfigError) -> Location {
        let shape = "name and latitude and longitude, name and query (City,State,Country), or name and zip (94040,US)"
        guard let entries = item.mapping else {
            throw fail(
                item.position,
                """
                `\(key)` must be a mapping of \(shape), or a place as --location takes it (London, \
                \"Home=Springfield,IL,US\"), not \(item.kindDescription)
                """
            )
        }
        let known = Self.locationKeys
        for entry in entries where !known.contains(entry.key) {
            let near = known.map { ($0, CommandLineFlags.editDistance($0, entry.key)) }.min { $0.1 < $1.1 }
            let hint = near.flatMap { $0.1 <= 3 ? " (did you mean `\($0.0)`?)" : nil } ?? ""
            throw fail(
                entry.keyPosition,
                """
                unknown key `\(key).\(entry.key)`\(hint); a location takes name, latitude and longitude (or query, or \
                zip) and alerts
                """
            )
        }
        guard let nameNode = item["name"], let name = nameNode.scalar?.text, !nameNode.isNull else {
            throw fail(item.position, "`\(key).name` is missing or not a single value: give each location a name")
        }
        let place = origin(item.position, key)
        try LocationSpec.validate(name: name, origin: place)
        let alerts = try alerts(item["alerts"], at: "\(key).alerts")
        let given = ["latitude", "longitude", "query", "zip"].filter { item[$0] != nil }
        switch Set(given) {
        case ["query"], ["zip"]:
            let node = item[given[0]]!
            guard let text = node.scalar?.text.trimmed, !node.isNull, !text.isEmpty else {
                throw fail(
                    node.position,
                    "`\(key).\(given[0])` of \"\(name)\" must be a non-empty value, like Springfield,IL,US or 94040,US")
            }
            let query: PlaceQuery = given[0] == "zip" ? .zip(text) : .name(text)
            return Location(name: name, place: .query(query), alerts: alerts)
        case ["latitude", "longitude"]:
            func coordinate(_ field: String, _ range: ClosedRange<Double>) throws(ConfigError) -> Double {
                let node = item[field]!
                return try LocationSpec.coordinate(
                    try number(node, "\(key).\(field)"), what: field, range: range, name: name,
                    origin: origin(node.position, "\(key).\(field)"))
            }
            return Location(
                name: name, latitude: try coordinate("latitude", -90...90),
                longitude: try coordinate("longitude", -180...180),
                alerts: alerts)
        case ["latitude"], ["longitude"]:
            throw fail(
                item.position,
                """
                `\(key)` (\"\(name)\") has \(given[0]) but not \(given[0] == "latitude" ? "longitude" : "latitude"): \
                give both
                """
            )
        case []:
            throw fail(item.position, "`\(key)` (\"\(name)\") says nowhere: give \(shape)")
        default:
            throw fail(
                item.position,
                """
                `\(key)` (\"\(name)\") gives \(given.joined(separator: ", ")): give one of latitude and longitude, \
                query, or zip
                """
            )
        }
    }

    mutating func alerts(_ node: YAMLNode?, at key: String) throws(ConfigError) -> AlertSetting {
        guard let node, !node.isNull else { return .inherit }
        let thresholdsExample =
            """
            a mapping of thresholds (temperature_above_celsius: 35, temperature_below_celsius: 32F, \
            wind_gust_meters_per_second: 20, ...)
            """
        if let scalar = node.scalar {
            // The flag's word (alerts=off) as well as YAML's false; on or true: the defaults.
            guard let on = try? Parse.boolean(.init(text: scalar.text, origin: key)) else {
                throw fail(
                    node.position,
                    """
                    `\(key)` is \"\(scalar.text)\": give off (or false) for no weather alert at this place, or \
                    \(thresholdsExample)
                    """
                )
            }
            return on ? .inherit : .off
        }
        guard let entries = node.mapping else {
            throw fail(
                node.position, "`\(key)` must be \(thresholdsExample) or off to opt out, not \(node.kindDescription)")
        }
        var thresholds = AlertThresholds()
        let fields = AlertThresholds.Field.allCases
        let known = fields.map(\.key)
        for entry in entries {
            var name = entry.key
            if !known.contains(name) {
                let snake = Settings.snakeCase(name)
                guard known.contains(snake) else {
                    let near = known.map { ($0, CommandLineFlags.editDistance($0, snake)) }.min { $0.1 < $1.1 }
                    let hint = near.flatMap { $0.1 <= 3 ? " (did you mean `\($0.0)`?)" : nil } ?? ""
                    throw fail(
                        entry.keyPosition,
                        """
                        unknown key `\(key).\(entry.key)`\(hint); use \(known.dropLast().joined(separator: ", ")) or \
                        \(known.last!)
                        """
                    )
                }
                warnings.append(
                    """
                    config file \"\(file)\", \(entry.keyPosition): `\(key).\(name)` is the old name of \
                    `\(key).\(snake)`; it still works, but rename it to \(snake)
                    """
                )
                name = snake
            }
            let field = fields.first { $0.key == name }!
            let text = try number(entry.value, "\(key).\(name)")
            guard field.read(text, into: &thresholds) else {
                throw fail(entry.value.position, "`\(key).\(name)` is \"\(text)\": give \(field.expected)")
            }
        }
        return .custom(thresholds)
    }
}
