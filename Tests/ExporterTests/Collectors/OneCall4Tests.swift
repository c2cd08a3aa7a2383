import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// One Call 4.0 (issue 24): each part asked only when a family reads it and only when it is due,
/// every call counted under the budgets, and the same exposition as 3.0 from the same data.
@Suite struct OneCall4Tests {
    static let tulsa = Location(name: "Tulsa", latitude: 36.154, longitude: -95.9928)
    /// 06:00 CST on 1 December 2025, the fixtures' hour: the Wind Advisory is in force, the Red Flag
    /// Warning starts at 11:00.
    static let now = 1_764_590_400.0
    static let windAdvisory = "4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31"

    func oneCall4(_ configuration: Configuration) throws -> OneCall4Source {
        try #require(configuration.sources.first { $0.name == "onecall4" } as? OneCall4Source)
    }

    /// The startup plan: one poll every 10 minutes asks current and 1min each time, the three pages
    /// of 48 hours every hour and the days every 6 hours: 364 calls a day for one place, each part's
    /// share said; three places need 1,092 and stretch to the free 1,000.
    @Test func thePlanCountsEachPartsCallsADay() throws {
        let config = try load(["--location=Tulsa=36.154,-95.9928", "--collector.onecall4"])
        let entry = try #require(config.requestPlan.entries.first { $0.name == "onecall4" })
        #expect(entry.parts.map(\.name) == ["current", "1min", "1h", "1day"])
        #expect(entry.parts.map(\.perPoll) == [1, 1, 0.5, 1.0 / 36])
        #expect(
            entry.text
                == "0.25/min (1 poll per location every 10m, per location current 144/day, 1min 144/day, 1h 72/day, 1day 4/day; 364/day needed, 1000/day allowed)"
        )
        #expect(config.requestPlan.entries.filter { $0.readFrom == "onecall4" }.map(\.name) == ["forecast", "weather"])
        #expect(config.requestPlan.stretchedForDay.isEmpty)

        let three = try load(["--location=A=1,1", "--location=B=2,2", "--location=C=3,3", "--collector.onecall4"])
        let stretched = try #require(three.requestPlan.entries.first { $0.name == "onecall4" })
        #expect(three.requestPlan.stretchedForDay == ["onecall4"])
        #expect(stretched.requestsPerDay <= 1000 && stretched.requestsPerDay > 999.9)
        #expect(stretched.text.hasSuffix("; 1092/day needed, 1000/day allowed)"), "\(stretched.text)")

