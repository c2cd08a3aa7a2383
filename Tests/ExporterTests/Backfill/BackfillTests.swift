import Glibc
import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The backfill's clock: the test's manual time, which a wait moves on instead of sleeping.
struct ManualBackfillTime: BackfillTime {
    let time: ManualTime
    func now() -> Double { time.wall() }
    func sleep(until moment: Double) {
        let wait = moment - time.wall()
        if wait > 0 { time.advance(wait) }
    }
}

@Suite struct BackfillTests {
    /// 2025-12-01T12:00:00Z, the fixtures' now.
    static let until = 1_764_590_400.0

    /// A timemachine answer at the requested moment (the London fixture with its `dt` replaced),
    /// the Barcelona history for air pollution, London for the geocoder.
    static let answers: FakeTransport.Answer = { request in
        switch request.path {
        case "/data/3.0/onecall/timemachine":
            let moment = request.query.first { $0.name == "dt" }!.value
            let text = String(decoding: Fixture.bytes("onecall-timemachine-london-rain.json"), as: UTF8.self)
            return .success(Array(text.replacing("\"dt\":1764493200", with: "\"dt\":\(moment)").utf8))
        case "/data/2.5/air_pollution/history": return .success(Fixture.bytes("air-pollution-history-barcelona.json"))
        default: return FakeTransport.fixtures(request)
        }
    }

    static let locations = [
        Location(name: "Zocca", latitude: 44.34, longitude: 10.99),
        Location(name: "Barcelona", latitude: 41.3888, longitude: 2.159),
        Location(name: "South \"Pacific\"\nOcean\\", latitude: -45, longitude: -140),
        Location(name: "Home", place: .query(.name("London"))),
    ]

    struct Run {
        let time = ManualTime(monotonic: 0, epoch: BackfillTests.until + 60)
        let transport: FakeTransport
        let output: String
        let lines = Locked<[String]>([])

        init(output: String, answer: @escaping FakeTransport.Answer = BackfillTests.answers) {
            transport = FakeTransport(time: time, answer: answer)
            self.output = output
        }

        func backfill(
            _ locations: [Location] = BackfillTests.locations, perMinute: Int = 60, weather: Bool = true,
            air: Bool = true,
            oneCallPerDay: Int? = nil, keyPerDay: Int? = nil
        ) -> Backfill {
            Backfill(
                locations: locations, weather: weather ? WeatherSource() : nil,
                airPollution: air ? AirPollutionSource() : nil,
                language: "en", perMinute: perMinute, oneCallPerDay: oneCallPerDay, keyPerDay: keyPerDay,
                output: output, transport: transport,
                time: ManualBackfillTime(time: time),
                report: { line in lines.withLock { $0.append(line) } })
        }
    }

