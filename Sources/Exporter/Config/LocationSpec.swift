import OpenWeather

/// The flag form of a location, one of
/// `NAME=LAT,LON`, `NAME=CITY[,STATE][,COUNTRY]`, `NAME=zip:CODE,COUNTRY` or a bare `CITY[,STATE][,COUNTRY]`
/// (name and query the same), each followed by optional alert values (`,above=95F`, `,below=0`,
/// `,hysteresis=1`, `,gust=20`, `,rain=30`, `,heat_index=40`, `,wet_bulb=30`, `,wind_chill=-30`:
/// `AlertThresholds.Field`) or `,alerts=off`.
enum LocationSpec {
    /// `example` is said with a mistake; by default in the flag's form, as `origin` names the flag.
    static func parse(_ text: String, origin: String, example: String? = nil) throws(ConfigError) -> Location {
        let example =
            example
                ?? """
                for example \(origin)="London=51.5074,-0.1278", \(origin)="Paris" or \
                \(origin)="Office=zip:94040,US"
                """
        // NAME=... when the text before the first `=` holds no comma; else the bare form, whose `=` are options'.
        var name: String?
        var rest = Substring(text)
        if let equals = text.firstIndex(of: "="), !text[..<equals].contains(",") {
            name = String(text[..<equals]).trimmed
            rest = text[text.index(after: equals)...]
        }
        let parts = rest.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmed }
        let positional = Array(parts.prefix { !$0.contains("=") })
        let options = parts.dropFirst(positional.count)
        guard !positional.isEmpty, !positional.allSatisfy(\.isEmpty) else {
            throw ConfigError("\(origin) \"\(text)\" names no place: \(example)")
        }

