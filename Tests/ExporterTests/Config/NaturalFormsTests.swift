import Glibc
import TestSupport
import Testing

@testable import Exporter

/// Issue 40: what people naturally write, and the demo with a real config, are taken (or refused with
/// the accepted form), and `--help` names every subcommand.
@Suite struct NaturalFormsTests {
    func loadFile(
        _ text: String, _ arguments: [String] = [], environment: [String: String] = testKey
    ) throws(ConfigError) -> Configuration {
        let file = temporaryFile(text, suffix: ".yml")
        defer { unlink(file) }
        return try load(["--config.file", file] + arguments, environment: environment)
    }

    func fileError(_ text: String) -> String {
        do {
            _ = try loadFile(text)
            return "no error"
        } catch {
            return error.description
        }
    }

    /// The first YAML example of `document` (from the repository's top) that names a key file: the
    /// example, and the key file it names.
    func keyFileExample(in document: String) throws -> (example: String, keyFile: String) {
        let text = String(decoding: try readFile(repositoryDirectory() + "/" + document), as: UTF8.self)
        var rest = Substring(text)
        while let start = rest.firstRange(of: "```yaml\n") {
            let end = try #require(rest[start.upperBound...].firstRange(of: "```\n"), "\(document): an open block")
            let example = String(rest[start.upperBound..<end.lowerBound])
            rest = rest[end.upperBound...]
            if let line = example.split(separator: "\n").first(where: { $0.contains("api_key_file:") }) {
                return (example, String(line.drop { $0 != ":" }.dropFirst().prefix { $0 != "#" }).trimmed)
            }
        }
        throw ConfigError("\(document) has no YAML example with api_key_file")
    }

    /// The config examples of the README and the reference name a key file this machine does not
    /// have: with `--demo` they run (the file is not read, and one warning says so); without, the
    /// missing file is still an error.
    @Test(arguments: ["README.md", "deploy/docs/configuration.md"])
    func aConfigExampleRunsUnderTheDemo(document: String) throws {
        let (example, keyFile) = try keyFileExample(in: document)
        #expect(access(keyFile, F_OK) != 0, "the example's key file \(keyFile) is not on this machine")

        let config = try loadFile(example, ["--demo"], environment: [:])
        #expect(config.demo && config.apiKeySource == "demo")
        let said = config.warnings.filter { $0.contains(keyFile) }
        #expect(said.count == 1, "\(config.warnings)")
        #expect(said.first?.contains("is not read with --demo") == true, "\(said)")
        #expect(said.first?.contains("`openweather.api_key_file`") == true, "names where it was given: \(said)")
        #expect(config.warnings.count == 1, "nothing else to say of the example: \(config.warnings)")

        do {
            _ = try loadFile(example, environment: [:])
            Issue.record("the missing key file loaded without --demo")
        } catch {
            #expect(error.description.contains("cannot read the API key file \"\(keyFile)\""), "\(error)")
        }
    }

