import Glibc
import TestSupport
import Testing

@testable import Exporter

@Suite struct ConfigurationTests {
    let key = testKey

    /// above -10 and below 40 fire both alerts at nearly any temperature: a warning names the place and the fix.
    @Test func invertedThresholdsAreWarnedAbout() throws {
        let config = try load([
            "--location", "Office=1,2,above=-10,below=40", "--location", "Fine=3,4,above=30,below=-5",
            "--location", "Half=5,6,above=15", "--alerts.temperature-below-celsius=20",
        ])
        let inverted = config.warnings.filter { $0.contains("wrong way round") }
        #expect(
            inverted == [
                """
                location "Office" has its temperature thresholds the wrong way round (above=-10 is below below=40), \
                so both alerts fire at nearly every temperature: swap them (above=40,below=-10 in --location, or \
                temperature_above_celsius: 40 and temperature_below_celsius: -10 under its alerts in the config file)
                """,
                """
                location "Half" has its temperature thresholds the wrong way round (above=15 is below below=20), so \
                both alerts fire at nearly every temperature: swap them (above=20,below=15 in --location, or \
                temperature_above_celsius: 20 and temperature_below_celsius: 15 under its alerts in the config file)
                """,
            ], "\(config.warnings)")
        let defaults = try load([
            "--location", "A=1,2", "--alerts.temperature-above-celsius=-10", "--alerts.temperature-below-celsius=40",
        ])
        #expect(
            defaults.warnings.contains {
                $0.hasPrefix("--alerts.temperature-above-celsius=-10 is below --alerts.temperature-below-celsius=40")
                    && $0.contains("swap")
            })
        let many = try load((0..<8).flatMap { ["--location", "L\($0)=1,2,above=1,below=2"] })
        #expect(many.warnings.count { $0.contains("wrong way round") } == 6)
        #expect(
            many.warnings.contains(
                "3 more locations have their temperature thresholds the wrong way round; swap them as above"))
        #expect(try load(["--location", "A=1,2,above=30,below=-5"]).warnings.isEmpty)
    }

    /// A °F user is answered in °F with the numbers written (100F, never 37.77777777777778); bounds in
    /// two units are compared in °C, which the warning says.
    @Test func invertedThresholdsAreWarnedAboutAsWritten() throws {
        let config = try load([
            "--location", "Phoenix=33.45,-112.07,above=100F,below=104.5F", "--location",
            "Mixed=1,2,above=98.6F,below=40",
            "--alerts.temperature-above-celsius=20F", "--alerts.temperature-below-celsius=0",
        ])
        #expect(
            config.warnings.filter { $0.contains("wrong way round") || $0.hasPrefix("--alerts.") } == [
                """
                --alerts.temperature-above-celsius=20F is below --alerts.temperature-below-celsius=0 (-6.67 °C < 0 \
                °C): both alerts fire at nearly every temperature for the locations that set no thresholds; the above \
                bound is the upper one, so swap the two values
                """,
                """
                location "Phoenix" has its temperature thresholds the wrong way round (above=100F is below \
                below=104.5F), so both alerts fire at nearly every temperature: swap them (above=104.5F,below=100F in \
                --location, or temperature_above_celsius: 104.5F and temperature_below_celsius: 100F under its alerts \
                in the config file)
                """,
                """
                location "Mixed" has its temperature thresholds the wrong way round (above=98.6F is below below=40 \
                (37 °C < 40 °C)), so both alerts fire at nearly every temperature: swap them (above=40,below=98.6F in \
                --location, or temperature_above_celsius: 40 and temperature_below_celsius: 98.6F under its alerts in \
                the config file)
                """,
            ], "\(config.warnings)")
    }

    @Test func defaults() throws {
        let config = try load(["--location", "London=51.5074,-0.1278"])
        #expect(config.listenAddresses == [ListenAddress(host: "", port: 9755)])
        #expect(config.telemetryPath == "/metrics")
        #expect(config.interval(of: "weather") == .seconds(600))
        #expect(config.activeSources.map(\.name) == ["forecast", "weather"])
        #expect(config.maxRequestsPerMinute == 60)
        #expect(config.requestTimeout == .seconds(10))
        #expect(config.language == "en")
        #expect(config.openWeatherURL == "https://api.openweathermap.org")
        #expect(config.sourcePolling.maxStaleness == [10800, 1800])
        // deploy/docs/web.md's server limits table.
        #expect(config.maxConnections == 4096)
        #expect(config.readTimeout == .seconds(10))
        #expect(config.idleTimeout == .seconds(60))
        #expect(config.logLevel == .info)
        #expect(config.logFormat == .logfmt)
        #expect(config.locations == [Location(name: "London", latitude: 51.5074, longitude: -0.1278)])
        #expect(config.apiKey.value == "0123456789abcdef0123456789abcdef")
        #expect(config.warnings.isEmpty)
    }

    /// The forecast alerts read the forecast: it is on unless switched off, and the plan says what it costs.
    @Test func theForecastIsOnByDefaultAndThePlanSaysItsCost() throws {
        let config = try load(["--location", "A=1,2", "--location", "B=3,4"])
        #expect(config.activeSources.map(\.name) == ["forecast", "weather"])
        let forecast = try #require(config.requestPlan.entries.first { $0.name == "forecast" })
        #expect(forecast.text == "0.03/min (1 request per location every 1h)")
        #expect(try load(["--location", "A=1,2", "--no-collector.forecast"]).activeSources.map(\.name) == ["weather"])
        // A daily poll of one place is 1/1440 a minute: two significant digits, never "0/min".
        let daily = try load(["--location", "A=1,2", "--collector.forecast.interval=1d"]).requestPlan.entries.first {
            $0.name == "forecast"
        }
        #expect(daily?.text == "0.00069/min (1 request per location every 1d)")
    }

    /// A source another stands in for makes no requests: the plan says where it is read from, not "0/min".
    @Test func thePlanSaysWhereAStoodInSourceIsReadFrom() throws {
        let plan = try load(["--location", "A=1,2", "--collector.onecall"]).requestPlan
        #expect(
            plan.summary
                == """
                forecast=read from onecall (no requests of its own), onecall=0.1/min (1 request per location every \
                10m; 144/day needed, 1000/day allowed), weather=read from onecall (no requests of its own)
                """
        )
    }

    /// One spelling per source: the flag, the file key and the `source` label are the config file's word;
    /// the old hyphenated flag still works, with a warning.
    @Test func oneSpellingPerSource() throws {
        for source in Sources.all where !source.resolves {
            #expect(!source.name.contains("-"))
            #expect(Settings.collector(source).flag.name == "collector.\(source.name)")
            #expect(Settings.collector(source).flag.key == "collector.\(source.name).enabled")
        }
        let old = try load([
            "--location", "A=1,2", "--collector.air-pollution", "--collector.air-pollution.interval=2h",
        ])
        #expect(old.activeSources.map(\.name) == ["air_pollution", "forecast", "weather"])
        #expect(old.interval(of: "air_pollution") == .seconds(7200))
        #expect(
            old.warnings.contains {
                $0.contains("--collector.air-pollution is the old spelling of --collector.air_pollution")
            })
        let off = try load(["--location", "A=1,2", "--demo", "--no-collector.air-pollution"])
        #expect(!off.activeSources.contains { $0.name == "air_pollution" })
        #expect(
            loadError(["--location", "A=1,2", "--collector.air-polution"]).contains(
                "did you mean --collector.air_pollution?"))
    }

    /// --help: each collector's flags together, in `source` label order; the deprecated flag last.
    @Test func helpOrder() throws {
        guard case .help(let text) = try ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            Issue.record("no help")
            return
        }
        let flags = text.split(separator: "\n").filter { $0.hasPrefix("  --") }.map {
            String($0.dropFirst(4).prefix { $0 != "=" })
        }
        // Each source's switch, interval and own settings (the forecast's horizons and windows; the deprecated one
        // comes last).
        let collectors = Sources.all.filter { !$0.resolves }.flatMap { source in
            ["collector.\(source.name)", "collector.\(source.name).interval"] + source.settingFlags.map(\.name)
        }.filter { $0.hasPrefix("collector.") }
        #expect(
            collectors.starts(with: [
                "collector.air_pollution", "collector.air_pollution.interval", "collector.air_pollution_forecast",
                "collector.air_pollution_forecast.interval", "collector.air_pollution_forecast.horizons",
                "collector.air_pollution_forecast.windows",
                "collector.forecast", "collector.forecast.interval", "collector.forecast.horizons",
                "collector.forecast.windows",
            ]))
        let first = try #require(flags.firstIndex(of: collectors[0]))
        #expect(Array(flags[first...].prefix(collectors.count)) == collectors)
        #expect(flags.last == "poll.interval")
        #expect(Flag.named("poll.interval")?.help.hasPrefix("Deprecated") == true)
        #expect(
            !Settings.url.flag.help.contains("or a proxy") && Settings.url.flag.help.contains("--openweather.proxy-url")
        )
    }

    @Test func stalenessDefaultsToThreePollIntervals() throws {
        #expect(
            try load(["--location", "A=1,2", "--collector.weather.interval=2m"]).sourcePolling.maxStaleness == [
                10800, 360,
            ])
        #expect(
            try load(["--location", "A=1,2", "--collector.weather.interval=2m", "--openweather.max-staleness=1m"])
                .sourcePolling.maxStaleness == [60, 60])
    }

    @Test func flagForms() throws {
        let config = try load([
            "--web.listen-address=127.0.0.1:9100", "--web.telemetry-path", "/weather",
            "--location=A=1,2", "--location", "B=-3.5,4.25,above=30,below=-5", "--location", "C=0,0,alerts=off",
            "--collector.weather.interval=1h30m", "--collector.air_pollution", "--openweather.timeout=2s",
            "--log.level=debug", "--log.format", "json",
            "--openweather.max-requests-per-minute=600", "--alerts.temperature-above-celsius=35",
        ])
        #expect(config.listenAddresses == [ListenAddress(host: "127.0.0.1", port: 9100)])
        #expect(config.telemetryPath == "/weather")
        #expect(config.interval(of: "weather") == .seconds(5400))
        #expect(config.activeSources.map(\.name) == ["air_pollution", "forecast", "weather"])
        #expect(config.sourcePolling.intervals == [.seconds(3600), .seconds(3600), .seconds(5400)])
        #expect(config.requestTimeout == .seconds(2))
        #expect(config.logLevel == .debug)
        #expect(config.logFormat == .json)
        #expect(config.locations.map(\.name) == ["A", "B", "C"])
        #expect(config.thresholds(for: config.locations[0]) == AlertThresholds(aboveCelsius: 35).merged(over: .builtIn))
        #expect(
            config.thresholds(for: config.locations[1])
                == AlertThresholds(aboveCelsius: 30, belowCelsius: -5).merged(over: .builtIn))
        #expect(config.thresholds(for: config.locations[2]) == AlertThresholds())
    }

    @Test(arguments: [
        ("[::]:9755", "::", 9755), ("[::1]:80", "::1", 80), (":0", "", 0), ("localhost:9755", "localhost", 9755),
    ])
    func listenAddresses(text: String, host: String, port: Int) throws {
        let config = try load(["--web.listen-address", text, "--location", "A=1,2"])
        #expect(config.listenAddresses == [ListenAddress(host: host, port: UInt16(port))])
    }

    @Test func environmentAndFileAndFlagsInRisingOrder() throws {
        let file = temporaryFile(
            """
            {"web": {"listen_address": ":9001", "telemetry_path": "/from-file"},
             "poll": {"interval": "20m"},
             "openweather": {"language": "de", "max_requests_per_minute": 120},
             "alerts": {"temperature_above_celsius": 35, "temperature_below_celsius": -10},
             "locations": [
               {"name": "Seville", "latitude": 37.39, "longitude": -5.99, "alerts": {"temperature_above_celsius": 40}},
               {"name": "Ocean", "latitude": -45, "longitude": -140, "alerts": false}
             ]}
            """)
        defer { unlink(file) }
        let environment = key.merging([
            "OPENWEATHER_EXPORTER_POLL_INTERVAL": "15m", "OPENWEATHER_EXPORTER_WEB_TELEMETRY_PATH": "/from-env",
        ]) { $1 }
        let config = try load(["--config.file", file, "--web.telemetry-path=/from-flag"], environment: environment)
        #expect(config.listenAddresses.map(\.port) == [9001])
        #expect(config.telemetryPath == "/from-flag")
        #expect(config.interval(of: "weather") == .seconds(900))
        #expect(
            config.warnings.contains { $0.contains("--poll.interval is the old name of --collector.weather.interval") })
        #expect(config.language == "de")
        #expect(config.maxRequestsPerMinute == 120)
        #expect(config.locations.map(\.name) == ["Seville", "Ocean"])
        #expect(
            config.thresholds(for: config.locations[0])
                == AlertThresholds(aboveCelsius: 40, belowCelsius: -10).merged(over: .builtIn))
        #expect(config.thresholds(for: config.locations[1]) == AlertThresholds())
        #expect(config.configFile == file)

        let overridden = try load(["--config.file", file, "--location", "Only=1,1"])
        #expect(overridden.locations.map(\.name) == ["Only"])
    }

    @Test func environmentLocations() throws {
        let config = try load(
            [], environment: key.merging(["OPENWEATHER_EXPORTER_LOCATION": "A=1,2; B=3,4,above=20"]) { $1 })
        #expect(config.locations.map(\.name) == ["A", "B"])
    }

    @Test func keyFileTrimsTheNewlineAndWarnsWhenOthersCanRead() throws {
        let privateFile = temporaryFile("5ec7e7ce15ab1e5ec7e7ce15ab1e0123\n")
        let publicFile = temporaryFile("5ec7e7ce15ab1e5ec7e7ce15ab1e0123\n", mode: 0o644)
        defer {
            unlink(privateFile)
            unlink(publicFile)
        }
        let config = try load(["--openweather.api-key-file", privateFile, "--location", "A=1,2"], environment: [:])
        #expect(config.apiKey.value == "5ec7e7ce15ab1e5ec7e7ce15ab1e0123")
        #expect(config.warnings.isEmpty)
        let exposed = try load(["--openweather.api-key-file", publicFile, "--location", "A=1,2"], environment: [:])
        #expect(exposed.warnings.contains { $0.contains("readable by every user") })
        #expect(!exposed.warnings.joined().contains("5ec7e7ce15ab1e5ec7e7ce15ab1e0123"))
    }

    @Test func demoNeedsNoKeyNorLocation() throws {
        let config = try load(["--demo"], environment: [:])
        #expect(config.demo)
        #expect(config.locations.count >= 3 && config.locations.count <= 5)
        #expect(config.interval(of: "weather") == .seconds(15))
        // Every source but a resolver and One Call (which stands in for others and needs a subscription).
        #expect(
            config.activeSources.map(\.name) == Sources.all.filter { !$0.resolves && $0.standsIn.isEmpty }.map(\.name),
            "the demo shows every source")
        // In name order (the slots' and the exposition's), and never fewer than the shipped defaults.
        let names = config.activeSources.map(\.name)
        #expect(names == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(Set(["weather", "forecast"]).isSubset(of: names))
        #expect(config.warnings.isEmpty)
    }

    @Test func shortIntervalWarnsAndTooManyLocationsStretchIt() throws {
        let short = try load(["--location", "A=1,2", "--collector.weather.interval=1m"])
        #expect(short.warnings.contains { $0.contains("shorter than 10m") })
        let many = (0..<1200).map { "--location=L\($0)=1,\($0 % 180)" }
        let stretched = try load(many + ["--openweather.max-requests-per-minute=60", "--no-collector.forecast"])
        #expect(stretched.sourcePolling.intervals == [.seconds(1220)])
        #expect(
            stretched.warnings.contains {
                $0.contains("1200 locations need 120 requests a minute") && $0.contains("stretched")
            })
        // Two sources: stretched by one factor, each keeping its share.
        let both = try load(many + ["--collector.air_pollution", "--no-collector.forecast"])
        let intervals = both.sourcePolling.intervals.map(\.seconds)
        #expect(abs(intervals[0] - 8540) < 0.01 && abs(intervals[1] - 1423.334) < 0.01, "\(intervals)")
        #expect(both.requestPlan.requestsPerMinute <= 60 * 60 / 61 + 0.01)
    }

    @Test func locationForms() throws {
        let config = try load([
            "--location", "Paris", "--location", "Home=Springfield,IL,US,above=30", "--location",
            "Office=zip:94040,US,alerts=off",
            "--location", "Sea=-45,-140", "--location", "London,GB,below=-5",
        ])
        #expect(
            config.locations == [
                Location(name: "Paris", place: .query(.name("Paris"))),
                Location(
                    name: "Home", place: .query(.name("Springfield,IL,US")), alerts: .custom(.init(aboveCelsius: 30))),
                Location(name: "Office", place: .query(.zip("94040,US")), alerts: .off),
                Location(name: "Sea", latitude: -45, longitude: -140),
                Location(
                    name: "London,GB", place: .query(.name("London,GB")), alerts: .custom(.init(belowCelsius: -5))),
            ])
        #expect(config.activeSources.map(\.name) == ["forecast", "geocoding", "weather"])
        // Resolving is once per place, not a rate: the plan counts the polled sources alone.
        #expect(config.requestPlan.entries.map(\.name) == ["forecast", "weather"])
    }

    @Test func locationsInTheFileByQueryOrZipAndCollectors() throws {
        let file = temporaryFile(
            """
            collector:
              air_pollution: {enabled: true, interval: 2h}
              weather:
                interval: 15m
            openweather:
              max_staleness: 2x
            locations:
              - name: Home
                query: Springfield,IL,US
                alerts: {temperature_below_celsius: 0}
              - {name: Office, zip: "94040,US"}
            """, suffix: ".yml")
        defer { unlink(file) }
        let config = try load(["--config.file", file], environment: key)
        #expect(config.locations.map(\.place) == [.query(.name("Springfield,IL,US")), .query(.zip("94040,US"))])
        #expect(config.activeSources.map(\.name) == ["air_pollution", "forecast", "geocoding", "weather"])
        #expect(config.sourcePolling.intervals == [.seconds(7200), .seconds(3600), .seconds(3600), .seconds(900)])
        #expect(config.sourcePolling.maxStaleness == [14400, 7200, 7200, 1800])
        let off = try load(
            ["--config.file", file, "--no-collector.air_pollution", "--no-collector.forecast"], environment: key)
        #expect(off.activeSources.map(\.name) == ["geocoding", "weather"])
    }

    @Test func stalenessAsADurationAppliesToEverySourceAndWarnsWhenShorterThanAnInterval() throws {
        let config = try load(["--location", "A=1,2", "--collector.air_pollution", "--openweather.max-staleness=45m"])
        #expect(config.sourcePolling.maxStaleness == [2700, 2700, 2700])
        #expect(config.warnings.contains { $0.contains("air_pollution interval (1h)") && $0.contains("3x") })
    }

    @Test func helpAndVersion() throws {
        guard case .help(let text) = try ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            Issue.record("no help")
            return
        }
        for flag in Flag.all { #expect(text.contains("--\(flag.name)")) }
        #expect(
            text.contains("--collector.air_pollution\n      Air quality")
                && text.contains("(default: disabled; enabled with --demo)"))
        #expect(
            text.contains("--collector.weather.interval=DURATION\n")
                && text.contains("(default: 10m (15s with --demo))"))
        guard case .version(let version) = try ConfigurationLoader(arguments: ["--version"], environment: [:]).load()
        else {
            Issue.record("no version")
            return
        }
        #expect(version.contains(BuildInfo.version))
    }

    @Test(
        arguments: [
            (["--location", "A=1,2", "--bogus"], "unknown flag --bogus"),
            (["--location", "A=1,2", "--collector.wether.interval=5m"], "did you mean --collector.weather.interval?"),
            (
                ["--location", "A=1,2", "--openweather.url=https://api.example:99999"],
                "--openweather.url is not a usable base URL (invalid URL"
            ),
            // A former name is read, never suggested.
            (["--location", "A=1,2", "--poll.intervall=5m"], "unknown flag --poll.intervall; run with --help"),
            (["--location", "A=1,2", "stray"], "unexpected argument \"stray\""),
            (["--location", "A=1,2", "--poll.interval"], "--poll.interval needs a value"),
            (["--location", "A=91,0"], "latitude of \"A\" is 91, outside -90..90"),
            (["--location", "A=0,-181"], "longitude of \"A\" is -181, outside -180..180"),
            (["--location", "A=north,0"], "latitude of \"A\" is \"north\", not a number"),
            (["--location", "A=1"], "needs a latitude and a longitude"),
            (["--location", "40.7,-74"], "coordinates need a name"),
            (["--location", "A=Springfield,,US"], "has an empty part"),
            (["--location", "A=a,b,c,d"], "more than CITY,STATE,COUNTRY"),
            (["--location", "A=zip:94040,US,X"], "write a postal code as zip:CODE,COUNTRY"),
            (["--location", "A=London,bogus=1"], "\"bogus=1\" is not an option"),
            (["--location", "A=1,2", "--collector.forecastt"], "unknown flag --collector.forecastt"),
            (
                ["--location", "A=1,2", "--no-collector.weather", "--no-collector.forecast"],
                "every collector is switched off"
            ),
            (["--location", "A=1,2", "--collector.air_pollution.interval=soon"], "is not a duration"),
            (["--location", "A=1,2", "--openweather.max-staleness=0x"], "is not a duration"),
            (["--location", "=1,2"], "empty name"),
            (["--location", "A=1,2", "--location", "A=3,4"], "location \"A\" is defined twice"),
            (["--location", "A=1,2,above=hot"], "above=hot is not a temperature"),
            (["--location", "A=1,2,wind=3"], "\"wind=3\" is not an option"),
            ([], "no location configured"),
            (["--location", "A=1,2", "--poll.interval=10"], "is not a duration"),
            (["--location", "A=1,2", "--poll.interval=1.5h"], "is not a duration"),
            (["--location", "A=1,2", "--poll.interval=0s"], "too short"),
            (["--location", "A=1,2", "--web.listen-address=9755"], "is not an address"),
            (["--location", "A=1,2", "--web.listen-address=:99999"], "no valid port"),
            (["--location", "A=1,2", "--web.telemetry-path=metrics"], "not a usable path"),
            (["--location", "A=1,2", "--log.level=verbose"], "not a log level"),
            (["--location", "A=1,2", "--log.format=xml"], "not a log format"),
            (["--location", "A=1,2", "--openweather.url=api.openweathermap.org"], "not a base URL"),
            (["--location", "A=1,2", "--openweather.max-requests-per-minute=0"], "not a whole number from 1"),
            (["--location", "A=1,2", "--openweather.api-key=abc"], "not taken as a flag"),
            (["--location", "A=1,2", "--config.file=/nonexistent/config.json"], "cannot read the config file"),
            (["--location", "A=1,2", "--openweather.api-key-file=/nonexistent/key"], "cannot read the API key file"),
        ] as [([String], String)])
    func everyMistakeSaysWhatIsWrong(arguments: [String], expected: String) {
        let message = loadError(arguments)
        #expect(message.contains(expected), "\(arguments) → \(message)")
    }

    @Test func missingKeySuggestsDemo() {
        let message = loadError(["--location", "A=1,2"], environment: [:])
        #expect(message.contains("no OpenWeather API key"))
        #expect(message.contains("--demo"))
    }

    @Test(arguments: [
        ("{\"poll\": {\"interval\": \"5m\",]}", "line 1, column 28: "),
        (
            "web:\n  listen_adress: \":1\"\n",
            "line 2, column 3: unknown key `web.listen_adress` (did you mean `web.listen_address`?)"
        ),
        (
            "{\n\"web\": {\"listenAdress\": \":1\"}}",
            "line 2, column 9: unknown key `web.listenAdress` (did you mean `web.listen_address`?)"
        ),
        ("- 1\n", "line 1, column 1: the top level must be a mapping"),
        (
            "locations:\n  - {name: A, latitude: 100, longitude: 0}\n",
            "line 2, column 25: `locations[0].latitude`: the latitude of \"A\" is 100, outside"
        ),
        ("{\"locations\": [{\"name\": \"A\", \"latitude\": 1}]}", "has latitude but not longitude: give both"),
        (
            "locations:\n- name: A\n  lattitude: 1\n  longitude: 2\n",
            "line 3, column 3: unknown key `locations[0].lattitude` (did you mean `latitude`?)"
        ),
        ("{\"locations\": [{\"name\": \"\", \"latitude\": 1, \"longitude\": 2}]}", "empty name"),
        ("openweather:\n  api_key: abc\n", "line 2, column 3: the API key itself does not belong in the file"),
        ("{\"openweather\": {\"apiKey\": \"abc\"}}", "does not belong in the file"),
        (
            "locations:\n- {name: A, latitude: 1, longitude: 2, alerts: {hot: 3}}\n",
            "line 2, column 49: unknown key `locations[0].alerts.hot`"
        ),
        ("poll: 5\n", "line 1, column 7: `poll` must be a mapping"),
        (
            "{\"locations\": [{\"name\": \"A\", \"query\": \"Paris\", \"latitude\": 1}]}",
            "gives latitude, query: give one of"
        ),
        ("{\"locations\": [{\"name\": \"A\"}]}", "says nowhere"),
        (
            "locations:\n- name: A\n  zip: \"\"\n",
            "line 3, column 8: `locations[0].zip` of \"A\" must be a non-empty value"
        ),
        (
            "collector:\n  air_polution: true\n",
            "line 2, column 3: unknown key `collector.air_polution` (did you mean `collector.air_pollution`?)"
        ),
        (
            "collector:\n  weather:\n    every: 5m\n",
            "line 3, column 5: unknown key `collector.weather.every`; `collector.weather` takes enabled, interval"
        ),
        ("shard: 2\n", "line 1, column 1: `shard` cannot be set in the file; use the flag --shard"),
        ("totalShards: 2\n", "`totalShards` cannot be set in the file; use the flag --total-shards"),
        ("colector: {}\n", "unknown key `colector` (did you mean `collector`?)"),
        (
            "wibble: 1\n",
            "unknown key `wibble`; the sections are alerts, collector, locations, log, openweather, poll, storage, web"
        ),
        // Type errors name the line and column of the value.
        (
            "web:\n  max_connections: many\n",
            "line 2, column 20: `web.max_connections` \"many\" is not a whole number from 1 to 1000000"
        ),
        (
            "web:\n  telemetry_path: [a, b]\n",
            "line 2, column 19: `web.telemetry_path` must be a single value, not a sequence"
        ),
        ("web:\n  listen_address:\n", "`web.listen_address` has no value"),
        (
            "collector:\n  weather: {interval: soon}\n",
            "line 2, column 23: `collector.weather.interval` \"soon\" is not a duration"
        ),
        ("collector:\n  weather: maybe\n", "line 2, column 12: `collector.weather` \"maybe\" is not true or false"),
        (
            "collector:\n  forecast:\n    horizons: [3h, {a: b}]\n",
            "line 3, column 20: an item of `collector.forecast.horizons` must be a single value"
        ),
        (
            "locations:\n- {name: A, latitude: north, longitude: 2}\n",
            "line 2, column 23: `locations[0].latitude`: the latitude of \"A\" is \"north\", not a number"
        ),
        (
            "locations:\n- {name: A, latitude: 1, longitude: 2, alerts: {temperature_above_celsius: hot}}\n",
            "`locations[0].alerts.temperature_above_celsius` is \"hot\""
        ),
        ("locations: {name: A}\n", "line 1, column 12: `locations` must be a list"),
        ("web: &w {}\n", "anchors (&name) are not supported"),
        (
            "web:\n  listen_address: \":1\"\n  listenAddress: \":2\"\n",
            """
            line 3, column 3: `listenAddress` and `listen_address` (line 2, column 3) set the same thing; keep one, \
            named listen_address
            """
        ),
        ("log:\n\tlevel: debug\n", "a tab in the indentation"),
    ])
    func configFileMistakes(text: String, expected: String) {
        let file = temporaryFile(text)
        defer { unlink(file) }
        let message = loadError(["--config.file", file])
        #expect(message.contains(expected), "\(text) → \(message)")
    }

    @Test func emptyKeyFile() {
        let file = temporaryFile("\n")
        defer { unlink(file) }
        #expect(
            loadError(["--location", "A=1,2", "--openweather.api-key-file", file], environment: [:]).contains(
                "is empty"))
    }
}