        let place =
            if Double(positional[0]) != nil || (positional.count == 2 && Double(positional[1]) != nil) {
                try coordinates(positional, name: name, text: text, origin: origin, example: example)
            } else {
                try query(positional, name: name, text: text, origin: origin, example: example)
            }
        let alerts = try alerts(options, text: text, origin: origin)
        return Location(name: name ?? positional.joined(separator: ","), place: place, alerts: alerts)
    }

    /// `NAME=LAT,LON`: coordinates need a name, as nothing else would tell the places apart.
    private static func coordinates(
        _ positional: [String], name: String?, text: String, origin: String, example: String
    ) throws(ConfigError) -> Location.Place {
        guard positional.count == 2 else {
            throw ConfigError(
                "\(origin) \"\(text)\" needs a latitude and a longitude separated by a comma: \(example)")
        }
        guard let name else {
            throw ConfigError("\(origin) \"\(text)\": coordinates need a name, as in NAME=LAT,LON: \(example)")
        }
        try validate(name: name, origin: origin)
        return .coordinates(
            latitude: try coordinate(positional[0], what: "latitude", range: -90...90, name: name, origin: origin),
            longitude: try coordinate(
                positional[1], what: "longitude", range: -180...180, name: name, origin: origin))
    }

    /// `CITY[,STATE][,COUNTRY]` or `zip:CODE,COUNTRY`, for OpenWeather's geocoding to resolve.
    private static func query(
        _ positional: [String], name: String?, text: String, origin: String, example: String
    ) throws(ConfigError) -> Location.Place {
        guard !positional.contains(where: \.isEmpty) else {
            throw ConfigError(
                """
                \(origin) "\(text)" has an empty part: write CITY[,STATE][,COUNTRY] without empty commas, \
                \(example)
                """
            )
        }
        let place: Location.Place
        if positional[0].hasPrefix("zip:") {
            let code = ([String(positional[0].dropFirst(4)).trimmed] + positional.dropFirst()).joined(
                separator: ",")
            guard positional.count <= 2, !code.hasPrefix(",") else {
                throw ConfigError(
                    "\(origin) \"\(text)\": write a postal code as zip:CODE,COUNTRY, like zip:94040,US")
            }
            place = .query(.zip(code))
        } else {
            guard positional.count <= 3 else {
                throw ConfigError("\(origin) \"\(text)\" has more than CITY,STATE,COUNTRY: \(example)")
            }
            place = .query(.name(positional.joined(separator: ",")))
        }
        try validate(name: name ?? positional.joined(separator: ","), origin: origin)
        return place
    }

    /// The alert options after the place: thresholds to override, or `alerts=off`, never both.
    private static func alerts(
        _ options: ArraySlice<String>, text: String, origin: String
    ) throws(ConfigError) -> AlertSetting {
        var thresholds = AlertThresholds()
        var off = false
        let fields = AlertThresholds.Field.allCases
        var given: Set<String> = []
        for option in options {
            let pair = option.split(separator: "=", maxSplits: 1).map { String($0).trimmed }
            guard pair.count == 2 else {
                throw ConfigError(
                    "\(origin) \"\(text)\": \"\(option)\" is not an option; use \(accepted) after the place")
            }
            // One value a key: a second would silently win over the first.
            guard given.insert(pair[0]).inserted else {
                throw ConfigError("\(origin) \"\(text)\" gives \(pair[0])= twice: keep one value for it")
            }
            if pair[0] == "alerts" && pair[1] == "off" {
                off = true
                continue
            }
            if pair[0] == "alerts" {
                throw ConfigError("\(origin) \"\(text)\": alerts= takes only off (alerts=off), not \"\(pair[1])\"")
            }
            guard let field = fields.first(where: { $0.option == pair[0] }) else {
                throw unknown(option, key: pair[0], text: text, origin: origin)
            }
            guard field.read(pair[1], into: &thresholds) else {
                throw ConfigError("\(origin) \"\(text)\": \(pair[0])=\(pair[1]) is not \(field.expected)")
            }
        }
        if off, thresholds != AlertThresholds() {
            throw ConfigError("\(origin) \"\(text)\" sets thresholds and alerts=off: keep one")
        }
        return off ? .off : thresholds == AlertThresholds() ? .inherit : .custom(thresholds)
    }

    /// The options a place takes, as said when one is not.
    private static var accepted: String {
        AlertThresholds.Field.allCases.map { "\($0.option)=" }.joined(separator: ", ") + " or alerts=off"
    }

    /// An option that is none: a typo names the option meant; a short word is near too many to guess
    /// (wind is 3 from rain).
    private static func unknown(_ option: String, key: String, text: String, origin: String) -> ConfigError {
        let typed = key.lowercased()
        let names = AlertThresholds.Field.allCases.map(\.option) + ["alerts"]
        let near = names.map { ($0, CommandLineFlags.editDistance($0, typed)) }.min { $0.1 < $1.1 }
        if let near, near.1 <= 2, near.1 * 3 <= typed.count {
            return ConfigError("\(origin) \"\(text)\": \"\(option)\" is not an option (did you mean \(near.0)=?)")
        }
        return ConfigError("\(origin) \"\(text)\": \"\(option)\" is not an option; use \(accepted) after the place")
    }

    static func validate(name: String, origin: String) throws(ConfigError) {
        guard !name.isEmpty else {
            throw ConfigError(
                "\(origin): a location has an empty name; give each location a name, like London=51.5074,-0.1278")
        }
        guard name.count <= 128 else {
            throw ConfigError(
                """
                \(origin): the location name "\(name.prefix(40))..." is \(name.count) characters long; use a short \
                name (at most 128)
                """
            )
        }
        guard name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw ConfigError(
                "\(origin): the location name \"\(name)\" holds control characters; use a short printable name")
        }
    }

    static func coordinate(
        _ text: String, what: String, range: ClosedRange<Double>, name: String, origin: String
    ) throws(ConfigError) -> Double {
        guard let value = Double(text), value.isFinite else {
            throw ConfigError(
                "\(origin): the \(what) of \"\(name)\" is \"\(text)\", not a number; write decimal degrees like 51.5074"
            )
        }
        guard range.contains(value) else {
            throw ConfigError(
                """
                \(origin): the \(what) of "\(name)" is \(text), outside \
                \(Int(range.lowerBound))..\(Int(range.upperBound)) degrees
                """
            )
        }
        return value
    }
}
