/// The flag form of a location: `NAME=LAT,LON[,above=C][,below=C][,alerts=off]`.
enum LocationSpec {
    static func parse(_ text: String, origin: String) throws(ConfigError) -> Location {
        let example = "for example \(origin)=\"London=51.5074,-0.1278\""
        guard let equals = text.firstIndex(of: "=") else {
            throw ConfigError("\(origin) \"\(text)\" has no coordinates: write NAME=LAT,LON, \(example)")
        }
        let name = String(text[..<equals]).trimmed
        let parts = text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmed }
        guard parts.count >= 2 else {
            throw ConfigError("\(origin) \"\(text)\" needs a latitude and a longitude separated by a comma: \(example)")
        }
        try validate(name: name, origin: origin)
        let latitude = try coordinate(parts[0], what: "latitude", range: -90...90, name: name, origin: origin)
        let longitude = try coordinate(parts[1], what: "longitude", range: -180...180, name: name, origin: origin)
        var thresholds = TemperatureThresholds()
        var alerts: AlertSetting = .inherit
        for option in parts.dropFirst(2) {
            let pair = option.split(separator: "=", maxSplits: 1).map { String($0).trimmed }
            guard pair.count == 2 else {
                throw ConfigError("\(origin) \"\(text)\": \"\(option)\" is not an option; use above=C, below=C or alerts=off")
            }
            switch pair[0] {
            case "above", "below":
                guard let value = Double(pair[1]), value.isFinite, (-150...150).contains(value) else {
                    throw ConfigError("\(origin) \"\(text)\": \(pair[0])=\(pair[1]) is not a temperature in °C between -150 and 150")
                }
                if pair[0] == "above" { thresholds.aboveCelsius = value } else { thresholds.belowCelsius = value }
                alerts = .custom(thresholds)
            case "alerts" where pair[1] == "off":
                alerts = .off
            default:
                throw ConfigError("\(origin) \"\(text)\": \"\(option)\" is not an option; use above=C, below=C or alerts=off")
            }
        }
        if case .off = alerts, thresholds != TemperatureThresholds() {
            throw ConfigError("\(origin) \"\(text)\" sets thresholds and alerts=off: keep one")
        }
        return Location(name: name, latitude: latitude, longitude: longitude, alerts: alerts)
    }

    static func validate(name: String, origin: String) throws(ConfigError) {
        guard !name.isEmpty else {
            throw ConfigError("\(origin): a location has an empty name; give each location a name, like London=51.5074,-0.1278")
        }
        guard name.count <= 128, name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw ConfigError("\(origin): the location name \"\(name)\" is too long or holds control characters; use a short printable name")
        }
    }

    static func coordinate(
        _ text: String, what: String, range: ClosedRange<Double>, name: String, origin: String
    ) throws(ConfigError) -> Double {
        guard let value = Double(text), value.isFinite else {
            throw ConfigError("\(origin): the \(what) of \"\(name)\" is \"\(text)\", not a number; write decimal degrees like 51.5074")
        }
        guard range.contains(value) else {
            throw ConfigError("\(origin): the \(what) of \"\(name)\" is \(text), outside \(Int(range.lowerBound))..\(Int(range.upperBound)) degrees")
        }
        return value
    }
}
