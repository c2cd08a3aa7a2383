import Glibc
import TestSupport
import Testing

@testable import Exporter

@Suite struct ConfigurationTests {
    let key = ["OPENWEATHER_API_KEY": "0123456789abcdef"]

    func load(_ arguments: [String], environment: [String: String]? = nil) throws(ConfigError) -> Configuration {
        switch try ConfigurationLoader(arguments: arguments, environment: environment ?? key).load() {
        case .run(let configuration): return configuration
        default: throw ConfigError("not a run")
        }
    }

    func error(_ arguments: [String], environment: [String: String]? = nil) -> String {
        do {
            _ = try load(arguments, environment: environment)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func defaults() throws {
        let config = try load(["--location", "London=51.5074,-0.1278"])
        #expect(config.listenAddress == ListenAddress(host: "", port: 9755))
        #expect(config.telemetryPath == "/metrics")
        #expect(config.pollInterval == .seconds(600))
        #expect(config.maxRequestsPerMinute == 60)
        #expect(config.requestTimeout == .seconds(10))
        #expect(config.language == "en")
        #expect(config.openWeatherURL == "https://api.openweathermap.org")
        #expect(config.effectiveMaxStaleness == .seconds(1800))
        // The README's server limits table.
        #expect(config.maxConnections == 4096)
        #expect(config.readTimeout == .seconds(10))
        #expect(config.idleTimeout == .seconds(60))
        #expect(config.logLevel == .info)
        #expect(config.logFormat == .logfmt)
        #expect(config.locations == [Location(name: "London", latitude: 51.5074, longitude: -0.1278)])
        #expect(config.apiKey.value == "0123456789abcdef")
        #expect(config.warnings.isEmpty)
    }

    @Test func stalenessDefaultsToThreePollIntervals() throws {
        #expect(try load(["--location", "A=1,2", "--poll.interval=2m"]).effectiveMaxStaleness == .seconds(360))
        #expect(try load(["--location", "A=1,2", "--poll.interval=2m", "--openweather.max-staleness=1m"]).effectiveMaxStaleness == .seconds(60))
    }

    @Test func flagForms() throws {
        let config = try load([
            "--web.listen-address=127.0.0.1:9100", "--web.telemetry-path", "/weather",
            "--location=A=1,2", "--location", "B=-3.5,4.25,above=30,below=-5", "--location", "C=0,0,alerts=off",
            "--poll.interval=1h30m", "--openweather.timeout=2s", "--log.level=debug", "--log.format", "json",
            "--openweather.max-requests-per-minute=600", "--alerts.temperature-above-celsius=35",
        ])
        #expect(config.listenAddress == ListenAddress(host: "127.0.0.1", port: 9100))
        #expect(config.telemetryPath == "/weather")
        #expect(config.pollInterval == .seconds(5400))
        #expect(config.requestTimeout == .seconds(2))
        #expect(config.logLevel == .debug)
        #expect(config.logFormat == .json)
        #expect(config.locations.map(\.name) == ["A", "B", "C"])
        #expect(config.thresholds(for: config.locations[0]) == TemperatureThresholds(aboveCelsius: 35))
        #expect(config.thresholds(for: config.locations[1]) == TemperatureThresholds(aboveCelsius: 30, belowCelsius: -5))
        #expect(config.thresholds(for: config.locations[2]) == TemperatureThresholds())
    }

    @Test(arguments: [
        ("[::]:9755", "::", 9755), ("[::1]:80", "::1", 80), (":0", "", 0), ("localhost:9755", "localhost", 9755),
    ])
    func listenAddresses(text: String, host: String, port: Int) throws {
        let config = try load(["--web.listen-address", text, "--location", "A=1,2"])
        #expect(config.listenAddress == ListenAddress(host: host, port: UInt16(port)))
    }

    @Test func environmentAndFileAndFlagsInRisingOrder() throws {
        let file = temporaryFile("""
            {"web": {"listenAddress": ":9001", "telemetryPath": "/from-file"},
             "poll": {"interval": "20m"},
             "openweather": {"language": "de", "maxRequestsPerMinute": 120},
             "alerts": {"temperatureAboveCelsius": 35, "temperatureBelowCelsius": -10},
             "locations": [
               {"name": "Seville", "latitude": 37.39, "longitude": -5.99, "alerts": {"temperatureAboveCelsius": 40}},
               {"name": "Ocean", "latitude": -45, "longitude": -140, "alerts": false}
             ]}
            """)
        defer { unlink(file) }
        let environment = key.merging(["OPENWEATHER_EXPORTER_POLL_INTERVAL": "15m", "OPENWEATHER_EXPORTER_WEB_TELEMETRY_PATH": "/from-env"]) { $1 }
        let config = try load(["--config.file", file, "--web.telemetry-path=/from-flag"], environment: environment)
        #expect(config.listenAddress.port == 9001)
        #expect(config.telemetryPath == "/from-flag")
        #expect(config.pollInterval == .seconds(900))
        #expect(config.language == "de")
        #expect(config.maxRequestsPerMinute == 120)
        #expect(config.locations.map(\.name) == ["Seville", "Ocean"])
        #expect(config.thresholds(for: config.locations[0]) == TemperatureThresholds(aboveCelsius: 40, belowCelsius: -10))
        #expect(config.thresholds(for: config.locations[1]) == TemperatureThresholds())
        #expect(config.configFile == file)

        let overridden = try load(["--config.file", file, "--location", "Only=1,1"])
        #expect(overridden.locations.map(\.name) == ["Only"])
    }

    @Test func environmentLocations() throws {
        let config = try load([], environment: key.merging(["OPENWEATHER_EXPORTER_LOCATION": "A=1,2; B=3,4,above=20"]) { $1 })
        #expect(config.locations.map(\.name) == ["A", "B"])
    }

    @Test func keyFileTrimsTheNewlineAndWarnsWhenOthersCanRead() throws {
        let privateFile = temporaryFile("secretkey123\n")
        let publicFile = temporaryFile("secretkey123\n", mode: 0o644)
        defer { unlink(privateFile); unlink(publicFile) }
        let config = try load(["--openweather.api-key-file", privateFile, "--location", "A=1,2"], environment: [:])
        #expect(config.apiKey.value == "secretkey123")
        #expect(config.warnings.isEmpty)
        let exposed = try load(["--openweather.api-key-file", publicFile, "--location", "A=1,2"], environment: [:])
        #expect(exposed.warnings.contains { $0.contains("readable by every user") })
        #expect(!exposed.warnings.joined().contains("secretkey123"))
    }

    @Test func demoNeedsNoKeyNorLocation() throws {
        let config = try load(["--demo"], environment: [:])
        #expect(config.demo)
        #expect(config.locations.count >= 3 && config.locations.count <= 5)
        #expect(config.pollInterval == .seconds(15))
        #expect(config.warnings.isEmpty)
    }

    @Test func shortIntervalWarnsAndTooManyLocationsStretchIt() throws {
        let short = try load(["--location", "A=1,2", "--poll.interval=1m"])
        #expect(short.warnings.contains { $0.contains("shorter than 10m") })
        let many = (0..<1200).map { "--location=L\($0)=1,\($0 % 180)" }
        let stretched = try load(many + ["--openweather.max-requests-per-minute=60"])
        #expect(stretched.effectivePollInterval == .seconds(1220))
        #expect(stretched.warnings.contains { $0.contains("do not fit") })
    }

    @Test func helpAndVersion() throws {
        guard case .help(let text) = try ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            Issue.record("no help")
            return
        }
        for flag in Flag.all { #expect(text.contains("--\(flag.name)")) }
        guard case .version(let version) = try ConfigurationLoader(arguments: ["--version"], environment: [:]).load() else {
            Issue.record("no version")
            return
        }
        #expect(version.contains(BuildInfo.version))
    }

    @Test(arguments: [
        (["--location", "A=1,2", "--bogus"], "unknown flag --bogus"),
        (["--location", "A=1,2", "--poll.intervall=5m"], "did you mean --poll.interval?"),
        (["--location", "A=1,2", "stray"], "unexpected argument \"stray\""),
        (["--location", "A=1,2", "--poll.interval"], "--poll.interval needs a value"),
        (["--location", "A=91,0"], "latitude of \"A\" is 91, outside -90..90"),
        (["--location", "A=0,-181"], "longitude of \"A\" is -181, outside -180..180"),
        (["--location", "A=north,0"], "latitude of \"A\" is \"north\", not a number"),
        (["--location", "A=1"], "needs a latitude and a longitude"),
        (["--location", "London"], "has no coordinates"),
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
        let message = error(arguments)
        #expect(message.contains(expected), "\(arguments) → \(message)")
    }

    @Test func missingKeySuggestsDemo() {
        let message = error(["--location", "A=1,2"], environment: [:])
        #expect(message.contains("no OpenWeather API key"))
        #expect(message.contains("--demo"))
    }

    @Test(arguments: [
        ("{\"poll\": {\"interval\": \"5m\",}}", "not valid JSON: line 1, column 28: expected a key"),
        ("{\n\"web\": {\"listenAdress\": \":1\"}}", "unknown key `web.listenAdress` (did you mean `web.listenAddress`?)"),
        ("[1]", "top level must be an object"),
        ("{\"locations\": [{\"name\": \"A\", \"latitude\": 100, \"longitude\": 0}]}", "latitude of \"A\" is 100.0, outside"),
        ("{\"locations\": [{\"name\": \"A\", \"latitude\": 1}]}", "`locations[0].longitude` is missing"),
        ("{\"locations\": [{\"name\": \"A\", \"lat\": 1, \"longitude\": 2}]}", "unknown key `locations[0].lat`"),
        ("{\"locations\": [{\"name\": \"\", \"latitude\": 1, \"longitude\": 2}]}", "empty name"),
        ("{\"openweather\": {\"apiKey\": \"abc\"}}", "does not belong in the file"),
        ("{\"locations\": [{\"name\": \"A\", \"latitude\": 1, \"longitude\": 2, \"alerts\": {\"hot\": 3}}]}", "unknown key `locations[0].alerts.hot`"),
        ("{\"poll\": 5}", "`poll` must be an object"),
    ])
    func configFileMistakes(text: String, expected: String) {
        let file = temporaryFile(text)
        defer { unlink(file) }
        let message = error(["--config.file", file])
        #expect(message.contains(expected), "\(text) → \(message)")
    }

    @Test func emptyKeyFile() {
        let file = temporaryFile("\n")
        defer { unlink(file) }
        #expect(error(["--location", "A=1,2", "--openweather.api-key-file", file], environment: [:]).contains("is empty"))
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
