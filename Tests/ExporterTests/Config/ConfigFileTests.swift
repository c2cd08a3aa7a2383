import Glibc
import TestSupport
import Testing

@testable import Exporter

/// `--config.file`: YAML (and JSON, which is YAML) with the table's snake_case keys.
@Suite struct ConfigFileTests {
    let key = testKey

    /// The configuration a file of `text` gives, with `arguments` beside it.
    func loadFile(_ text: String, _ arguments: [String] = []) throws -> Configuration {
        let file = temporaryFile(text, suffix: ".yml")
        defer { unlink(file) }
        return try load(["--config.file", file] + arguments)
    }

    @Test func commentsFlowAndBlockForms() throws {
        let config = try loadFile(
            """
            %YAML 1.2
            ---
            # The exporter's settings.
            web:
              listen_address: "127.0.0.1:9100"   # quoted: a plain scalar may not start with ':' here
              telemetry_path: /weather
              max_connections: 100
              read_timeout: 5s
              idle_timeout: 30s
              enable_lifecycle: true
            openweather: {language: de, max_requests_per_minute: 600, timeout: 2s, max_staleness: 5h, max_idle_connections: 0}
            alerts:
              temperature_above_celsius: 35
            collector:
              weather: {interval: 15m}
              air_pollution: true
              forecast:
                enabled: true
                horizons: [3h, 6h]
                windows:
                  - 24h
                  - 48h
            log: {level: debug, format: json}
            storage:
              path: '/var/lib/owe'
            locations:
              - name: London
                latitude: 51.51
                longitude: -0.13
              - {name: Paris, query: "Paris,FR", alerts: false}
              - name: >-
                  Home
                  Town
                zip: 94040,US
                alerts:
                  temperature_below_celsius: -5
            ...
            """)
        #expect(config.listenAddresses == [ListenAddress(host: "127.0.0.1", port: 9100)])
        #expect(config.telemetryPath == "/weather")
        #expect(config.maxConnections == 100)
        #expect(config.readTimeout == .seconds(5) && config.idleTimeout == .seconds(30))
        #expect(config.enableLifecycle)
        #expect(config.language == "de" && config.maxRequestsPerMinute == 600 && config.requestTimeout == .seconds(2))
        #expect(config.maxStaleness == .duration(.seconds(18000)) && config.maxIdleConnections == 0)
        #expect(config.interval(of: "weather") == .seconds(900))
        #expect(config.activeSources.map(\.name) == ["air_pollution", "forecast", "geocoding", "weather"])
        let forecast = try #require(config.forecastOptions)
        #expect(forecast.horizons == [Duration.seconds(3 * 3600), .seconds(6 * 3600)])
        #expect(forecast.windows == [Duration.seconds(24 * 3600), .seconds(48 * 3600)])
        #expect(config.logLevel == .debug && config.logFormat == .json)
        #expect(config.storagePath == "/var/lib/owe")
        #expect(
            config.locations == [
                Location(name: "London", latitude: 51.51, longitude: -0.13),
                Location(name: "Paris", place: .query(.name("Paris,FR")), alerts: .off),
                Location(name: "Home Town", place: .query(.zip("94040,US")), alerts: .custom(.init(belowCelsius: -5))),
            ])
        #expect(config.thresholds(for: config.locations[0]) == AlertThresholds(aboveCelsius: 35).merged(over: .builtIn))
        #expect(config.warnings.isEmpty, "\(config.warnings)")
    }

    /// Issue 29 §9: a location's key moved to the dash's column, or to the top level, is told the
    /// column of its item's keys.
    @Test func aLocationKeyOutOfItsItemIsToldTheItemsKeyColumn() throws {
        for (text, says) in [
            (
                "locations:\n  - name: Home\n    longitude: 2\n  latitude: 1\n",
                "line 4, column 3: this line is at the column of the '- ' above"
            ),
            (
                "locations:\n  - name: Home\n    longitude: 2\nlatitude: 1\n",
                "line 4, column 1: `latitude` is a key of a location"
            ),
        ] {
            do {
                _ = try loadFile(text)
                Issue.record("\(text.debugDescription) loaded")
            } catch {
                let message = "\(error)"
                #expect(message.contains(says), "\(message)")
                #expect(message.contains("column 5"), "\(message)")
            }
        }
    }

    @Test func jsonWithTheSameKeysGivesTheSameConfiguration() throws {
        let yaml = try loadFile(
            """
            web:
              listen_address: ":9001"
            collector:
              air_pollution: {enabled: true, interval: 2h}
            locations:
              - {name: A, latitude: 1, longitude: 2, alerts: {temperature_above_celsius: 30}}
            """)
        let json = try loadFile(
            """
            {"web": {"listen_address": ":9001"},
             "collector": {"air_pollution": {"enabled": true, "interval": "2h"}},
             "locations": [{"name": "A", "latitude": 1, "longitude": 2, "alerts": {"temperature_above_celsius": 30}}]}
            """)
        #expect(yaml.listenAddresses == json.listenAddresses && yaml.locations == json.locations)
        #expect(
            yaml.collectors.map(\.enabled) == json.collectors.map(\.enabled)
                && yaml.collectors.map(\.interval) == json.collectors.map(\.interval))
        #expect(yaml.interval(of: "air_pollution") == .seconds(7200))
        #expect(yaml.warnings.isEmpty && json.warnings.isEmpty)
    }

    /// A JSON file written for an older release (camelCase keys) keeps working, with one warning per old key.
    @Test func camelCaseKeysOfOlderReleasesWarnOnceEach() throws {
        let config = try loadFile(
            """
            {"web": {"listenAddress": ":9001", "config.file": ""},
             "openweather": {"maxRequestsPerMinute": 120, "apiKeyFile": null},
             "alerts": {"temperatureAboveCelsius": 35},
             "collector": {"airPollution": {"enabled": true, "interval": "1h"}},
             "locations": [{"name": "Seville", "latitude": 37.39, "longitude": -5.99, "alerts": {"temperatureBelowCelsius": 0}}]}
            """.replacing("\"apiKeyFile\": null", with: "\"maxIdleConnections\": 4"))
        #expect(
            config.listenAddresses.map(\.port) == [9001] && config.maxRequestsPerMinute == 120
                && config.maxIdleConnections == 4)
        #expect(config.alertDefaults == AlertThresholds(aboveCelsius: 35).merged(over: .builtIn))
        #expect(config.activeSources.map(\.name) == ["air_pollution", "forecast", "weather"])
        #expect(
            config.thresholds(for: config.locations[0])
                == AlertThresholds(aboveCelsius: 35, belowCelsius: 0).merged(over: .builtIn))
        let renames = [
            ("web.listenAddress", "web.listen_address"), ("web.config.file", "web.config_file"),
            ("openweather.maxRequestsPerMinute", "openweather.max_requests_per_minute"),
            ("openweather.maxIdleConnections", "openweather.max_idle_connections"),
            ("alerts.temperatureAboveCelsius", "alerts.temperature_above_celsius"),
            ("collector.airPollution", "collector.air_pollution"),
            ("locations[0].alerts.temperatureBelowCelsius", "locations[0].alerts.temperature_below_celsius"),
        ]
        #expect(config.warnings.count == renames.count, "\(config.warnings)")
        for (old, new) in renames {
            #expect(
                config.warnings.filter { $0.contains("`\(old)` is the old name of `\(new)`") }.count == 1,
                "\(old): \(config.warnings)")
        }
        #expect(
            config.warnings.allSatisfy {
                $0.contains("config file \"") && $0.contains(", line ") && $0.contains(", column ")
            })
    }

    /// The example shipped in deploy/ is read by the exporter's own reader, as users will feed it.
    @Test func theDeployExampleLoads() throws {
        let root = repositoryDirectory()
        guard
            case .run(let config) = try ConfigurationLoader(
                arguments: ["--config.file", root + "/deploy/config/openweather-exporter.yml"], environment: key
            ).load()
        else { throw ConfigError("not a run") }
        #expect(config.locations.map(\.name) == ["London", "Seville", "Ocean", "Paris"])
        #expect(config.locations[1].alerts == .custom(.init(aboveCelsius: 40, belowCelsius: 0)))
        #expect(config.locations[2].alerts == .off)
        #expect(config.locations[3].place == .query(.name("Paris,FR")))
        #expect(config.alertDefaults == AlertThresholds(aboveCelsius: 35, belowCelsius: -10).merged(over: .builtIn))
        #expect(
            config.activeSources.map(\.name) == ["air_pollution", "forecast", "geocoding", "weather"],
            "the forecast alerts have their data")
        #expect(config.interval(of: "air_pollution") == .seconds(3600))
        #expect(config.interval(of: "forecast") == .seconds(3600))
        #expect(config.warnings.isEmpty, "\(config.warnings)")
    }

    /// `--help` is written from the table: every flag, its placeholder and its default.
    @Test func helpListsEverySettingWithItsDefault() throws {
        guard case .help(let text) = try ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            Issue.record("no help")
            return
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for flag in Flag.all {
            let form = flag.kind == .boolean ? "  --\(flag.name)" : "  --\(flag.name)=\(flag.placeholder)"
            guard let at = lines.firstIndex(of: form) else {
                Issue.record("--help has no line \(form)")
                continue
            }
            #expect(lines[at + 1].hasPrefix("      \(flag.help)"), "\(flag.name)")
            if !flag.defaultText.isEmpty {
                #expect(lines[at + 1].hasSuffix("(default: \(flag.defaultText))"), "\(flag.name): \(lines[at + 1])")
            }
        }
        // The defaults shown are the values a configuration starts from.
        #expect(Settings.maxConnections.flag.defaultText == String(Configuration().maxConnections))
        #expect(Settings.readTimeout.flag.defaultText == PrometheusDuration.format(Configuration().readTimeout))
        #expect(Settings.listenAddress.flag.defaultText == Configuration().listenAddresses.map(\.description).joined())
        #expect(Settings.maxStaleness.flag.defaultText == Configuration().maxStaleness.description)
        #expect(
            text.contains(
                """
                --openweather.max-requests-per-minute=N\n\
                      Request budget of your plan; the poll interval stretches to fit it. (default: 60 (6000 with \
                --demo))
                """
            ))
    }

    /// Issue 29 §7: a short "start here" group first, then a heading per group; the usage names backfill.
    @Test func helpStartsWithTheFourFlagsANewcomerNeedsThenGroupsWithHeadings() throws {
        guard case .help(let text) = try ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            Issue.record("no help")
            return
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "usage: openweather-exporter [flags]")
        #expect(lines[1].hasPrefix("       openweather-exporter backfill --since=DURATION --output=FILE"))
        // Each heading is a line ending in ':' after a blank line; the flags under it until the next.
        var groups: [(heading: String, flags: [String])] = []
        for (index, line) in lines.enumerated() where index > 0 {
            if lines[index - 1].isEmpty, line.hasSuffix(":"), !line.hasPrefix(" ") {
                groups.append((line, []))
            } else if line.hasPrefix("  --"), !groups.isEmpty {
                groups[groups.count - 1].flags.append(String(line.dropFirst(4).prefix { $0 != "=" }))
            }
        }
        #expect(groups.first?.heading == "Start here:")
        #expect(groups.first?.flags == ["demo", "location", "config.file", "web.listen-address"])
        let headings = Flag.Group.allCases.map { $0.heading + ":" }
        let shown = groups.map(\.heading).filter { headings.contains($0) }
        #expect(shown == headings, "every group, in order")
        let listed = groups.flatMap(\.flags)
        #expect(listed.sorted() == Flag.all.map(\.name).sorted(), "every flag once")
        #expect(groups.first { $0.heading.hasPrefix("Web server") }?.flags.allSatisfy { $0.hasPrefix("web.") } == true)
        #expect(
            groups.first { $0.heading.hasPrefix("Collectors") }?.flags.allSatisfy { $0.hasPrefix("collector.") } == true
        )
    }

    /// The deploy reference's flags tables list every flag, and a default it gives as one value is the table's.
    @Test func theReadmeFlagsTableAgreesWithTheTable() throws {
        // Issue 29 §8: one table, deploy/docs/configuration.md's under "## Configuration", has a row for
        // every flag of the settings table (a flag documented only elsewhere is a miss) and none for a
        // flag that does not exist.
        let text = String(
            decoding: try readFile(repositoryDirectory() + "/deploy/docs/configuration.md"), as: UTF8.self)
        let section = try #require(text.firstRange(of: "\n## Configuration\n").map { text[$0.upperBound...] })
        let lines = section.split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(lines.firstIndex { $0.hasPrefix("| flag | default | meaning |") })
        var documented: [String: String] = [:]
        for line in lines[(header + 2)...].prefix(while: { $0.hasPrefix("| `--") }) {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { String($0).trimmed }
            // `--version`, `--help` share a row.
            for part in cells[1].split(separator: "`, `") {
                let name = String(part.drop { $0 == "`" || $0 == "-" }.prefix { $0 != "`" && $0 != "=" && $0 != " " })
                documented[name] = cells[2]
            }
        }
        // A former name (--poll.interval) is documented in the row of its new name.
        let flags = Flag.all.filter { $0.renamedTo == nil }
        #expect(documented.count >= flags.count, "\(documented.count) rows for \(flags.count) flags")
        for flag in flags {
            guard let shown = documented[flag.name] else {
                Issue.record("deploy/docs/configuration.md's flags table has no row for --\(flag.name)")
                continue
            }
            if shown.hasPrefix("`"), shown.hasSuffix("`"), shown.filter({ $0 == "`" }).count == 2 {
                #expect(
                    shown.dropFirst().dropLast() == Substring(flag.defaultText),
                    "--\(flag.name): deploy reference \(shown), --help \(flag.defaultText)")
            }
        }
        for name in documented.keys where Flag.named(name) == nil {
            Issue.record("deploy/docs/configuration.md's flags table has a row for --\(name), which is no flag")
        }
    }

    /// The configuration layer knows nothing of the renderer or the server: a reload can be checked, and
    /// the table read, without either.
    @Test func configKnowsNothingOfTheRendererOrTheServer() throws {
        let root = repositoryDirectory()
        let folder = root + "/Sources/Exporter/Config/"
        let names = [
            "CommandLineFlags", "ConfigError", "ConfigFile", "Configuration", "ConfigurationLoader", "DemoLocations",
            "Flags",
            "ListenAddress", "Location", "LocationSpec", "PrometheusDuration", "Setting", "Shard",
        ]
        guard let directory = opendir(folder) else { throw ConfigError("cannot list \(folder)") }
        defer { closedir(directory) }
        var files: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".swift") { files.append(String(name.dropLast(6))) }
        }
        #expect(Set(files).isSuperset(of: names), "\(files)")
        for file in files {
            let text = String(decoding: try readFile(folder + file + ".swift"), as: UTF8.self)
            for word in [
                "import HTTPServer", "import Exposition", "import Gzip", "MetricsRendering", "MetricsPublisher",
                "WebHandler",
                "HTTPServerConfiguration", "Exposition.",
            ] {
                #expect(!text.contains(word), "Config/\(file).swift uses \(word)")
            }
        }
    }

    /// Every key of the table is snake_case and reaches its setting through the file reader.
    @Test func everyFileKeyIsSnakeCaseAndReadable() throws {
        for flag in Flag.all {
            guard let key = flag.key else { continue }
            #expect(!key.contains { $0.isUppercase || $0 == "-" }, "\(key)")
            var node = ConfigFile.KeyTree.root
            for part in key.split(separator: ".") { node = try #require(node.children[String(part)], "\(key)") }
            #expect(flag.kind == .repeatable ? node.flag?.name == "location" : node.flag?.name == flag.name, "\(key)")
        }
        // The flags of a collector come from the source list, with file keys of their own.
        for source in Sources.all where !source.resolves {
            #expect(
                Flag.named("collector.\(source.name)")?.key == "collector.\(Settings.snakeCase(source.name)).enabled")
            #expect(Flag.named("collector.\(source.name).interval") != nil)
        }
    }
}
