import JSON
import OpenWeather

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
                guard case .array(let list) = value else { throw fail("`locations` must be a list of {\"name\", \"latitude\", \"longitude\"} (or \"query\", or \"zip\", instead of the coordinates)") }
                settings.locations = []
                for (index, item) in list.enumerated() {
                    let location = try location(item, at: "locations[\(index)]", fail: fail)
                    settings.locations.append(.init(text: location.name, origin: "config file \"\(path)\" locations[\(index)]", location: location))
                }
                settings.locationsOrigin = "config file \"\(path)\""
            case "collector":
                try collectors(value, path: path, known: known, into: &settings, fail: fail)
            case "demo", "help", "version", "config", "shard", "totalShards", "pod":
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

    /// `"collector": {"weather": {"enabled": true, "interval": "10m"}, "airPollution": true}`.
    private static func collectors(
        _ value: JSONValue, path: String, known: [String: Flag], into settings: inout Settings, fail: (String) -> ConfigError
    ) throws(ConfigError) {
        let example = "{\"weather\": {\"enabled\": true, \"interval\": \"10m\"}, \"airPollution\": true}"
        guard case .object(let members) = value else { throw fail("`collector` must be an object, like \(example)") }
        for (key, member) in members {
            guard let flag = known["collector.\(key)"], flag.kind == .boolean else {
                let names = known.values.filter { $0.kind == .boolean && $0.name.hasPrefix("collector.") }.map { String($0.fileKey.dropFirst(10)) }.sorted()
                throw fail("unknown collector `collector.\(key)`: the collectors are \(names.joined(separator: ", "))")
            }
            let origin = "config file \"\(path)\" `collector.\(key)`"
            switch member {
            case .bool(let enabled):
                settings.booleans[flag.name] = .init(text: String(enabled), origin: origin)
            case .object(let fields):
                for (field, setting) in fields {
                    switch (field, setting) {
                    case ("enabled", .bool(let enabled)):
                        settings.booleans[flag.name] = .init(text: String(enabled), origin: origin + " enabled")
                    case ("interval", .string(let interval)):
                        settings.values[flag.name + ".interval"] = .init(text: interval, origin: origin + " interval")
                    case (let option, .string(let text)) where known[flag.name + "." + option]?.kind == .value:
                        settings.values[flag.name + "." + option] = .init(text: text, origin: origin + " " + option)
                    default:
                        throw fail("`collector.\(key).\(field)` is not a setting of a collector: give enabled (true or false) and interval (like \"10m\")")
                    }
                }
            default:
                throw fail("`collector.\(key)` is \(member.typeName): give true, false or {\"enabled\": true, \"interval\": \"1h\"}")
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
        let shape = "{\"name\", \"latitude\", \"longitude\"}, {\"name\", \"query\": \"City,State,Country\"} or {\"name\", \"zip\": \"94040,US\"}"
        guard case .object(let members) = item else { throw fail("`\(key)` must be an object \(shape)") }
        for (member, _) in members where !["name", "latitude", "longitude", "query", "zip", "alerts"].contains(member) {
            throw fail("unknown key `\(key).\(member)`; a location takes name, latitude and longitude (or query, or zip) and alerts")
        }
        guard case .string(let name)? = item["name"] else { throw fail("`\(key).name` is missing or not a string") }
        let origin = "config file `\(key)`"
        try LocationSpec.validate(name: name, origin: origin)
        let alerts = try alerts(item["alerts"], at: "\(key).alerts", fail: fail)
        let given = ["latitude", "longitude", "query", "zip"].filter { item[$0] != nil }
        switch Set(given) {
        case ["query"], ["zip"]:
            guard case .string(let text)? = item[given[0]], !text.trimmed.isEmpty else {
                throw fail("`\(key).\(given[0])` of \"\(name)\" must be a non-empty string, like \"Springfield,IL,US\" or \"94040,US\"")
            }
            let query: PlaceQuery = given[0] == "zip" ? .zip(text.trimmed) : .name(text.trimmed)
            return Location(name: name, place: .query(query), alerts: alerts)
        case ["latitude", "longitude"]:
            func coordinate(_ field: String, _ range: ClosedRange<Double>) throws(ConfigError) -> Double {
                guard case .number(let value)? = item[field] else {
                    throw fail("`\(key).\(field)` of \"\(name)\" is \(item[field]!.typeName), not a number")
                }
                return try LocationSpec.coordinate(String(value), what: field, range: range, name: name, origin: origin)
            }
            return Location(
                name: name, latitude: try coordinate("latitude", -90...90), longitude: try coordinate("longitude", -180...180),
                alerts: alerts)
        case ["latitude"], ["longitude"]:
            throw fail("`\(key)` (\"\(name)\") has \(given[0]) but not \(given[0] == "latitude" ? "longitude" : "latitude"): give both")
        case []:
            throw fail("`\(key)` (\"\(name)\") says nowhere: give latitude and longitude, a query or a zip, as in \(shape)")
        default:
            throw fail("`\(key)` (\"\(name)\") gives \(given.joined(separator: ", ")): give one of latitude and longitude, query, or zip")
        }
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
