/// Readers of setting text shared by several settings; every error names where the text came from.
enum Parse {
    static func boolean(_ entry: RawSettings.Entry) throws(ConfigError) -> Bool {
        // YAML 1.1's words too (on, off), which files written for other tools use.
        switch entry.text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigError("\(entry.origin) \"\(entry.text)\" is not true or false (or yes/no, on/off, 1/0)")
        }
    }

    static func duration(_ entry: RawSettings.Entry, minimum: Duration) throws(ConfigError) -> Duration {
        guard let value = PrometheusDuration.parse(entry.text) else {
            throw ConfigError("\(entry.origin) \"\(entry.text)\" is not a duration: write it like 30s, 10m or 1h30m")
        }
        guard value >= minimum else {
            throw ConfigError(
                "\(entry.origin) \"\(entry.text)\" is too short: use at least \(PrometheusDuration.format(minimum))")
        }
        return value
    }

    /// A comma-separated list of durations from 1m to `longest`: sorted, without repeats.
    static func durations(_ entry: RawSettings.Entry, upTo longest: Duration) throws(ConfigError) -> [Duration] {
        var list: [Duration] = []
        for part in entry.text.split(separator: ",") {
            let text = String(part).trimmed
            guard let value = PrometheusDuration.parse(text), value >= .seconds(60), value <= longest else {
                throw ConfigError(
                    """
                    \(entry.origin) "\(entry.text)": "\(text)" is not a duration from 1m to \
                    \(PrometheusDuration.format(longest)); write a list like 3h,6h,24h
                    """
                )
            }
            list.append(value)
        }
        guard !list.isEmpty else { throw ConfigError("\(entry.origin) is empty: give durations like 3h,6h,24h") }
        return Array(Set(list)).sorted()
    }
}
