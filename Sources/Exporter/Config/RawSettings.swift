/// Settings as given, by flag name, each remembering where it came from so errors can say so;
/// read through the table (`Settings`), which knows each one's type and default.
struct RawSettings {
    struct Entry {
        var text: String
        var origin: String
        /// Set when a config file gave a structured location.
        var location: Location? = nil
    }

    var values: [String: Entry] = [:]
    var locations: [Entry] = []
    var locationsOrigin: String?
    var configFile: String?
    /// Things worth a warning that only the reader of a layer sees (an old key name in the file).
    var warnings: [String] = []

    /// Later layers win; locations are replaced as a whole, not merged. Each value a later layer
    /// takes over is said in a warning: a file value that does nothing without a word is a trap.
    /// The values themselves are left out, as a proxy URL may hold a password.
    mutating func overlay(_ other: RawSettings) {
        for (name, entry) in other.values.sorted(by: { $0.key < $1.key }) {
            guard let replaced = values[name], replaced.text != entry.text else { continue }
            warnings.append(
                """
                \(replaced.origin) is not used: \(entry.origin) overrides it (flags win over variables, variables over \
                the config file); set it in one place only
                """
            )
        }
        values.merge(other.values) { $1 }
        if let origin = other.locationsOrigin {
            if let replaced = locationsOrigin, !locations.isEmpty {
                let count = locations.count == 1 ? "the location" : "all \(locations.count) locations"
                warnings.append(
                    """
                    \(origin) replaces \(count) of \(replaced): lists of locations are not merged (flags replace the \
                    variable's and the file's, the variable the file's); give every location in one place
                    """
                )
            }
            locations = other.locations
            locationsOrigin = origin
        }
        configFile = other.configFile ?? configFile
        warnings += other.warnings
    }

    mutating func overlay(_ flags: CommandLineFlags) {
        overlay(flags.settings)
    }

    /// A value given under a flag's former name is read as the flag's, with a word to use the new name.
    mutating func readFormerNames() {
        for flag in Flag.all {
            guard let current = flag.renamedTo, let entry = values.removeValue(forKey: flag.name) else { continue }
            let given = entry.origin.hasPrefix("--") ? "" : " (given as \(entry.origin))"
            if let newer = values[current] {
                warnings.append(
                    """
                    --\(flag.name)\(given) is not used: \(newer.origin) sets the same thing under its new name; drop \
                    the old one
                    """
                )
            } else {
                values[current] = entry
                warnings.append(
                    "--\(flag.name) is the old name of --\(current); it still works, but use the new name\(given)")
            }
        }
    }

    /// The setting's value when some layer gave it; nil otherwise.
    func value<Value>(_ setting: Setting<Value>) throws(ConfigError) -> Value? {
        guard let entry = values[setting.flag.name] else { return nil }
        return try setting.parse(entry)
    }

    /// The setting's value, or its default.
    func resolved<Value>(_ setting: Setting<Value>) throws(ConfigError) -> Value {
        try value(setting) ?? setting.defaultValue
    }
}

extension String {
    var trimmed: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