    static func temporaryDirectory() -> String {
        var template = Array("/tmp/backfill-test-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    static func text(_ path: String) throws -> String { String(decoding: try readFile(path), as: UTF8.self) }

    // MARK: the file

    @Test func theFileHasEachFamilyOnceItsSeriesTogetherInRisingTimeAndEndsWithEOF() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        let run = Run(output: output)
        try run.backfill().run(since: .seconds(6 * 3600), until: Self.until)
        let text = try Self.text(output)
        #expect(text.hasSuffix("\n# EOF\n"))
        #expect(text.ranges(of: "# EOF").count == 1)
        var families: [String] = []
        var seriesSeen: Set<String> = []
        var lastSeries = ""
        var lastTime: [String: Int] = [:]
        for line in text.split(separator: "\n") where line != "# EOF" {
            if line.hasPrefix("# TYPE ") {
                let name = String(line.split(separator: " ")[2])
                #expect(!families.contains(name), "\(name) appears twice")
                families.append(name)
                continue
            }
            if line.hasPrefix("#") { continue }
            let space = line.lastIndex(of: " ")!
            let series = String(line[..<space])
            let time = Int(line[line.index(after: space)...])!
            #expect(series.hasPrefix(families.last!), "\(series) is outside its family \(families.last!)")
            if series != lastSeries {
                #expect(!seriesSeen.contains(series), "\(series) is split")
                seriesSeen.insert(series)
                lastSeries = series
            }
            #expect(time > lastTime[series] ?? 0, "\(series) goes back in time")
            lastTime[series] = time
        }
        #expect(families == families.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        // Six hours of weather for each location, 6 of the 24 air pollution hours in range.
        #expect(
            text.contains("openweather_temperature_celsius{job=\"openweather\",location=\"Zocca\"} 8.62 1764568800\n"))
        #expect(
            text.contains("openweather_temperature_celsius{job=\"openweather\",location=\"Zocca\"} 8.62 1764586800\n"))
        #expect(!text.contains("1764590400\n"), "until is not in the range")
        #expect(text.contains("openweather_air_quality_index{job=\"openweather\",location=\"Barcelona\"} "))
        #expect(text.contains("# UNIT openweather_temperature_celsius celsius\n"))
        #expect(!text.contains("openweather_location_info"))
        #expect(text.ranges(of: "openweather_temperature_celsius{job=\"openweather\",location=\"Zocca\"}").count == 6)
    }

    @Test func labelsAreEscapedAsInTheLiveExposition() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        try Run(output: output).backfill(air: false).run(since: .seconds(3600), until: Self.until)
        let text = try Self.text(output)
        #expect(
            text.contains(
                #"""
                openweather_temperature_celsius{job="openweather",location="South \"Pacific\"\nOcean\\"} 8.62 1764586800
                """#
            ))
        #expect(
            text.contains(
                #"""
                openweather_condition_info{job="openweather",location="Zocca",main="Rain",description="moderate rain",\#
                icon="10d"} 1 1764586800
                """#
            ))
    }

    @Test func everySampleGetsTheJobLabelOrTheOnesGiven() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        var backfill = Run(output: output).backfill(air: false)
        backfill.labels = try BackfillOptions.parseLabels(["job=weather", "instance=home:9755"])
        try backfill.run(since: .seconds(3600), until: Self.until)
        let text = try Self.text(output)
        #expect(
            text.contains(
                #"openweather_temperature_celsius{job="weather",instance="home:9755",location="Zocca"} 8.62 1764586800"#
            ))
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!samples.isEmpty)
        #expect(
            samples.allSatisfy { $0.contains(#"{job="weather",instance="home:9755","#) }, "every sample has both labels"
        )

        // A name the exporter writes itself is refused, naming it; the work is kept for a run with another.
        var clash = Run(output: output).backfill(air: false)
        clash.labels = try BackfillOptions.parseLabels(["location=x"])
        #expect(throws: BackfillError.self) { try clash.run(since: .seconds(3600), until: Self.until) }
        do {
            try clash.run(since: .seconds(3600), until: Self.until)
        } catch {
            #expect(error.description.contains("has a label location of its own"))
        }
    }

    @Test func labelFlagsAreCheckedWithClearErrors() throws {
        #expect(try BackfillOptions.parseLabels([]) == [.init(name: "job", value: "openweather")])
        #expect(try BackfillOptions.parseLabels(["job="]) == [], "an empty value takes the label away")
        #expect(
            try BackfillOptions.parseLabels(["instance=a=b"]) == [
                .init(name: "job", value: "openweather"), .init(name: "instance", value: "a=b"),
            ])
        for (given, says) in [
            ("instance", "has no value"), ("1st=x", "is not a label name"), ("in-stance=x", "is not a label name"),
            ("=x", "is not a label name"),
            ("__name__=x", "Prometheus' own"),
        ] {
            do {
                _ = try BackfillOptions.parseLabels([given])
                Issue.record("--label \(given) was taken")
            } catch {
                #expect(error.description.contains(says), "\(error.description)")
            }
        }
        #expect(throws: ConfigError("--label job is given twice: give it once")) {
            try BackfillOptions.parseLabels(["job=a", "job=b"])
        }
        let key = ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"]
        let command = try ConfigurationLoader(
            arguments: [
                "backfill", "--since=1h", "--output=x.om", "--label", "instance=home", "--label=site=roof",
                "--location", "A=1,2",
            ],
            environment: key
        ).load()
        guard case .backfill(_, let options) = command else {
            Issue.record("not a backfill")
            return
        }
        #expect(options.labels.map { "\($0.name)=\($0.value)" } == ["job=openweather", "instance=home", "site=roof"])
    }

    @Test func theLinesAreTheLiveRenderersWithATimestamp() throws {
        let reading = try TimemachineDecoder.decode(Fixture.bytes("onecall-timemachine-london-rain.json"))
        var block = HistoryBlock()
        let location = Location(name: "London", latitude: 51.5, longitude: -0.12)
        block.add(WeatherSource(), readings: [(1000, reading), (4600, reading)], location: location, resolved: nil)
        let lines = String(decoding: block.families["openweather_humidity_ratio"]!, as: UTF8.self)
        #expect(
            lines
                == """
                openweather_humidity_ratio{location="London"} 0.93 1000\n\
                openweather_humidity_ratio{location="London"} 0.93 4600\n
                """
        )
        #expect(HistoryBlock.decode(block.encoded) == block)
        #expect(HistoryBlock.decode(Array(block.encoded.dropLast())) == nil, "a block cut short is not taken")
    }

    // MARK: resuming

    @Test func anInterruptedBackfillAsksOnlyForTheLocationsNotWritten() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        // The network goes away after 5 requests: Barcelona (label order first: 3 weather + 1 air) is done.
        let first = Run(output: output)
        let served = Locked(0)
        first.transport.answer { request in
            let count = served.withLock {
                $0 += 1
                return $0
            }
            return count <= 5
                ? BackfillTests.answers(request) : .failure(.http(status: 503, message: "down", retryAfterSeconds: nil))
        }
        #expect(throws: BackfillError.self) { try first.backfill().run(since: .seconds(3 * 3600), until: Self.until) }
        #expect(access(output, F_OK) != 0, "no output before every location is done")
        #expect(first.lines.withLock { $0 }.contains { $0.hasPrefix("1/4 locations done") })

        // The rerun, an hour later: the first run's range, and nothing asked twice.
        let second = Run(output: output)
        second.time.advance(3600)
        try second.backfill().run(since: .seconds(3 * 3600), until: nil)
        let asked = second.transport.log.map { $0.request.query.first { $0.name == "lat" }?.value ?? "geocoding" }
        #expect(!asked.contains("41.3888"), "Barcelona was asked again")
        #expect(second.transport.log.count == 3 * (3 + 1) + 1)
        let text = try Self.text(output)
        #expect(
            text.contains("openweather_temperature_celsius{job=\"openweather\",location=\"Barcelona\"} 8.62 1764586800")
        )
        #expect(
            text.contains("openweather_temperature_celsius{job=\"openweather\",location=\"Zocca\"} 8.62 1764586800"))
        #expect(!text.contains("1764590400\n"), "the rerun kept the first run's range")
        #expect(access(output + ".partial", F_OK) != 0, "the work is removed once the file is written")
    }

    /// The day's allowances: a location that would go past one is left for the next day's run, which
    /// asks only for the rest; a range one location alone cannot fit into says how to split it.
    @Test func aDaysAllowanceIsNeverPassedAndTheNextDayGoesOn() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        // 3 hours: each location costs 3 One Call calls and 1 air pollution call (London 1 more to geocode).
        let first = Run(output: output)
        #expect(throws: BackfillError.self) {
            try first.backfill(oneCallPerDay: 7).run(since: .seconds(3 * 3600), until: Self.until)
        }
        let timemachine = { (run: Run) in run.transport.log.count { $0.request.path == "/data/3.0/onecall/timemachine" }
        }
        #expect(timemachine(first) == 6, "two locations' weather, then stop before the third would pass 7")
        #expect(first.lines.withLock { $0 }.contains { $0.contains("2/4 locations done") })

        let second = Run(output: output)
        second.time.advance(86_400)
        #expect(throws: BackfillError.self) {
            try second.backfill(keyPerDay: 5).run(since: .seconds(3 * 3600), until: nil)
        }
        #expect(second.transport.log.count == 4, "one location (3 weather + 1 air), not a fifth request")

        let third = Run(output: output)
        third.time.advance(2 * 86_400)
        try third.backfill(oneCallPerDay: 7).run(since: .seconds(3 * 3600), until: nil)
        #expect(timemachine(third) == 3)
        #expect(
            try Self.text(output).contains(
                "openweather_temperature_celsius{job=\"openweather\",location=\"Zocca\"} 8.62 1764586800"))

        let tooLong = Run(output: Self.temporaryDirectory() + "/long.om")
        #expect {
            try tooLong.backfill(oneCallPerDay: 2).run(since: .seconds(3 * 3600), until: Self.until)
        } throws: { error in
            (error as? BackfillError)?.description.contains(
                "one location's range alone needs 3: backfill shorter ranges") == true
        }
    }

    /// A command that cannot run as given, whatever the API answers, exits 2 as the exporter's
    /// mistakes do (`--since=31000y` exited 1); a failure that a later run may get past exits 1.
    @Test func configurationMistakesAreStatusTwoAndFailuresOne() throws {
        func status(_ run: Run, _ backfill: Backfill? = nil, since: Int64 = 3600) -> Int32? {
            do {
                try (backfill ?? run.backfill()).run(since: .seconds(since), until: Self.until)
                return 0
            } catch {
                return error.status
            }
        }
        let directory = Self.temporaryDirectory()
        #expect(status(Run(output: directory + "/far.om"), since: 31_000 * 365 * 86_400) == 2)
        let tooLong = Run(output: directory + "/long.om")
        #expect(status(tooLong, tooLong.backfill(oneCallPerDay: 2), since: 3 * 3600) == 2)
        #expect(mkfifo(directory + "/fifo.om", 0o600) == 0)
        #expect(status(Run(output: directory + "/fifo.om")) == 2)
        #expect(status(Run(output: directory + "/missing/history.om")) == 2)
        var clash = Run(output: directory + "/clash.om").backfill(air: false)
        clash.labels = try BackfillOptions.parseLabels(["location=x"])
        #expect(status(Run(output: directory + "/clash.om"), clash) == 2)
        // The kept work was made with the weather alone: this run asks for air pollution too.
        #expect(status(Run(output: directory + "/clash.om")) == 2)

        // The day's allowance used up: the next day's run goes on.
        let day = Run(output: directory + "/day.om")
        #expect(status(day, day.backfill(oneCallPerDay: 7), since: 3 * 3600) == 1)
        let down = Run(output: directory + "/down.om") { _ in
            .failure(.http(status: 400, message: "bad", retryAfterSeconds: nil))
        }
        #expect(status(down) == 1)
        #expect(mkdir(directory + "/corrupt.om.partial", 0o700) == 0)
        let range = "from=nan until=1764590400 weather=true air_pollution=true"
        try writeFile(directory + "/corrupt.om.partial/range", range)
        #expect(status(Run(output: directory + "/corrupt.om")) == 1)
    }

    @Test func aPlaceTheGeocoderDoesNotKnowIsSkippedAndTheRestWritten() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        let run = Run(output: output)
        try run.backfill(Self.locations + [Location(name: "Atlantis", place: .query(.name("Atlantis")))]).run(
            since: .seconds(3600), until: Self.until)
        #expect(run.lines.withLock { $0 }.contains { $0.hasPrefix("Atlantis skipped: no place matches \"Atlantis\"") })
        #expect(run.lines.withLock { $0 }.last?.hasPrefix("wrote \(output): 4 of 5 locations") == true)
        #expect(try Self.text(output).contains("location=\"Zocca\""))
    }

    @Test func theWorkOfLocationsNoLongerConfiguredIsRemovedWithTheRest() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        let first = Run(output: output)
        let served = Locked(0)
        // Barcelona (one hour of weather, its air pollution) is kept, then the API fails.
        first.transport.answer { request in
            served.withLock {
                $0 += 1
                return $0
            } <= 2 ? BackfillTests.answers(request) : .failure(.http(status: 500, message: "", retryAfterSeconds: nil))
        }
        #expect(throws: BackfillError.self) { try first.backfill().run(since: .seconds(3600), until: Self.until) }
        #expect(first.lines.withLock { $0 }.contains { $0.hasPrefix("1/4 locations done") })
        let second = Run(output: output)
        try second.backfill([Self.locations[0]]).run(since: .seconds(3600), until: Self.until)
        #expect(access(output + ".partial", F_OK) != 0)
    }

    @Test func aKeyWithoutOneCallSkipsTheWeatherInOneLineAndKeepsTheAirPollution() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        let noOneCall: FakeTransport.Answer = { request in
            request.path == "/data/3.0/onecall/timemachine"
                ? .failure(
                    .http(
                        status: 401,
                        message: String(
                            decoding: Fixture.bytes("error-401-onecall-no-subscription.json"), as: UTF8.self),
                        retryAfterSeconds: nil))
                : BackfillTests.answers(request)
        }
        let run = Run(output: output, answer: noOneCall)
        try run.backfill().run(since: .seconds(3 * 3600), until: Self.until)
        #expect(run.lines.withLock { $0 }.filter { $0.contains("subscription") }.count == 1)
        #expect(run.transport.requests(to: "/data/3.0/onecall/timemachine").count == 1)
        let text = try Self.text(output)
        #expect(!text.contains("openweather_temperature_celsius"))
        #expect(text.contains("openweather_air_quality_index{job=\"openweather\",location=\"Zocca\"}"))
        // Without air pollution there is nothing left to do: an error that says what would help.
        let alone = Run(output: output + "2", answer: noOneCall)
        #expect(throws: BackfillError.self) {
            try alone.backfill(air: false).run(since: .seconds(3600), until: Self.until)
        }
        #expect(access(output + "2", F_OK) != 0)
    }

    // MARK: the budget

    @Test func requestsArePacedWithinTheMinuteBudgetOnTheClock() throws {
        let output = Self.temporaryDirectory() + "/history.om"
        let run = Run(output: output)
        try run.backfill(perMinute: 10).run(since: .seconds(12 * 3600), until: Self.until)
        // 4 locations × (12 hours + air pollution) + 1 geocoding.
        #expect(run.transport.log.count == 53)
        #expect(run.transport.mostInAnyMinute == 10)
        // Evenly, at the exporter's pace (61 s / 10 apart: a second of slack a minute), so the whole run
        // takes 52 × 6.1 s of the test's clock.
        #expect(abs(run.transport.log.last!.time - run.transport.log.first!.time - 52 * 6.1) < 1e-3)
        #expect(run.lines.withLock { $0 }.contains { $0.hasPrefix("4/4 locations done, 0 calls left") })
    }

    // MARK: the command line

    @Test func theCommandLineTakesTheRangeAndTheFile() throws {
        let key = ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"]
        let command = try ConfigurationLoader(
            arguments: [
                "backfill", "--since=24h", "--until", "2025-12-01T12:00:00Z", "--output=x.om", "--location", "A=1,2",
            ], environment: key
        ).load()
        guard case .backfill(let configuration, let options) = command else {
            Issue.record("not a backfill")
            return
        }
        #expect(options == BackfillOptions(since: .seconds(86_400), until: Self.until, output: "x.om"))
        #expect(configuration.locations.map(\.name) == ["A"])
        #expect(BackfillOptions.parseTime("2025-12-01T13:30:00+01:30") == Self.until)
        #expect(BackfillOptions.parseTime("1764590400") == Self.until)
        #expect(BackfillOptions.parseTime("2025-12-01 12:00") == nil)
        // A day the month does not have is a mistake, not the first days of the next month.
        #expect(BackfillOptions.parseTime("2025-02-29T12:00:00Z") == nil)
        #expect(BackfillOptions.parseTime("2024-02-29T12:00:00Z") == 1_709_208_000)
        #expect(throws: ConfigError.self) {
            try ConfigurationLoader(arguments: ["backfill", "--output=x.om", "--demo"], environment: [:]).load()
        }
        #expect(throws: ConfigError.self) {
            try ConfigurationLoader(arguments: ["--since=24h", "--demo"], environment: [:]).load()
        }
        guard
            case .help(let help) = try ConfigurationLoader(arguments: ["backfill", "--help"], environment: [:]).load()
        else {
            Issue.record("no help")
            return
        }
        #expect(help.contains("--since=DURATION"))
        guard case .help(let main) = try ConfigurationLoader(arguments: ["--help"], environment: [:]).load() else {
            return
        }
        #expect(main.contains("openweather-exporter backfill --help"))
    }
}
