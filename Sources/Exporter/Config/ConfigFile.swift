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
        var reader = ConfigFileReader(path: path)
        try reader.read(root, into: &settings)
    }
}

/// Walks the YAML tree; every error names the file, the line and column, and the fix.
struct ConfigFileReader {
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
                """
                the top level must be a mapping of sections (web:, openweather:, locations:, ...), not \
                \(root.kindDescription)
                """
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
                """
                config file \"\(file)\", \(entry.keyPosition): `\(full)` is the old name of `\(new)`; it still works, \
                but rename it to \(snake)
                """
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
                ?? """
                ; \(path.isEmpty ? "the sections are" : "`\(path.joined(separator: "."))` takes") \
                \(known.joined(separator: ", "))
                """
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
                    """
                    `\(entry.key)` and `\(first.key)` (\(first.keyPosition)) set the same thing; keep one, named \(name)
                    """
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
                    """
                    `\(key)` must be a mapping (\(name):, then indented lines such as \(example)), not \
                    \(entry.value.kindDescription)
                    """
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
                """
                `\(key)` has no value: give one (like \(key.split(separator: ".").last!): \
                \(flag.placeholder.isEmpty ? "true" : flag.placeholder)) or remove the line
                """
            )
        }
        return .init(text: scalar.text, origin: origin)
    }
}
