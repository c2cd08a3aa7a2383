import Glibc
import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// One Call standing in for weather and forecast, and what happens without its subscription.
@Suite struct OneCallStandInTests {
    static let texarkana = Location(name: "Texarkana", latitude: 33.44, longitude: -94.04)
    static let oneCall: [String: Duration] = ["onecall": .seconds(600)]
    static let noSubscription = OpenWeatherError.http(
        status: 401,
        message:
            "Please note that using One Call 3.0 requires a separate subscription to the One Call by Call plan. Learn more here https://openweathermap.org/price.",
        retryAfterSeconds: nil)

    @Test func oneRequestFillsWeatherAndForecast() {
        let rig = Rig(configuration([Self.texarkana], collectors: Self.oneCall))
        #expect(rig.store.snapshot().layout.sourceNames == ["forecast", "onecall", "weather"])
        rig.run(until: 1000 + 3600)
        #expect(
            Set(rig.transport.log.map(\.request.path)) == ["/data/3.0/onecall"], "no request of weather or forecast")
        #expect(rig.transport.log.count == 6 || rig.transport.log.count == 7)
        #expect(rig.state("Texarkana", "weather")?.up == true)
        #expect((rig.state("Texarkana", "weather")?.reading as? CurrentWeather)?.temperatureCelsius == 19.4)
        #expect((rig.state("Texarkana", "forecast")?.reading as? Forecast)?.steps.count == 48 + 6)
        let counts = rig.store.snapshot().requestCounts
        #expect(counts.keys.map(\.source) == ["onecall"], "requests counted once, for the source that made them")
    }

    /// 401 without the subscription: one error line, weather and forecast from the free endpoints for
    /// every location, One Call retried hourly; once it works, it stands in again.
    @Test func withoutTheSubscriptionTheFreeEndpointsRun() {
        let places = (0..<5).map { Location(name: "P\($0)", latitude: Double($0), longitude: Double($0)) }
        let rig = Rig(configuration(places, collectors: Self.oneCall))
        let subscribed = Locked(false)
        rig.transport.answer { request in
            request.path == "/data/3.0/onecall" && !subscribed.withLock({ $0 })
                ? .failure(Self.noSubscription) : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 3 * 3600 - 1)
        let errors = rig.logs.all.filter { $0.contains("level=error") }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.contains("subscribe to One Call by Call") == true)
        let oneCalls = rig.transport.requests(to: "/data/3.0/onecall").count
        #expect(oneCalls <= 5 + 3, "the first round, then one an hour: \(oneCalls)")
        #expect(rig.transport.requests(to: "/data/2.5/weather").count >= 5 * 17)
        #expect(rig.transport.requests(to: "/data/2.5/forecast").count >= 5 * 3)
        for place in places {
            #expect(rig.state(place.name, "weather")?.up == true)
            #expect(rig.state(place.name, "forecast")?.up == true)
        }
        #expect(!rig.logs.all.contains { $0.contains("rejects the API key") })
        #expect(rig.store.snapshot().allAttempted, "every location has One Call's answer, so the exporter is ready")
        #expect(places.allSatisfy { rig.state($0.name, "onecall")?.up == false })

        // The landing page says it once, above the table, with where weather and forecast come from.
        let message = "requires a separate subscription to the One Call by Call plan"
        let page = String(
            decoding: LandingPage(telemetryPath: "/metrics", demo: false).render(rig.store.snapshot()), as: UTF8.self)
        #expect(page.ranges(of: message).count == 1, "the reason once, not in each of the 5 rows")
        #expect(page.contains("onecall cannot be used with this key"))
        #expect(page.contains("forecast and weather are polled from their own free endpoints instead"))
        #expect(!page.contains("wrong"))

        subscribed.withLock { $0 = true }
        rig.run(until: 1000 + 4 * 3600 + 1)
        #expect(rig.store.snapshot().unavailable.allSatisfy { $0 == nil })
        #expect(rig.logs.all.contains { $0.contains("works with this key again") })
        let after = rig.transport.log.filter { $0.time > 1000 + 4 * 3600 - 600 }
        #expect(
            !after.isEmpty && after.allSatisfy { $0.request.path == "/data/3.0/onecall" },
            "\(after.map(\.request.path))")
        #expect(rig.state("P3", "onecall")?.up == true)
    }

    /// A source the key cannot use that stands in for nothing configured (the add-a-source path: a paid
    /// endpoint of its own) is said to be unusable without naming an empty list of replacements.
    @Test func anUnusableSourceThatStandsInForNothingIsWordedForItself() {
        let store = ReadingStore(
            locations: [Self.texarkana], sources: [OneCallSource()], intervals: [.seconds(600)],
            maxStaleness: [1800], thresholds: { _ in .init() }, now: 1000)
        store.recordUnavailable(slot: 0, reason: "needs a subscription")
        let page = String(
            decoding: LandingPage(telemetryPath: "/metrics", demo: false).render(store.snapshot()), as: UTF8.self)
        #expect(page.contains("onecall cannot be used with this key"))
        #expect(page.contains("onecall is tried again every 1h"), "\(page)")
        #expect(!page.contains("are polled from their own free endpoints"))
    }

    /// A wrong key gets 401 from One Call too, without the word "subscription": One Call keeps
    /// standing in, so weather and forecast fail with it and make no requests of their own; the
    /// `OpenWeatherAPIKeyRejected` rule tells the two 401s apart by exactly that.
    @Test func aWrongKeyIsNotAMissingSubscription() {
        let rig = Rig(configuration([Self.texarkana], collectors: Self.oneCall))
        rig.transport.answer { _ in
            .failure(
                .http(
                    status: 401,
                    message: "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info.",
                    retryAfterSeconds: nil))
        }
        rig.run(until: 1000 + 3600)
        #expect(
            Set(rig.transport.log.map(\.request.path)) == ["/data/3.0/onecall"], "weather and forecast make no requests"
        )
        #expect(rig.state("Texarkana", "onecall")?.up == false)
        #expect(rig.state("Texarkana", "weather")?.up == false)
        #expect(rig.state("Texarkana", "forecast")?.up == false)
        #expect(rig.store.snapshot().requestCounts.keys.map(\.source) == ["onecall"])
        #expect(!rig.logs.all.contains { $0.contains("cannot be used with this key") })
    }

    /// A reload while One Call cannot be used keeps its next try an hour after the last.
    @Test func aReloadDoesNotPutOffTheHourlyTry() {
        let config = configuration([Self.texarkana, OneCallStandInTests.other], collectors: Self.oneCall)
        let rig = Rig(config)
        rig.transport.answer { request in
            request.path == "/data/3.0/onecall" ? .failure(Self.noSubscription) : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 1800)
        let before = rig.transport.requests(to: "/data/3.0/onecall").map(\.time)
        rig.poller.apply(config.pollerSetup(transport: rig.transport))
        rig.run(until: 1000 + 3600 + 120)
        let tries = rig.transport.requests(to: "/data/3.0/onecall").map(\.time)
        #expect(!before.isEmpty && before.allSatisfy { $0 < 1000 + 60 })
        #expect(tries.count == before.count + 1, "\(tries)")
        #expect(tries.last.map { $0 > 1000 + 3500 && $0 <= 1000 + 3600 + 120 } == true, "\(tries)")
    }

    static let other = Location(name: "Shreveport", latitude: 32.52, longitude: -93.75)

    /// One Call without its daily limit (`--collector.onecall.max-requests-per-day=0`).
    static func unlimited(_ configuration: Configuration) -> Configuration {
        withOneCallLimit(configuration, perDay: 0)
    }

    /// The plan counts One Call once for both sources it stands in for (its daily limit aside: see
    /// `DailyBudgetTests`).
    @Test func oneCallHalvesTheRequests() throws {
        let places = (0..<400).map { Location(name: "P\($0)", latitude: Double($0 % 170) - 85, longitude: 1) }
        let free = configuration(places, collectors: ["weather": .seconds(600), "forecast": .seconds(600)])
        let paid = Self.unlimited(configuration(places, collectors: ["onecall": .seconds(600)]))
        #expect(free.requestPlan.configuredRequestsPerMinute == 80)
        #expect(paid.requestPlan.configuredRequestsPerMinute == 40)
        #expect(free.requestPlan.stretched && !paid.requestPlan.stretched)
        #expect(paid.requestPlan.summary.contains("onecall=40/min (1 request per location every 10m)"))
        #expect(free.fallbackRequestPlan == nil)
        // Without the subscription, weather and forecast at 10m would need 80 a minute: their intervals
        // are planned for that case, stretched alike.
        let fallback = try #require(
            configuration(
                places, collectors: ["onecall": .seconds(600), "weather": .seconds(600), "forecast": .seconds(600)]
            ).fallbackRequestPlan)
        #expect(fallback.stretched && fallback.configuredRequestsPerMinute == 80)
        let intervals = Self.unlimited(
            configuration(
                places, collectors: ["onecall": .seconds(600), "weather": .seconds(600), "forecast": .seconds(600)])
        ).sourcePolling.intervals
        #expect(
            intervals == [fallback.interval(of: "forecast")!, .seconds(600), fallback.interval(of: "weather")!],
            "forecast, onecall, weather")
    }

    /// 400 places on 60 a minute: the default intervals (weather 10m, forecast 1h) need 46.7 a minute
    /// and fit; weather every 5 minutes does not, and both intervals stretch alike. The poller keeps to it.
    @Test func fourHundredPlacesWithTheForecastKeepTheBudget() {
        let places = (0..<400).map { Location(name: "P\($0)", latitude: Double($0 % 170) - 85, longitude: 1) }
        let defaults = configuration(places, collectors: ["weather": .seconds(600), "forecast": .seconds(3600)])
            .requestPlan
        #expect(!defaults.stretched && abs(defaults.requestsPerMinute - 46.67) < 0.01)
        let config = configuration(places, collectors: ["weather": .seconds(300), "forecast": .seconds(3600)])
        let plan = config.requestPlan
        #expect(plan.stretched)
        #expect(abs(plan.interval(of: "weather")!.seconds / 300 - plan.interval(of: "forecast")!.seconds / 3600) < 1e-5)
        #expect(plan.logFields.contains { $0 == ("stretched", "true") })
        #expect(plan.requestsPerMinute <= RequestPlan.capacity(60) + 1e-9)
        let rig = Rig(config)
        rig.run(until: 1000 + 2 * 3600)
        let most = rig.transport.mostInAnyMinute
        #expect(most <= 60, "\(most) requests in one minute")
        #expect(rig.transport.requests(to: "/data/2.5/forecast").count >= 400)
    }
}

