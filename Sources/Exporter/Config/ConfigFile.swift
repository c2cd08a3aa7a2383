import JSON

/// The optional JSON config file. Its keys mirror the flags in camelCase
/// (`web.listenAddress` for `--web.listen-address`); unknown keys are errors,
/// so a typo never silently falls back to a default.
enum ConfigFile {
    static func load(path: String, into settings: inout Settings) throws(ConfigError) {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: 16 << 20)
        } catch {
            throw ConfigError("cannot read the config file \"\(path)\": \(error); check --config.file and the file's permissions")
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw ConfigError("the config file \"\(path)\" is not valid JSON: \(error)")
        }
        settings.configFile = path
        try read(document, path: path, into: &settings)
    }

    static func read(_ document: JSONValue, path: String, into settings: inout Settings) throws(ConfigError) {
        let fail = { (message: String) in ConfigError("config file \"\(path)\": \(message)") }
        guard case .object(let sections) = document else { throw fail("the top level must be an object { ... }") }
        let known = Dictionary(uniqueKeysWithValues: Flag.all.filter { $0.kind != .repeatable }.map { ($0.fileKey, $0) })
        for (section, value) in sections {
            switch section {
            case "locations":
                guard case .array(let list) = value else { throw fail("`locations` must be a list of {\"name\", \"latitude\", \"longitude\"}") }
                settings.locations = []
                for (index, item) in list.enumerated() {
                    let location = try location(item, at: "locations[\(index)]", fail: fail)
                    settings.locations.append(.init(text: location.name, origin: "config file \"\(path)\" locations[\(index)]", location: location))
                }
                settings.locationsOrigin = "config file \"\(path)\""
            case "demo", "help", "version", "config":
                throw fail("`\(section)` cannot be set in the file; use the flag")
            default:
                guard case .object(let members) = value else {
                    throw fail("`\(section)` must be an object, for example {\"\(section)\": {...}}")
                }
                for (key, member) in members {
                    let fullKey = "\(section).\(key)"
                    if fullKey == "openweather.apiKey" {
                        throw fail("the key itself does not belong in the file: use `openweather.apiKeyFile` or $OPENWEATHER_API_KEY")
                    }
                    guard let flag = known[fullKey] else {
                        let candidates = known.keys.sorted().map { ($0, CommandLineFlags.editDistance($0, fullKey)) }
                        let near = candidates.min { $0.1 < $1.1 }.flatMap { $0.1 <= 3 ? " (did you mean `\($0.0)`?)" : nil } ?? ""
                        throw fail("unknown key `\(fullKey)`\(near)")
                    }
                    let origin = "config file \"\(path)\" `\(fullKey)`"
                    settings.values[flag.name] = .init(text: try scalar(member, key: fullKey, fail: fail), origin: origin)
                }
            }
        }
    }

    private static func scalar(_ value: JSONValue, key: String, fail: (String) -> ConfigError) throws(ConfigError) -> String {
        switch value {
        case .string(let text): return text
        case .number(let number): return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .bool(let flag): return String(flag)
        default: throw fail("`\(key)` is \(value.typeName): give a string or a number")
        }
    }

    private static func location(_ item: JSONValue, at key: String, fail: (String) -> ConfigError) throws(ConfigError) -> Location {
        guard case .object(let members) = item else { throw fail("`\(key)` must be an object {\"name\", \"latitude\", \"longitude\"}") }
        for (member, _) in members where !["name", "latitude", "longitude", "alerts"].contains(member) {
            throw fail("unknown key `\(key).\(member)`; a location takes name, latitude, longitude and alerts")
        }
        guard case .string(let name)? = item["name"] else { throw fail("`\(key).name` is missing or not a string") }
        let origin = "config file `\(key)`"
        try LocationSpec.validate(name: name, origin: origin)
        func coordinate(_ field: String, _ range: ClosedRange<Double>) throws(ConfigError) -> Double {
            switch item[field] {
            case .number(let value)?:
                return try LocationSpec.coordinate(String(value), what: field, range: range, name: name, origin: origin)
            case nil: throw fail("`\(key).\(field)` is missing for \"\(name)\"")
            case let other?: throw fail("`\(key).\(field)` of \"\(name)\" is \(other.typeName), not a number")
            }
        }
        let latitude = try coordinate("latitude", -90...90)
        let longitude = try coordinate("longitude", -180...180)
        return Location(name: name, latitude: latitude, longitude: longitude, alerts: try alerts(item["alerts"], at: "\(key).alerts", fail: fail))
    }

    private static func alerts(_ value: JSONValue?, at key: String, fail: (String) -> ConfigError) throws(ConfigError) -> AlertSetting {
        switch value {
        case nil, .null?: return .inherit
        case .bool(false)?: return .off
        case .object(let members)?:
            var thresholds = TemperatureThresholds()
            for (member, bound) in members {
                guard case .number(let celsius) = bound, (-150...150).contains(celsius) else {
                    throw fail("`\(key).\(member)` must be a temperature in °C between -150 and 150")
                }
                switch member {
                case "temperatureAboveCelsius": thresholds.aboveCelsius = celsius
                case "temperatureBelowCelsius": thresholds.belowCelsius = celsius
                default: throw fail("unknown key `\(key).\(member)`; use temperatureAboveCelsius or temperatureBelowCelsius")
                }
            }
            return .custom(thresholds)
        case let other?:
            throw fail("`\(key)` is \(other.typeName): give {\"temperatureAboveCelsius\": 35, \"temperatureBelowCelsius\": -10} or false to opt out")
        }
    }
}
