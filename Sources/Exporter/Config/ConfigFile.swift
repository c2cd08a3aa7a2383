import OpenWeather
import YAML

/// The optional config file, YAML (JSON is YAML too). Its keys are the table's (`Settings`):
/// snake_case, nested by the flag's first part (`web: {listen_address: ...}` for `--web.listen-address`).
/// Unknown keys are errors, so a typo never silently falls back to a default; the camelCase keys of
/// the JSON files of older releases still work, each with a warning naming the new key.
enum ConfigFile {
    static func load(path: String, into settings: inout RawSettings) throws(ConfigError) {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: 16 << 20)
        } catch {
            throw ConfigError(
                "cannot read the config file \"\(path)\": \(error); check --config.file and the file's permissions")
        }
        let root: YAMLNode
        do {
            root = try YAML.parse(bytes: bytes)
        } catch {
            throw ConfigError("config file \"\(path)\", \(error.description)")
        }
        settings.configFile = path
        var reader = Reader(path: path)
        try reader.read(root, into: &settings)
    }
}

/// Walks the YAML tree; every error names the file, the line and column, and the fix.
private struct Reader {
    let file: String
    var warnings: [String] = []
    /// The keys of a location item (`location(_:at:)`).
    static let locationKeys = ["name", "latitude", "longitude", "query", "zip", "alerts"]

    init(path: String) { file = path }

    func origin(_ position: YAMLPosition, _ key: String) -> String {
        "config file \"\(file)\", \(position): `\(key)`"
    }

    func fail(_ position: YAMLPosition, _ message: String) -> ConfigError {
        ConfigError("config file \"\(file)\", \(position): \(message)")
    }

    mutating func read(_ root: YAMLNode, into settings: inout RawSettings) throws(ConfigError) {
        if root.isNull { return }
        guard let entries = root.mapping else {
            throw fail(
                root.position,
                "the top level must be a mapping of sections (web:, openweather:, locations:, ...), not \(root.kindDescription)"
            )
        }
        // A location's key moved out of its item leaves the item incomplete too: name the cause first,
        // with the column of the item's keys, which is what puts it back.
        let column =
            root["locations"]?.sequence?.last(where: { $0.mapping != nil }).map {
                " (column \($0.position.column), like the item's other keys)"
            } ?? ""
        for entry in entries
        where ConfigFile.KeyTree.root.children[entry.key] == nil
            && Self.locationKeys.contains(Settings.snakeCase(entry.key))
        {
            throw fail(
                entry.keyPosition,
                "`\(entry.key)` is a key of a location: indent it under its item in `locations:`\(column)")
        }
        try section(entries, tree: ConfigFile.KeyTree.root, path: [], into: &settings)
        settings.warnings += warnings
    }

    /// The key's name in the table: itself, or the snake_case key an old camelCase one stands for (with a warning).
    mutating func resolve(_ entry: YAMLEntry, in tree: ConfigFile.KeyTree, path: [String]) throws(ConfigError) -> String
    {
        if tree.children[entry.key] != nil { return entry.key }
        let full = (path + [entry.key]).joined(separator: ".")
        let snake = Settings.snakeCase(entry.key)
        if snake != entry.key, tree.children[snake] != nil {
            let new = (path + [snake]).joined(separator: ".")
            warnings.append(
                "config file \"\(file)\", \(entry.keyPosition): `\(full)` is the old name of `\(new)`; it still works, but rename it to \(snake)"
            )
            return snake
        }
        if path == ["openweather"], ["api_key", "appid", "key"].contains(snake) {
            throw fail(
                entry.keyPosition,
                "the API key itself does not belong in the file: use `openweather.api_key_file` or $OPENWEATHER_API_KEY"
            )
        }
        if path.isEmpty,
            let flag = Flag.all.first(where: { $0.key == nil && Settings.snakeCase($0.name) == snake })
                ?? (snake == "config" ? Settings.configFile.flag : nil)
        {
            throw fail(entry.keyPosition, "`\(entry.key)` cannot be set in the file; use the flag --\(flag.name)")
        }
        let known = tree.children.keys.sorted()
        let near = known.map { ($0, CommandLineFlags.editDistance($0, snake)) }.min { $0.1 < $1.1 }
        let hint =
            near.flatMap { $0.1 <= 3 ? " (did you mean `\((path + [$0.0]).joined(separator: "."))`?)" : nil }
            ?? "; \(path.isEmpty ? "the sections are" : "`\(path.joined(separator: "."))` takes") \(known.joined(separator: ", "))"
        throw fail(entry.keyPosition, "unknown key `\(full)`\(hint)")
    }