    /// The reference's example shows every form of a location the file takes.
    @Test func theReferenceExampleHasEveryFormOfALocation() throws {
        let config = try loadFile(try keyFileExample(in: "deploy/docs/configuration.md").example, ["--demo"])
        #expect(
            config.locations.map(\.name) == [
                "Seville", "London", "Home", "Office", "Mid-Pacific buoy", "Paris", "Depot",
            ])
        #expect(config.locations[4].alerts == .off)
        #expect(config.locations[5].place == .query(.name("Paris")))
        #expect(config.locations[6].place == .query(.zip("10115,DE")))
        #expect(config.locations[6].alerts == .custom(AlertThresholds(belowCelsius: 0)))
    }

    /// The demo's simulator is not OpenWeather: its default budget does not hold the demo (or a
    /// `backfill --demo`) back; a budget given still holds, and a real URL keeps the plan's default.
    @Test func theDemoIsNotPacedAtOpenWeathersBudget() throws {
        #expect(try load(["--demo"], environment: [:]).maxRequestsPerMinute == Settings.demoMaxRequestsPerMinute)
        #expect(Settings.demoMaxRequestsPerMinute >= 6000)
        #expect(
            try load(["--demo", "--openweather.max-requests-per-minute=60"], environment: [:]).maxRequestsPerMinute
                == 60)
        #expect(try load(["--location", "A=1,2"]).maxRequestsPerMinute == 60)
        #expect(Settings.maxRequestsPerMinute.flag.defaultText == "60 (6000 with --demo)")
    }

    /// `--help`'s usage block names every subcommand, from the table the loader dispatches on.
    @Test func helpsUsageNamesEverySubcommand() throws {
        guard case .help(let text) = try ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            Issue.record("no help")
            return
        }
        let usage = text.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
        #expect(Subcommand.all.map(\.name) == ["backfill", "healthcheck"])
        #expect(usage.count == 1 + Subcommand.all.count, "\(usage)")
        for (line, subcommand) in zip(usage.dropFirst(), Subcommand.all) {
            #expect(line.hasPrefix("       openweather-exporter \(subcommand.name) "), "\(line)")
            #expect(line.hasSuffix("; \(subcommand.name) --help)"), "\(line)")
            #expect(text.hasSuffix(subcommand.pointer) || text.contains(subcommand.pointer + "\n"))
            // Each is dispatched by its name: its own help.
            guard
                case .help(let own) = try ConfigurationLoader(arguments: [subcommand.name, "--help"], environment: [:])
                    .load()
            else {
                Issue.record("\(subcommand.name) --help is no help")
                continue
            }
            #expect(own.hasPrefix("usage: openweather-exporter \(subcommand.name) "))
        }
        // A word first that is no subcommand: the message names them.
        #expect(loadError(["helthcheck"]).contains("a subcommand comes first: backfill or healthcheck"))
        #expect(!loadError(["--location", "A=1,2", "stray"]).contains("subcommand"))
    }

    /// `- London` in the file is what `--location London` is: the name and the query the same; the
    /// flag's other forms too, with the file's position in a mistake.
    @Test func aBarePlaceInTheFileIsReadAsTheFlagReadsIt() throws {
        let config = try loadFile(
            """
            locations:
              - London
              - Springfield,IL,US
              - "Home=Springfield,IL,US"
              - "Office=zip:94040,US,alerts=off"
              - "Seville=37.3891,-5.9845,above=40"
              - {name: Paris, query: "Paris,FR"}
            """)
        #expect(
            config.locations == [
                Location(name: "London", place: .query(.name("London")), alerts: .inherit),
                Location(name: "Springfield,IL,US", place: .query(.name("Springfield,IL,US")), alerts: .inherit),
                Location(name: "Home", place: .query(.name("Springfield,IL,US")), alerts: .inherit),
                Location(name: "Office", place: .query(.zip("94040,US")), alerts: .off),
                Location(
                    name: "Seville", latitude: 37.3891, longitude: -5.9845,
                    alerts: .custom(AlertThresholds(aboveCelsius: 40))),
                Location(name: "Paris", place: .query(.name("Paris,FR")), alerts: .inherit),
            ])
        #expect(try load(["--location", "London"]).locations == [config.locations[0]])
        // Twice, once each way: the same name twice.
        #expect(fileError("locations:\n  - London\n  - {name: London, query: London}\n").contains("defined twice"))
        let wrong = fileError("locations:\n  - \"51.5,-0.12\"\n")
        #expect(wrong.contains("line 2, column 5: `locations[0]`"), "\(wrong)")
        #expect(wrong.contains("coordinates need a name"), "\(wrong)")
        #expect(wrong.contains("for example - London"), "the file's form, not the flag's: \(wrong)")
        #expect(fileError("locations:\n  - [London]\n").contains("or a place as --location takes it (London"))
        #expect(fileError("locations: London\n").contains("(- London, or - name: London"))
    }

    /// `alerts: off` (the flag's word, YAML 1.1's false) switches a place's alerts off; on and true
    /// keep the defaults; another word says the accepted forms.
    @Test func alertsOffInTheFileIsTheFlagsAlertsOff() throws {
        for word in ["off", "Off", "OFF", "false", "no", "\"off\""] {
            let config = try loadFile("locations:\n  - {name: A, latitude: 1, longitude: 2, alerts: \(word)}\n")
            #expect(config.locations[0].alerts == .off, "\(word)")
        }
        for word in ["on", "true", "yes"] {
            let config = try loadFile("locations:\n  - {name: A, latitude: 1, longitude: 2, alerts: \(word)}\n")
            #expect(config.locations[0].alerts == .inherit, "\(word)")
        }
        let wrong = fileError("locations:\n  - {name: A, latitude: 1, longitude: 2, alerts: none}\n")
        #expect(wrong.contains("line 2, column 50: `locations[0].alerts` is \"none\": give off (or false)"), "\(wrong)")
        #expect(wrong.contains("or a mapping of thresholds (temperature_above_celsius: 35"), "\(wrong)")
        // The same words for every switch, in the file and on the command line.
        let switched = try loadFile(
            "collector:\n  air_pollution: on\n  forecast: off\nlocations:\n  - {name: A, latitude: 1, longitude: 2}\n")
        #expect(switched.activeSources.map(\.name) == ["air_pollution", "weather"])
        #expect(try load(["--location", "A=1,2", "--collector.forecast=off"]).activeSources.map(\.name) == ["weather"])
        #expect(
            loadError(["--location", "A=1,2", "--collector.forecast=maybe"]).contains(
                "\"maybe\" is not true or false (or yes/no, on/off, 1/0)"))
    }

    /// `--log.level=DEBUG`, `log: {level: Warn, format: JSON}`: a word of a choice in any case.
    @Test func choicesTakeAnyCase() throws {
        #expect(try load(["--location", "A=1,2", "--log.level=DEBUG"]).logLevel == .debug)
        let config = try loadFile("log: {level: Warn, format: JSON}\nlocations: [\"A=1,2\"]\n")
        #expect(config.logLevel == .warn && config.logFormat == .json)
        #expect(
            loadError(["--location", "A=1,2", "--log.level=verbose"]).contains(
                "--log.level \"verbose\" is not a log level: use debug, info, warn or error"))
    }
}
