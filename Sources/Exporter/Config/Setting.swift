import HTTPClient

/// One setting in one place: its flag, its config-file key, its default, its doc and how its text
/// is read. The flag parser, the config-file reader, the environment mapping and `--help` read
/// `flag`; the loader reads `parse` and `defaultValue`; `Configuration` starts from `defaultValue`.
struct Setting<Value: Sendable>: Sendable {
    let flag: Flag
    let defaultValue: Value
    let parse: @Sendable (RawSettings.Entry) throws(ConfigError) -> Value

    /// `group`: its heading in `--help` where its namespace's is not the one (`Flag.Group.of`).
    init(
        _ name: String, key: String?, kind: Flag.Kind = .value, placeholder: String, doc: String,
        default defaultValue: Value,
        shown defaultText: String? = nil, group: Flag.Group? = nil,
        parse: @escaping @Sendable (RawSettings.Entry) throws(ConfigError) -> Value
    ) {
        // --help shows the default as written on the command line; `shown` where that is not its description.
        flag = Flag(
            name: name, kind: kind, placeholder: placeholder, help: doc, defaultText: defaultText ?? "\(defaultValue)",
            key: key, group: group)
        self.defaultValue = defaultValue
        self.parse = parse
    }
}

extension Setting where Value == Int {
    static func integer(
        _ name: String, key: String?, placeholder: String = "N", doc: String, default value: Int,
        in range: ClosedRange<Int>,
        shown: String? = nil
    ) -> Setting {
        Setting(name, key: key, placeholder: placeholder, doc: doc, default: value, shown: shown ?? String(value)) {
            entry throws(ConfigError) in
            guard let number = Int(entry.text), range.contains(number) else {
                throw ConfigError(
                    """
                    \(entry.origin) "\(entry.text)" is not a whole number from \(range.lowerBound) to \
                    \(range.upperBound)
                    """
                )
            }
            return number
        }
    }
}

extension Setting where Value == Duration {
    static func duration(
        _ name: String, key: String?, doc: String, default value: Duration, minimum: Duration, shown: String? = nil
    ) -> Setting {
        Setting(
            name, key: key, placeholder: "DURATION", doc: doc, default: value,
            shown: shown ?? PrometheusDuration.format(value)
        ) {
            entry throws(ConfigError) in try Parse.duration(entry, minimum: minimum)
        }
    }
}

extension Setting where Value == Bool {
    static func boolean(
        _ name: String, key: String?, doc: String, shown: String = "", group: Flag.Group? = nil
    ) -> Setting {
        Setting(
            name, key: key, kind: .boolean, placeholder: "", doc: doc, default: false, shown: shown, group: group,
            parse: Parse.boolean)
    }
}

extension Setting where Value == String {
    static func text(
        _ name: String, key: String?, placeholder: String, doc: String, default value: String,
        check: @escaping @Sendable (RawSettings.Entry) throws(ConfigError) -> Void
    ) -> Setting {
        Setting(name, key: key, placeholder: placeholder, doc: doc, default: value, shown: value) {
            entry throws(ConfigError) in
            try check(entry)
            return entry.text
        }
    }
}

extension Setting where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of a fixed set of words; the doc and the error list the words in their declared order.
    static func choice(_ name: String, key: String?, placeholder: String, what: String, default value: Value) -> Setting
    {
        let words = Value.allCases.map(\.rawValue)
        let listed = words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words.last!
        return Setting(
            name, key: key, placeholder: placeholder, doc: listed + ".", default: value, shown: value.rawValue
        ) {
            entry throws(ConfigError) in
            // Any case: DEBUG is as clear as debug.
            guard let choice = Value.allCases.first(where: { $0.rawValue.lowercased() == entry.text.lowercased() })
            else {
                throw ConfigError("\(entry.origin) \"\(entry.text)\" is not a \(what): use \(listed)")
            }
            return choice
        }
    }
}

extension Setting where Value == String? {
    /// A setting that is off until given, such as a file path.
    static func optional(
        _ name: String, key: String?, placeholder: String, doc: String, shown: String = "", group: Flag.Group? = nil
    ) -> Setting {
        Setting(name, key: key, placeholder: placeholder, doc: doc, default: nil, shown: shown, group: group) {
            entry throws(ConfigError) in entry.text
        }
    }
}

extension Setting where Value == AlertThresholds {
    /// A default of one alert value, read as a location's own (`AlertThresholds.Field`); `value`
    /// holds the built-in default of the field, if any.
    static func alert(
        _ field: AlertThresholds.Field, placeholder: String, doc: String, default value: AlertThresholds,
        shown: String = ""
    )
        -> Setting
    {
        let name = "alerts." + field.key.replacingUnderscores
        return Setting(
            name, key: "alerts." + field.key, placeholder: placeholder, doc: doc, default: value, shown: shown
        ) {
            entry throws(ConfigError) in
            var read = AlertThresholds()
            guard field.read(entry.text, into: &read) else {
                throw ConfigError("\(entry.origin) \"\(entry.text)\" is not \(field.expected)")
            }
            return read
        }
    }
}

extension String {
    fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }
}