    mutating func section(
        _ entries: [YAMLEntry], tree: ConfigFile.KeyTree, path: [String], into settings: inout RawSettings
    ) throws(ConfigError) {
        var seen: [String: YAMLEntry] = [:]
        for entry in entries {
            let name = try resolve(entry, in: tree, path: path)
            if let first = seen[name] {
                // YAML refuses a key twice; a new key beside its old camelCase name is the same mistake.
                throw fail(
                    entry.keyPosition,
                    "`\(entry.key)` and `\(first.key)` (\(first.keyPosition)) set the same thing; keep one, named \(name)"
                )
            }
            seen[name] = entry
            let child = tree.children[name]!
            let keyPath = path + [name]
            let key = keyPath.joined(separator: ".")
            if let flag = child.flag {
                if flag.kind == .repeatable {
                    try locations(entry.value, into: &settings)
                } else {
                    settings.values[flag.name] = try leaf(entry.value, flag: flag, key: key)
                }
            } else if let enabled = child.children["enabled"]?.flag, entry.value.scalar != nil, !entry.value.isNull {
                // `collector.weather: false` is short for `collector.weather.enabled: false`.
                settings.values[enabled.name] = try leaf(entry.value, flag: enabled, key: key)
            } else if entry.value.isNull {
                continue
            } else if let members = entry.value.mapping {
                try section(members, tree: child, path: keyPath, into: &settings)
            } else {
                let example = child.children.keys.sorted().first.map { "\($0): ..." } ?? "key: value"
                throw fail(
                    entry.value.position,
                    "`\(key)` must be a mapping (\(name):, then indented lines such as \(example)), not \(entry.value.kindDescription)"
                )
            }
        }
    }

    /// One setting's text; a list setting may be a YAML sequence.
    func leaf(_ node: YAMLNode, flag: Flag, key: String) throws(ConfigError) -> RawSettings.Entry {
        let origin = origin(node.position, key)
        if let items = node.sequence, flag.kind == .list || flag.kind == .repeated {
            var texts: [String] = []
            for item in items {
                guard let scalar = item.scalar, !item.isNull else {
                    throw fail(
                        item.position, "an item of `\(key)` must be a single value like 3h, not \(item.kindDescription)"
                    )
                }
                texts.append(scalar.text)
            }
            return .init(text: texts.joined(separator: ","), origin: origin)
        }
        guard let scalar = node.scalar else {
            let form =
                flag.kind == .list || flag.kind == .repeated
                ? "a list like [\(flag.kind == .list ? "3h, 6h" : "\":9755\", \"127.0.0.1:9756\"")] or a single value"
                : flag.kind == .boolean ? "true or false" : "a single value"
            throw fail(node.position, "`\(key)` must be \(form), not \(node.kindDescription)")
        }
        guard !scalar.isNull else {
            throw fail(
                node.position,
                "`\(key)` has no value: give one (like \(key.split(separator: ".").last!): \(flag.placeholder.isEmpty ? "true" : flag.placeholder)) or remove the line"
            )
        }
        return .init(text: scalar.text, origin: origin)
    }

    mutating func locations(_ node: YAMLNode, into settings: inout RawSettings) throws(ConfigError) {
        guard let items = node.sequence ?? (node.isNull ? [] : nil) else {
            throw fail(
                node.position,
                "`locations` must be a list of items (- London, or - name: London, then latitude: and longitude:, or query:, or zip:), not \(node.kindDescription)"
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
                        "for example - London, - \"Home=Springfield,IL,US\", - \"London=51.5074,-0.1278\" or - {name: London, latitude: 51.5074, longitude: -0.1278}"
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
                "`\(key)` must be a mapping of \(shape), or a place as --location takes it (London, \"Home=Springfield,IL,US\"), not \(item.kindDescription)"
            )
        }
        let known = Self.locationKeys
        for entry in entries where !known.contains(entry.key) {
            let near = known.map { ($0, CommandLineFlags.editDistance($0, entry.key)) }.min { $0.1 < $1.1 }
            let hint = near.flatMap { $0.1 <= 3 ? " (did you mean `\($0.0)`?)" : nil } ?? ""
            throw fail(
                entry.keyPosition,
                "unknown key `\(key).\(entry.key)`\(hint); a location takes name, latitude and longitude (or query, or zip) and alerts"
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
                "`\(key)` (\"\(name)\") has \(given[0]) but not \(given[0] == "latitude" ? "longitude" : "latitude"): give both"
            )
        case []:
            throw fail(item.position, "`\(key)` (\"\(name)\") says nowhere: give \(shape)")
        default:
            throw fail(
                item.position,
                "`\(key)` (\"\(name)\") gives \(given.joined(separator: ", ")): give one of latitude and longitude, query, or zip"
            )
        }
    }

    mutating func alerts(_ node: YAMLNode?, at key: String) throws(ConfigError) -> AlertSetting {
        guard let node, !node.isNull else { return .inherit }
        let thresholdsExample =
            "a mapping of thresholds (temperature_above_celsius: 35, temperature_below_celsius: 32F, wind_gust_meters_per_second: 20, ...)"
        if let scalar = node.scalar {
            // The flag's word (alerts=off) as well as YAML's false; on or true: the defaults.
            guard let on = try? Parse.boolean(.init(text: scalar.text, origin: key)) else {
                throw fail(
                    node.position,
                    "`\(key)` is \"\(scalar.text)\": give off (or false) for no weather alert at this place, or \(thresholdsExample)"
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
                        "unknown key `\(key).\(entry.key)`\(hint); use \(known.dropLast().joined(separator: ", ")) or \(known.last!)"
                    )
                }
                warnings.append(
                    "config file \"\(file)\", \(entry.keyPosition): `\(key).\(name)` is the old name of `\(key).\(snake)`; it still works, but rename it to \(snake)"
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
