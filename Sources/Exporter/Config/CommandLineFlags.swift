/// `--name=value`, `--name value`, `--flag`, `--no-flag`, in the style of Prometheus exporters.
struct CommandLineFlags {
    var settings = RawSettings()

    func isSet(_ setting: Setting<Bool>) -> Bool {
        (try? settings.value(setting)) == true
    }

    static func parse(_ arguments: [String]) throws(ConfigError) -> CommandLineFlags {
        var flags = CommandLineFlags()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" {
                flags.settings.values[Settings.help.flag.name] = .init(text: "true", origin: "-h")
                continue
            }
            var (name, inlineValue) = try nameAndValue(of: argument, first: index == 1)
            if let renamed = renamedCollector(name) {
                flags.settings.warnings.append(
                    """
                    --\(name) is the old spelling of --\(renamed) (the config file's word); it still works, but use \
                    the new name
                    """
                )
                name = renamed
            }
            if name.hasPrefix("no-"), inlineValue == nil, let flag = Flag.named(String(name.dropFirst(3))),
                flag.kind == .boolean
            {
                flags.settings.values[flag.name] = .init(text: "false", origin: "--\(name)")
                continue
            }
            guard let flag = Flag.named(name) else {
                throw ConfigError("unknown flag --\(name)\(suggestion(for: name)); run with --help to list the flags")
            }
            let origin = "--\(flag.name)"
            if flag.kind == .boolean {
                flags.settings.values[flag.name] = .init(text: inlineValue ?? "true", origin: origin)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            } else {
                throw ConfigError("\(origin) needs a value, for example \(origin)=\(flag.placeholder)")
            }
            try flags.record(value, of: flag)
        }
        return flags
    }

    /// The flag's name and the value after `=`, if any. `first` is whether the argument comes first,
    /// where a subcommand may stand. The API key is refused here, by any of its names.
    private static func nameAndValue(
        of argument: String, first: Bool
    ) throws(ConfigError) -> (name: String, inlineValue: String?) {
        guard argument.hasPrefix("--"), argument.count > 2 else {
            // A subcommand comes first; a word there may be one misspelled.
            let subcommands =
                first ? ", and a subcommand comes first: \(Subcommand.all.map(\.name).joined(separator: " or "))" : ""
            throw ConfigError(
                """
                unexpected argument "\(argument)": flags start with --\(subcommands); run with --help to list them
                """
            )
        }
        var name = String(argument.dropFirst(2))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
            inlineValue = String(name[name.index(after: equals)...])
            name = String(name[..<equals])
        }
        if name == "openweather.api-key" || name == "api-key" || name == "appid" {
            throw ConfigError(
                """
                the API key is not taken as a flag (anyone could read it in ps): set OPENWEATHER_API_KEY or pass \
                --openweather.api-key-file=PATH
                """
            )
        }
        return (name, inlineValue)
    }

    /// Stores a flag's value: a location adds one, a repeated flag appends to its list, any other replaces.
    private mutating func record(_ value: String, of flag: Flag) throws(ConfigError) {
        let origin = "--\(flag.name)"
        // Commas separate a repeated setting's values only in its variable, where it cannot repeat.
        if flag.kind == .repeated, value.contains(",") {
            throw ConfigError(
                """
                \(origin) "\(value)" holds a comma: give the flag once per value (\(origin)=\(flag.placeholder) \
                \(origin)=\(flag.placeholder)); commas separate values only in $\(flag.environmentName)
                """
            )
        }
        if flag.kind == .repeatable {
            settings.locations.append(.init(text: value, origin: origin))
            settings.locationsOrigin = origin
        } else if flag.kind == .repeated, let earlier = settings.values[flag.name] {
            settings.values[flag.name] = .init(text: earlier.text + "," + value, origin: origin)
        } else {
            settings.values[flag.name] = .init(text: value, origin: origin)
        }
    }

    /// `collector.air_pollution.interval` for `collector.air-pollution.interval` (and `no-` forms): a
    /// source's former name in its flags.
    private static func renamedCollector(_ name: String) -> String? {
        let negation = name.hasPrefix("no-") ? "no-" : ""
        let rest = name.dropFirst(negation.count)
        for (old, new) in Sources.formerNames {
            let prefix = "collector.\(old)"
            guard rest.hasPrefix(prefix) else { continue }
            let tail = rest.dropFirst(prefix.count)
            guard tail.isEmpty || tail.hasPrefix(".") else { continue }
            return negation + "collector.\(new)" + tail
        }
        return nil
    }

    /// " (did you mean --web.listen-address?)" when a current flag is a few edits away.
    private static func suggestion(for name: String) -> String {
        let scored = Flag.all.filter { $0.renamedTo == nil }.map { (flag: $0, distance: editDistance($0.name, name)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= 3 else { return "" }
        return " (did you mean --\(best.flag.name)?)"
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
