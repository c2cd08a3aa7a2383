/// The layers of settings (config file, environment, flags) and the environment's part: its
/// variables read as settings, and those no setting reads named with the nearest one.
extension ConfigurationLoader {
    /// The config file's settings, the environment's over them, the flags' over both.
    func layered(_ flags: CommandLineFlags) throws(ConfigError) -> RawSettings {
        var settings = RawSettings()
        let configFile = Settings.configFile.flag
        if let path = flags.settings.values[configFile.name]?.text ?? environment[configFile.environmentName] {
            try ConfigFile.load(path: path, into: &settings)
        }
        settings.overlay(environmentSettings())
        settings.overlay(flags)
        settings.readFormerNames()
        return settings
    }

    private func environmentSettings() -> RawSettings {
        var settings = RawSettings()
        for flag in Flag.all {
            guard let text = environment[flag.environmentName], !text.isEmpty else { continue }
            let origin = "$\(flag.environmentName)"
            switch flag.kind {
            case .value, .list, .repeated, .boolean: settings.values[flag.name] = .init(text: text, origin: origin)
            case .repeatable:
                settings.locations = text.split(separator: ";").map {
                    .init(text: String($0).trimmed, origin: origin)
                }.filter { !$0.text.isEmpty }
                settings.locationsOrigin = origin
            }
        }
        return settings
    }

    /// `OPENWEATHER_EXPORTER_*` variables no setting reads: a misspelling would otherwise be ignored without a word.
    func unknownEnvironmentVariables() -> [String] {
        let prefix = "OPENWEATHER_EXPORTER_"
        let known = Flag.all.map(\.environmentName)
        return environment.keys.sorted().compactMap { name -> String? in
            let upper = name.uppercased()
            guard upper.hasPrefix(prefix), !known.contains(name), !Self.buildInputs.contains(name),
                environment[name]?.isEmpty == false
            else { return nil }
            let given = String(upper.dropFirst(prefix.count))
            if ["API_KEY", "APIKEY", "KEY", "APPID", "OPENWEATHER_API_KEY", "OPENWEATHER_KEY"].contains(given) {
                return "$\(name) is not read: the API key comes from $OPENWEATHER_API_KEY or --openweather.api-key-file"
            }
            // The nearest name; a name that leaves out the section (LISTEN_ADDRESS for WEB_LISTEN_ADDRESS) is near too.
            let scored = known.map { candidate in
                let rest = candidate.dropFirst(prefix.count)
                return (candidate, rest.hasSuffix("_" + given) ? 1 : CommandLineFlags.editDistance(candidate, upper))
            }
            let hint =
                scored.min { $0.1 < $1.1 }.flatMap { $0.1 <= 3 ? " (did you mean $\($0.0)?)" : nil }
                    ?? """
                    ; run with --help: every flag is OPENWEATHER_EXPORTER_ and its name in upper case with _ for . and -
                    """
            return "$\(name) is not a setting and is ignored\(hint)"
        }
    }

    /// Read by the release build (Tests/release/build.sh), not by the exporter.
    private static let buildInputs: Set<String> = ["OPENWEATHER_EXPORTER_REVISION"]
}