        // A horizon under the hour asks the 15min timeline (one page reaches 12 hours); parts left out cost nothing.
        let quarter = try load([
            "--location=A=1,1", "--collector.onecall4", "--collector.forecast.horizons=15m,45m,3h,24h",
        ])
        #expect(try oneCall4(quarter).options.pages == [.current: 1, .minute: 1, .quarterHour: 1, .hour: 3, .day: 1])
        let lean = try load([
            "--location=A=1,1", "--collector.onecall4", "--collector.onecall4.exclude=1min,1day,alerts",
            "--collector.forecast.windows=24h",
        ])
        let leanEntry = try #require(lean.requestPlan.entries.first { $0.name == "onecall4" })
        #expect(leanEntry.parts.map(\.name) == ["current", "1h"])
        #expect(try oneCall4(lean).options.pages[.hour] == 3, "the 48-hour horizon")
        let slow = try load([
            "--location=A=1,1", "--collector.onecall4", "--collector.onecall4.hourly-interval=3h",
            "--collector.onecall4.daily-interval=1d",
        ])
        #expect(
            try #require(slow.requestPlan.entries.first { $0.name == "onecall4" }).parts.map(\.perPoll) == [
                1, 1, 3.0 / 18, 1.0 / 144,
            ])
    }

    @Test func mistakesSayWhatIsWrong() {
        func error(_ arguments: [String]) -> String { loadError(["--location=A=1,1"] + arguments) }
        #expect(
            error(["--collector.onecall", "--collector.onecall4"]).contains(
                "--collector.onecall and --collector.onecall4 both stand in for forecast and weather: switch one off"))
        #expect(
            error(["--collector.onecall4", "--collector.onecall4.exclude=1h"]).contains("\"1h\" cannot be left out"))
        #expect(
            error(["--collector.onecall4", "--collector.onecall4.exclude=1h"]).contains("use 1min, 1day or alerts"))
        #expect(
            error(["--collector.onecall4", "--collector.onecall4.exclude=15min"]).contains(
                "is asked only when a forecast horizon is not whole hours"))
        #expect(
            error(["--collector.onecall4", "--collector.onecall4.hourly-interval=soon"]).contains(
                "--collector.onecall4.hourly-interval"))
    }

    /// Six hours on the manual clock, one place polled every 10 minutes: current and 1min at every poll
    /// (37), 1h's three pages hourly (7 × 3, pages placed with `start` from the first page's first
    /// record, never from its links), 1day at the start and after 6 hours, the Wind Advisory's text once,
    /// the Red Flag Warning's (whose detail call fails) again only with each new 1h page. Every call is
    /// in the day's count.
    @Test func eachPartIsAskedAtItsOwnPace() throws {
        let time = ManualTime(monotonic: 1000, epoch: Self.now - 1000)
        let rig = Rig(configuration([Self.tulsa], collectors: ["onecall4": .seconds(600)]), time: time)
        rig.run(until: 1000 + 6 * 3600)
        let counts = Dictionary(rig.transport.log.map { ($0.request.path, 1) }, uniquingKeysWith: +)
        #expect(counts["/data/4.0/onecall/current"] == 37)
        #expect(counts["/data/4.0/onecall/timeline/1min"] == 37)
        #expect(counts["/data/4.0/onecall/timeline/1h"] == 21)
        #expect(counts["/data/4.0/onecall/timeline/1day"] == 2)
        #expect(counts["/data/4.0/onecall/timeline/15min"] == nil, "no horizon under the hour")
        #expect(counts["/data/4.0/onecall/alert/\(Self.windAdvisory)"] == 1)
        #expect(counts["/data/4.0/onecall/alert/A7F03D6C-18E2-4B95-9C4D-6E2F1A8B3C07"] == 7)
        #expect(
            Set(counts.keys).allSatisfy { $0.hasPrefix("/data/4.0/onecall/") },
            "no request of weather or forecast: \(counts.keys)")
        let starts = rig.transport.requests(to: "/data/4.0/onecall/timeline/1h").prefix(3).map {
            $0.request.query.first { $0.name == "start" }?.value
        }
        #expect(starts == [nil, "1764662400", "1764734400"], "first dt + 20 h and + 40 h")
        #expect(
            !rig.transport.log.contains { request in request.request.query.contains { $0.value.contains("deadbeef") } },
            "a link's key was followed")
        #expect(rig.store.snapshot().daily?.count(named: "onecall4") == rig.transport.log.count)

        #expect(rig.state("Tulsa", "weather")?.up == true)
        #expect((rig.state("Tulsa", "weather")?.reading as? CurrentWeather)?.temperatureCelsius == 8.2)
        #expect(rig.state("Tulsa", "forecast")?.up == true)
        let reading = try #require(rig.state("Tulsa", "onecall4")?.reading as? OneCall4.Reading)
        #expect(reading.oneCall.alerts.map(\.event) == ["Wind Advisory"])
        #expect(reading.details.keys.sorted() == [Self.windAdvisory])
    }

    /// A poll of several calls starts only while the day has room for all it may ask (every page and
    /// 16 alerts' text): over two virtual UTC days at 100 a day, never more than 100 in a day; when the
    /// room is too small the weather and the forecast poll their own endpoints until 00:00 UTC.
    @Test func aDaysLimitHoldsForPollsOfSeveralCalls() throws {
        let midnight = 1_764_547_200.0
        let time = ManualTime(monotonic: 1000, epoch: midnight - 1000)
        let config = try load([
            "--location=Tulsa=36.154,-95.9928", "--collector.onecall4", "--collector.onecall4.max-requests-per-day=100",
        ])
        #expect(try oneCall4(config).maxRequestsPerPoll == 1 + 1 + 3 + 1 + 16)
        let rig = Rig(config, time: time)
        rig.run(until: 1000 + 2 * 86_400 - 1)
        let fourPerDay = Dictionary(
            rig.transport.log.filter { $0.request.path.hasPrefix("/data/4.0/") }.map {
                (Int(($0.time - 1000) / 86_400), 1)
            }, uniquingKeysWith: +)
        #expect(fourPerDay[0].map { $0 <= 100 && $0 > 70 } == true, "\(fourPerDay)")
        #expect(fourPerDay[1].map { $0 <= 100 && $0 > 70 } == true, "\(fourPerDay)")
        let free = rig.transport.log.filter { $0.request.path == "/data/2.5/weather" }.map {
            Int(($0.time - 1000) / 86_400)
        }
        #expect(Set(free) == [0, 1], "the free endpoints stood in at the end of each day")
        #expect(rig.logs.all.contains { $0.contains("onecall4 may send no more requests today") })
    }

    /// A hostile or broken upstream: a part that is garbage fails the poll (a decode error, the parts
    /// kept before stay, the next good poll recovers); a current record listing 2,000 alert IDs, some
    /// of them paths, costs at most 16 calls a poll, and only IDs that are harmless in a path are asked.
    @Test func aBrokenOrHostilePartCostsLittleAndBreaksNothing() throws {
        let time = ManualTime(monotonic: 1000, epoch: Self.now - 1000)
        let rig = Rig(configuration([Self.tulsa], collectors: ["onecall4": .seconds(600)]), time: time)
        rig.run(until: 1000 + 1)
        #expect(rig.state("Tulsa", "onecall4")?.up == true)
        let broken = Locked<String?>("/data/4.0/onecall/timeline/1min")
        rig.transport.answer { request in
            request.path == broken.withLock({ $0 })
                ? .success(Array("{\"data\": [{\"dt\": \"soon\"}".utf8)) : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 900)
        #expect(rig.transport.requests(to: "/data/4.0/onecall/timeline/1min").count == 2)
        #expect(rig.state("Tulsa", "onecall4")?.up == false)
        #expect(
            rig.state("Tulsa", "onecall4")?.lastError?.contains("1min") == true,
            "\(rig.state("Tulsa", "onecall4")?.lastError ?? "")")
        #expect(rig.state("Tulsa", "weather")?.reading != nil, "the last good reading is still there")
        broken.withLock { $0 = nil }
        rig.run(until: 1000 + 2400)
        #expect(rig.state("Tulsa", "onecall4")?.up == true)

        let ids =
            ["../../../data/2.5/weather", "a b", "x?appid=1", String(repeating: "A", count: 65)]
            + (0..<2_000).map { "ID-\($0)" }
        let flood = String(decoding: Fixture.bytes("onecall4-current-tulsa.json"), as: UTF8.self).replacing(
            "\"alerts\":[\"4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31\"]",
            with: "\"alerts\":[" + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]")
        rig.transport.answer { request in
            request.path == "/data/4.0/onecall/current" ? .success(Array(flood.utf8)) : FakeTransport.fixtures(request)
        }
        let before = rig.transport.log.count
        rig.run(until: 1000 + 3000)
        let asked = rig.transport.log.dropFirst(before).map(\.request.path).filter {
            $0.hasPrefix("/data/4.0/onecall/alert/")
        }
        #expect(asked.count <= OneCallSource.maxAlerts, "\(asked.count) alert calls in one poll")
        #expect(
            asked.allSatisfy {
                $0.dropFirst("/data/4.0/onecall/alert/".count).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
            }, "\(asked)")
        #expect(rig.state("Tulsa", "onecall4")?.up == true)
    }

    /// What a poll asks, given the last reading (from the store, or restored from the state file: the
    /// document `fetch` kept): parts not due are put off, and a stretched interval stretches their pace.
    @Test func aKeptReadingPutsOffThePartsNotDue() throws {
        let source = OneCall4Source()
        let asked = Locked<[String]>([])
        func get(_ request: APIRequest) throws(OpenWeatherError) -> [UInt8] {
            asked.withLock { $0.append(request.path) }
            return try FakeTransport.fixtures(request).get()
        }
        func poll(
            after seconds: Double, previous: OneCall4.Reading?, interval: Double = 600, configured: Double = 600
        ) throws -> (Fetched<OneCall4.Reading>, [String]) {
            asked.withLock { $0 = [] }
            let fetched = try source.fetch(
                Poll(
                    facts: PollFacts(
                        location: Self.tulsa, coordinates: Coordinates(latitude: 36.154, longitude: -95.9928),
                        language: "en", now: Self.now + seconds),
                    previous: previous, interval: interval, configured: configured), get: get)
            return (fetched, asked.withLock { $0 })
        }
        let (first, all) = try poll(after: 0, previous: nil)
        #expect(all.count == 1 + 1 + 3 + 1 + 2, "current, 1min, three 1h pages, 1day, both alerts' text: \(all)")
        let restored = try source.decode(first.body, for: Self.tulsa)
        #expect(restored.answers == first.reading.answers, "the state file's body gives the same reading back")
        let current = ["/data/4.0/onecall/current", "/data/4.0/onecall/timeline/1min"]
        #expect(try poll(after: 1200, previous: restored).1 == current, "20 minutes on: only what every poll asks")
        #expect(
            try poll(after: 3600, previous: restored, interval: 1200, configured: 600).1 == current,
            "stretched twice: the hours every 2 h")
        let (_, later) = try poll(after: 3600, previous: restored)
        #expect(later.filter { $0.hasSuffix("/1h") }.count == 3 && !later.contains { $0.hasSuffix("/1day") })
        #expect(
            later.contains { $0.hasSuffix("/alert/A7F03D6C-18E2-4B95-9C4D-6E2F1A8B3C07") },
            "the failed text again with the new hours")
        #expect(!later.contains { $0.hasSuffix(Self.windAdvisory) }, "a text is asked once")
        let (_, nextDay) = try poll(after: 6 * 3600, previous: restored)
        #expect(nextDay.contains { $0.hasSuffix("/1day") })
    }

    /// The exposition from the 4.0 fixtures equals 3.0's from the same data (the 3.0 answer
    /// `onecall-tulsa-from-4.0.json`: the 4.0 records under 3.0's keys, the first 8 days, the Wind
    /// Advisory's detail as its alert) in every family both write: weather, forecast and One Call's.
    /// Only the health lines, which name the source, differ.
    @Test func rendersAs3DoesFromTheSameData() throws {
        let answers = OneCall4.Answers(
            pages: [
                .current: [Fixture.bytes("onecall4-current-tulsa.json")],
                .minute: [Fixture.bytes("onecall4-1min-london.json")],
                .hour: [Fixture.bytes("onecall4-1h-tulsa.json")], .day: [Fixture.bytes("onecall4-1day-tulsa.json")],
            ],
            fetched: [.current: Self.now, .minute: Self.now, .hour: Self.now, .day: Self.now],
            alerts: [Fixture.bytes("onecall4-alert-tulsa-wind-advisory.json")])
        let four = try OneCall4Source().decode(answers.document(), for: Self.tulsa)
        let three = try OneCallDecoder.decode(Fixture.bytes("onecall-tulsa-from-4.0.json"))

        func rendered(_ source: any Source, _ reading: any Sendable) -> String {
            let store = ReadingStore(
                locations: [Self.tulsa], sources: [ForecastSource(), source, WeatherSource()],
                intervals: [.seconds(3600), .seconds(600), .seconds(600)], maxStaleness: [3 * 3600, 1800, 1800],
                thresholds: { _ in .init(aboveCelsius: 25, belowCelsius: 0) }, now: Self.now)
            store.success("Tulsa", source.name, reading, now: Self.now)
            for (name, derived) in zip(source.standsIn, source.readings(standingIn: reading) ?? []) {
                store.recordStandIn(
                    location: 0, slot: store.snapshot().layout.sourceNames.firstIndex(of: name)!,
                    result: Result<any Sendable, OpenWeatherError>.success(derived), duration: 0.25, now: Self.now)
            }
            let text = String(decoding: renderPlain(store.snapshot(), now: Self.now + 60), as: UTF8.self)
            return text.split(separator: "\n").filter {
                !$0.contains("source=\"onecall") && !$0.contains("duration_seconds")
            }.joined(separator: "\n")
        }
        let fromFour = rendered(OneCall4Source(), four)
        let fromThree = rendered(OneCallSource(), three)
        #expect(fromFour == fromThree)
        for family in [
            "openweather_temperature_celsius{", "openweather_forecast_temperature_celsius{",
            "openweather_forecast_daily_temperature_max_celsius{",
            "openweather_weather_alert_info{", "openweather_uv_index{", "openweather_precipitation_next_hour_meters{",
            "openweather_forecast_temperature_min_celsius{",
        ] {
            #expect(fromFour.contains("\n" + family), "\(family) is written")
        }
        #expect(fromFour.contains("event=\"Wind Advisory\""))
        ExpositionGoldenTests().compare(Array((fromFour + "\n").utf8), golden: "onecall4.prom")
    }

    /// Sub-hour horizons read the 15min timeline up to its last whole hour, then the hours.
    @Test func horizonsUnderTheHourReadTheQuarterHours() throws {
        let answers = OneCall4.Answers(
            pages: [
                .current: [Fixture.bytes("onecall4-current-tulsa.json")],
                .quarterHour: [Fixture.bytes("onecall4-15min-tulsa.json")],
                .hour: [Fixture.bytes("onecall4-1h-tulsa.json")],
            ],
            fetched: [.current: Self.now, .quarterHour: Self.now, .hour: Self.now])
        let reading = try OneCall4Decoder.decode(document: answers.document())
        let forecast = OneCall4Source.forecast(of: reading)
        let quarters = reading.quarterHours
        #expect(quarters.count == 50)
        // 12:00Z + 49 quarters = 00:15Z: the quarters up to 00:00Z, then the hours from 01:00Z.
        let seam = Self.now + 12 * 3600
        #expect(forecast.steps.filter { $0.time <= seam }.count == 49)
        #expect(forecast.steps.first { $0.time > seam }?.time == seam + 3600)
        #expect(forecast.value({ $0.temperatureCelsius }, at: Self.now + 900) == quarters[1].temperatureCelsius)
        #expect(forecast.steps[0].seconds == 900 && forecast.steps[49].seconds == 3600)
        // Without the 15min part, the hours as they are.
        #expect(
            OneCall4Source.forecast(
                of: try OneCall4Decoder.decode(
                    document: OneCall4.Answers(pages: [
                        .current: answers.pages[.current]!, .hour: answers.pages[.hour]!,
                    ]).document())) == reading.oneCall.hourly)
    }

    /// Without the subscription: one error line, the free endpoints for every location, 4.0 tried
    /// again hourly; a wrong key stays a wrong key.
    @Test func withoutTheSubscriptionTheFreeEndpointsRun() {
        let places = (0..<3).map { Location(name: "P\($0)", latitude: Double($0), longitude: Double($0)) }
        let rig = Rig(configuration(places, collectors: ["onecall4": .seconds(600)]))
        rig.transport.answer { request in
            request.path.hasPrefix("/data/4.0/")
                ? .failure(OneCallStandInTests.noSubscription) : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 2 * 3600 - 1)
        let errors = rig.logs.all.filter { $0.contains("level=error") }
        #expect(errors.count == 1 && errors.first?.contains("subscribe to One Call by Call") == true, "\(errors)")
        #expect(rig.transport.requests(to: "/data/4.0/onecall/current").count <= 3 * 2)
        #expect(rig.transport.requests(to: "/data/4.0/onecall/timeline/1h").isEmpty, "the first call said it all")
        #expect(rig.transport.requests(to: "/data/2.5/weather").count >= 3 * 11)
        #expect(
            places.allSatisfy {
                rig.state($0.name, "weather")?.up == true && rig.state($0.name, "forecast")?.up == true
            })

        let wrongKey = Rig(configuration(places, collectors: ["onecall4": .seconds(600)]))
        wrongKey.transport.answer { _ in
            .failure(
                .http(
                    status: 401,
                    message: "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info.",
                    retryAfterSeconds: nil))
        }
        wrongKey.run(until: 1000 + 1800)
        #expect(wrongKey.logs.all.contains { $0.contains("rejects the API key") })
        #expect(
            wrongKey.transport.requests(to: "/data/2.5/weather").isEmpty, "a wrong key is not a missing subscription")
    }
}