@Suite struct PrometheusDurationTests {
    @Test(arguments: [("30s", 30.0), ("10m", 600), ("1h30m", 5400), ("500ms", 0.5), ("1d", 86_400), ("2w", 1_209_600)])
    func parses(text: String, seconds: Double) {
        #expect(PrometheusDuration.parse(text)?.seconds == seconds)
    }

    @Test(arguments: ["", "10", "m", "1.5h", "30m1h", "1h1h", "-5s", "5 s"])
    func rejects(text: String) {
        #expect(PrometheusDuration.parse(text) == nil)
    }

    @Test func formats() {
        #expect(PrometheusDuration.format(.seconds(5400)) == "1h30m")
        #expect(PrometheusDuration.format(.seconds(15)) == "15s")
        #expect(PrometheusDuration.format(.milliseconds(1250)) == "1s250ms")
    }
}

extension ConfigurationTests {
    /// A former name is read as its flag, unless the flag itself is given: then it is said to do nothing.
    @Test func aFormerNameBesideItsNewNameIsNotUsed() throws {
        let config = try load(["--location", "A=1,2", "--poll.interval=15m", "--collector.weather.interval=20m"])
        #expect(config.interval(of: "weather") == .seconds(1200))
        #expect(
            config.warnings.contains {
                $0.contains("--poll.interval is not used: --collector.weather.interval sets the same thing")
            })
        let fromFile = temporaryFile(
            "poll:\n  interval: 15m\nlocations: [{name: A, latitude: 1, longitude: 2}]\n", suffix: ".yml")
        defer { unlink(fromFile) }
        let read = try load(["--config.file", fromFile])
        #expect(read.interval(of: "weather") == .seconds(900))
        #expect(
            read.warnings.contains {
                $0.contains("--poll.interval is the old name of --collector.weather.interval")
                    && $0.contains("given as")
            })
    }

    /// The air quality forecast reads at the weather forecast's horizons and windows (within its 96 h)
    /// unless given its own, so both carry the same `hours_ahead` and `window_hours`.
    @Test func theAirQualityForecastFollowsTheWeatherForecastsHorizonsUnlessGiven() throws {
        func options(_ arguments: [String]) throws -> AirPollutionForecastSource.Options? {
            (try load(["--location", "A=1,2"] + arguments).sources.first { $0.name == AirPollutionForecastSource.name }
                as? AirPollutionForecastSource)?.options
        }
        let hours = { (list: [Int64]) in list.map { Duration.seconds($0 * 3600) } }
        #expect(try options([])?.horizons == hours([3, 6, 12, 24, 48]))
        #expect(
            try options(["--collector.forecast.horizons=1h,2h,100h", "--collector.forecast.windows=12h,120h"])?.horizons
                == hours([1, 2]))
        #expect(try options(["--collector.forecast.windows=12h,120h"])?.windows == hours([12]))
        #expect(
            try options(["--collector.forecast.horizons=100h,120h"])?.horizons == hours([3, 6, 12, 24, 48]),
            "none within reach: its own")
        #expect(
            try options(["--collector.forecast.horizons=1h", "--collector.air_pollution_forecast.horizons=5h"])?
                .horizons == hours([5]))
    }

    /// Horizons and windows: flags and the config file, sorted without repeats; mistakes say how to write them.
    @Test func forecastHorizonsAndWindows() throws {
        let config = try load([
            "--location", "A=1,2", "--collector.forecast", "--collector.forecast.horizons=24h, 3h,90m,3h",
        ])
        #expect(config.forecastOptions?.horizons == [Duration.seconds(5400), .seconds(10_800), .seconds(86_400)])
        #expect(config.forecastOptions?.windows == ForecastSource.Options().windows)
        let forecast = try #require(config.activeSources.first { $0.name == "forecast" } as? ForecastSource)
        #expect(forecast.horizons == config.forecastOptions?.horizons, "the renderer gets the configured source")
        #expect(
            loadError(["--location", "A=1,2", "--collector.forecast.horizons=3h,200h"]).contains(
                "\"200h\" is not a duration from 1m to 5d"))
        #expect(
            loadError(["--location", "A=1,2", "--collector.forecast.windows=soon"]).contains(
                "write a list like 3h,6h,24h"))
        let file = temporaryFile(
            #"""
            {"collector": {"forecast": {"enabled": true, "windows": "12h,\#
            24h"}}, "locations": [{"name": "A", "latitude": 1, "longitude": 2}]}
            """#
        )
        defer { unlink(file) }
        #expect(
            try load(["--config.file", file]).forecastOptions?.windows == [Duration.seconds(43_200), .seconds(86_400)])
        #expect(Spans.hoursLabel(.seconds(5400)) == "1.5" && Spans.hoursLabel(.seconds(259_200)) == "72")
    }

    /// One Call brings the slots of what it stands in for, and stays off in the demo.
    @Test func oneCallBringsWeatherAndForecastAndIsOptInForTheDemo() throws {
        let config = try load(["--location", "A=1,2", "--collector.onecall", "--no-collector.weather"])
        #expect(config.activeSources.map(\.name) == ["forecast", "onecall", "weather"])
        #expect(config.requestPlan.entries.map(\.locations) == [0, 1, 0])
        #expect(try load(["--demo"]).activeSources.map(\.name).contains("onecall") == false)
    }
}