/// One Call's own families at a fixed now: alerts in force collapse by event and sender and leave at their end.
@Suite struct OneCallRenderingTests {
    /// Between the fixture's two alerts' starts: only the heat advisory is in force.
    static let now = 1_684_945_000.0

    static func snapshot(polledAt polled: Double) throws -> ReadingStore.Snapshot {
        var reading = try OneCallDecoder.decode(Fixture.bytes("onecall-texarkana-alerts.json"))
        // A second heat advisory of the same sender, ending later: one series, the latest end.
        var longer = reading.alerts[0]
        longer.end += 3600
        reading.alerts.append(longer)
        let store = ReadingStore(
            locations: [OneCallStandInTests.texarkana], sources: [ForecastSource(), OneCallSource(), WeatherSource()],
            intervals: [.seconds(3600), .seconds(600), .seconds(600)], maxStaleness: [3 * 3600, 1800, 1800],
            thresholds: { _ in .init(aboveCelsius: 25) }, now: polled)
        store.success("Texarkana", "onecall", reading, now: polled)
        for (name, derived) in zip(
            OneCallSource().standsIn, try #require(OneCallSource().readings(standingIn: reading)))
        {
            store.recordStandIn(
                location: 0, slot: store.snapshot().layout.sourceNames.firstIndex(of: name)!, result: .success(derived),
                duration: 0.25, now: polled)
        }
        return store.snapshot()
    }

    @Test func texarkanaRendersAsTheGoldenFile() throws {
        let rendered = renderPlain(try Self.snapshot(polledAt: Self.now - 60), now: Self.now)
        ExpositionGoldenTests().compare(rendered, golden: "onecall.prom")
        // Forecast, One Call and official alert families in OpenMetrics too (parsed by prometheus_client in Tests/deploy/run.sh).
        let openMetrics = renderOpenMetrics(try Self.snapshot(polledAt: Self.now - 60), now: Self.now)
        ExpositionGoldenTests().compare(openMetrics, golden: "onecall.om")
        let (series, plain) = seriesAsText(openMetrics: openMetrics, text: rendered)
        #expect(series == plain)
        #expect(rendered == ExpositionText.reRendered(rendered))
        let text = String(decoding: rendered, as: UTF8.self)
        let heat =
            "{location=\"Texarkana\",event=\"Heat Advisory\",sender=\"NWS Shreveport (Northwest Louisiana, Southern Arkansas, East Texas, Southeast Oklahoma)\"}"
        let tagged = heat.dropLast() + ",tags=\"Extreme temperature value\"}"
        #expect(text.contains("\nopenweather_weather_alert_info\(tagged) 1\n"))
        #expect(text.contains("\nopenweather_weather_alert_end_timestamp_seconds\(heat) 1684980000\n"))
        #expect(!text.contains("Flood Watch"), "not in force yet")
        #expect(text.contains("\nopenweather_temperature_celsius{location=\"Texarkana\"} 19.4\n"))
        #expect(text.contains("\nopenweather_uv_index{location=\"Texarkana\"} 0.16\n"))
        #expect(!text.contains("openweather_temperature_min_celsius{"), "One Call reports no spread")
        // Later, the flood watch is in force and the heat advisory has ended.
        let later = String(
            decoding: renderPlain(try Self.snapshot(polledAt: 1_684_990_000 - 60), now: 1_684_990_000), as: UTF8.self)
        #expect(later.contains("event=\"Flood Watch\"") && !later.contains("event=\"Heat Advisory\""))
    }

    /// A day skipped as unusable leaves its `days_ahead` empty: the day after it is not shown as it.
    @Test func aSkippedDayKeepsItsPlaceEmpty() throws {
        var text = String(decoding: Fixture.bytes("onecall-texarkana-alerts.json"), as: UTF8.self)
        text = text.replacing(#"{"dt":1685120400,"sunrise""#, with: #"{"dt":"soon","sunrise""#)
        let reading = try OneCallDecoder.decode(Array(text.utf8))
        let store = ReadingStore(
            locations: [OneCallStandInTests.texarkana], sources: [OneCallSource()], intervals: [.seconds(600)],
            maxStaleness: [1800], thresholds: { _ in .init() }, now: Self.now - 60)
        store.success("Texarkana", "onecall", reading, now: Self.now - 60)
        let rendered = String(decoding: renderPlain(store.snapshot(), now: Self.now), as: UTF8.self)
        let lows = rendered.split(separator: "\n").filter {
            $0.hasPrefix("openweather_forecast_daily_temperature_min_celsius{")
        }
        #expect(lows.count == 7 && !rendered.contains("days_ahead=\"2\""))
        let third = "openweather_forecast_daily_temperature_min_celsius{location=\"Texarkana\",days_ahead=\"3\"}"
        #expect(rendered.sample(third).flatMap(Double.init) == reading.daily[2].temperatureMinCelsius)
    }
}

/// The minute forecast's two families at a fixed now, and `--collector.onecall.exclude`.
@Suite struct NowcastRenderingTests {
    /// Texarkana's minute forecast: dry for 30 minutes from here, then 0.2 mm/h rising by 0.2 a minute.
    static let first = 1_684_929_480.0
    /// 30 s into Texarkana's first minute of rain.
    static let now = first + 1830
    static let dry = Location(name: "Dry", latitude: 1, longitude: 2)
    static let excluded = Location(name: "Excluded", latitude: 3, longitude: 4)

    /// Texarkana as sent; Dry with a minute forecast of no rain; Excluded without one (as with `exclude=minutely`).
    static func snapshot(polledAt polled: Double) throws -> ReadingStore.Snapshot {
        let texarkana = try OneCallDecoder.decode(Fixture.bytes("onecall-texarkana-alerts.json"))
        var dry = texarkana
        dry.minutely = dry.minutely.map { .init(time: $0.time, precipitationMetersPerSecond: 0) }
        var excluded = texarkana
        excluded.minutely = []
        let places = [Self.dry, Self.excluded, OneCallStandInTests.texarkana]
        let store = ReadingStore(
            locations: places, sources: [ForecastSource(), OneCallSource(), WeatherSource()],
            intervals: [.seconds(3600), .seconds(600), .seconds(600)], maxStaleness: [3 * 3600, 1800, 1800],
            thresholds: { _ in .init() }, now: polled)
        for (place, reading) in zip(places, [dry, excluded, texarkana]) {
            store.success(place.name, "onecall", reading, now: polled)
        }
        return store.snapshot()
    }

    /// The lines of the two nowcast families (and OpenMetrics' `# EOF`).
    static func nowcastLines(_ rendered: [UInt8]) -> [UInt8] {
        let lines = String(decoding: rendered, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let kept = lines.filter { line in
            let name = line.hasPrefix("# EOF") ? "" : line.hasPrefix("# ") ? line.dropFirst(7) : line[...]
            return line.hasPrefix("# EOF") || name.hasPrefix("openweather_precipitation_next_")
        }
        return Array((kept.joined(separator: "\n") + "\n").utf8)
    }

    @Test func rendersAsTheGoldenFiles() throws {
        let rendered = renderPlain(try Self.snapshot(polledAt: Self.now - 60), now: Self.now)
        ExpositionGoldenTests().compare(Self.nowcastLines(rendered), golden: "onecall-nowcast.prom")
        let openMetrics = renderOpenMetrics(try Self.snapshot(polledAt: Self.now - 60), now: Self.now)
        ExpositionGoldenTests().compare(Self.nowcastLines(openMetrics), golden: "onecall-nowcast.om")
        let text = String(decoding: rendered, as: UTF8.self)
        #expect(
            text.contains(
                "\nopenweather_precipitation_next_start_timestamp_seconds{location=\"Texarkana\"} 1684931280\n"),
            "rain now: this minute's start")
        #expect(text.contains("\nopenweather_precipitation_next_hour_meters{location=\"Dry\"} 0\n"))
        #expect(
            !text.contains("openweather_precipitation_next_start_timestamp_seconds{location=\"Dry\"}"),
            "no rain, no start")
        #expect(
            !text.contains("_next_hour_meters{location=\"Excluded\"}")
                && !text.contains("_next_start_timestamp_seconds{location=\"Excluded\"}"),
            "no minute forecast, neither family")
        let amount = try #require(
            text.split(separator: "\n").first {
                $0.hasPrefix("openweather_precipitation_next_hour_meters{location=\"Texarkana\"}")
            })
        // Half of the 0.2 mm/h minute, then 0.4 ... 6.2 mm/h a minute each.
        let value: Double = try #require(Double(String(amount.split(separator: " ")[1])))
        let expected: Double = (0.1 + 99.0) / 60 / 1000
        #expect(abs(value - expected) < 1e-12)
    }

    /// Re-rendered as time passes, from the same reading: 20 minutes ahead, then gone after the forecast's end.
    @Test func movesWithTheRendersNow() throws {
        let snapshot = try Self.snapshot(polledAt: Self.first)
        let early = String(decoding: renderPlain(snapshot, now: Self.first + 600), as: UTF8.self)
        #expect(
            early.contains(
                "\nopenweather_precipitation_next_start_timestamp_seconds{location=\"Texarkana\"} 1684931280\n"))
        let late = String(decoding: renderPlain(snapshot, now: Self.first + 61 * 60), as: UTF8.self)
        #expect(!late.contains("openweather_precipitation_next_"), "the minute forecast is over")
        #expect(OneCallSource().timePeriod == 60, "a render each minute: every minute step shows from its start")
    }

    @Test func excludeIsAnOptionOfTheSource() throws {
        func oneCall(_ arguments: [String]) throws -> OneCallSource {
            let config = try load(["--location", "A=1,2", "--collector.onecall"] + arguments)
            return try #require(config.activeSources.first { $0.name == "onecall" } as? OneCallSource)
        }
        let whole = try oneCall([])
        #expect(whole.options.exclude.isEmpty)
        let request = whole.request(
            for: PollFacts(
                location: OneCallStandInTests.texarkana, coordinates: Coordinates(latitude: 1, longitude: 2),
                language: "en", now: 0))
        #expect(
            !request.query.contains { $0.name == "exclude" },
            "every part by default: today's families and the minute forecast")
        let less = try oneCall(["--collector.onecall.exclude=alerts, minutely,alerts"])
        #expect(less.options.exclude == [.minutely, .alerts], "the answer's order, without repeats")
        #expect(
            less.request(
                for: PollFacts(location: OneCallStandInTests.texarkana, coordinates: nil, language: "en", now: 0)
            ).query.last
                == .init("exclude", "minutely,alerts"))
        #expect(try oneCall(["--collector.onecall.exclude="]).options.exclude.isEmpty)
        #expect(
            loadError(["--location", "A=1,2", "--collector.onecall.exclude=hourly"]).contains(
                "--collector.onecall.exclude \"hourly\": \"hourly\" cannot be left out: One Call stands in for the weather and the forecast"
            ))
        #expect(
            loadError(["--location", "A=1,2", "--collector.onecall.exclude=minutely,rain"]).contains(
                "\"rain\" is not a part of the One Call answer; use minutely, daily or alerts"))
        let file = temporaryFile(
            "collector:\n  onecall:\n    enabled: true\n    exclude: [daily]\nlocations: [{name: A, latitude: 1, longitude: 2}]\n",
            suffix: ".yml")
        defer { unlink(file) }
        let fromFile = try #require(
            try load(["--config.file", file]).activeSources.first { $0.name == "onecall" } as? OneCallSource)
        #expect(fromFile.options.exclude == [.daily])
    }
}
