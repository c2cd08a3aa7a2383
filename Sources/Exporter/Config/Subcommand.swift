/// `openweather-exporter NAME ...`: what runs instead of the exporter. The loader dispatches on this
/// table and `--help` lists it, so a subcommand is named in one place.
struct Subcommand: Sendable {
    let name: String
    /// Its arguments after the name, as `--help`'s usage block shows them.
    let usage: String
    /// What it is for, in a few words.
    let purpose: String
    /// The line `--help` ends with, pointing at the subcommand's own help.
    let pointer: String
    /// Its command from the arguments after its name.
    let load: @Sendable (ConfigurationLoader, [String]) throws(ConfigError) -> Command

    static let all: [Subcommand] = [
        Subcommand(
            name: "backfill", usage: "--since=DURATION --output=FILE [flags]", purpose: "history for Prometheus",
            pointer: BackfillOptions.pointer
        ) { loader, arguments throws(ConfigError) in
            let given = try BackfillOptions.extract(arguments)
            switch try loader.with(arguments: given.rest).load() {
            case .help: return .help(BackfillOptions.help)
            case .run(let configuration):
                return .backfill(
                    configuration,
                    try BackfillOptions.parse(
                        since: given.since, until: given.until, output: given.output, labels: given.labels))
            case let other: return other
            }
        },
        Subcommand(
            name: "healthcheck", usage: "[--timeout=DURATION] [flags]", purpose: "a container's health check",
            pointer: HealthCheck.pointer
        ) { loader, arguments throws(ConfigError) in
            let given = try HealthCheck.extract(arguments)
            let flags = try CommandLineFlags.parse(given.rest)
            if flags.isSet(Settings.help) { return .help(HealthCheck.help) }
            return .healthcheck(try HealthCheck(try loader.layered(flags), timeout: given.timeout))
        },
    ]

    static func named(_ name: String?) -> Subcommand? { all.first { $0.name == name } }
}
