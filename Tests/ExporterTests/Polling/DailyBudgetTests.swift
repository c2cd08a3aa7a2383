import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The daily limits (issue 23 §1): the plan stretches intervals to fit them, and the schedule never
/// sends more than a limit in a UTC day, starting again at 00:00 UTC.
@Suite struct DailyBudgetTests {
    /// 10 places every 10 minutes need 1,440 One Call requests a day: One Call alone stretches to
    /// 864 s to fit the free 1,000, the free sources keep their intervals, and the plan says so.
    @Test func aSourcesDailyLimitStretchesThatSourceOnly() throws {
        let places = (0..<10).map { "--location=P\($0)=\($0),1" }
        let config = try load(places + ["--collector.onecall", "--collector.air_pollution"])
        let plan = config.requestPlan
        let onecall = try #require(plan.entries.first { $0.name == "onecall" })
        #expect(onecall.interval == .seconds(864))
        #expect(onecall.requestsPerDay <= 1000 && onecall.requestsPerDay > 999.9)
        #expect(plan.interval(of: "air_pollution") == .seconds(3600))
        #expect(plan.stretchedForDay == ["onecall"] && !plan.stretched)
        #expect(onecall.text == "0.69/min (1 request per location every 14m24s; 1440/day needed, 1000/day allowed)")
        #expect(plan.logFields.contains { $0 == ("stretched_for_day", "onecall") })
        #expect(
            config.warnings.contains {
                $0.contains(
                    "onecall needs 1440 a day at its configured interval, 1000 allowed (--collector.onecall.max-requests-per-day)"
                )
            })
        // 0: no limit, no stretching, no warning.
        let unlimited = try load(places + ["--collector.onecall", "--collector.onecall.max-requests-per-day=0"])
        #expect(unlimited.requestPlan.interval(of: "onecall") == .seconds(600) && unlimited.dailyLimits.isEmpty)
        #expect(!unlimited.warnings.contains { $0.contains("daily request limits") })
        // Off, its limit does not apply to anything.
        #expect(try load(places).dailyLimits.isEmpty)
    }

    /// The key's daily limit stretches every source alike, after each source's own.
    @Test func theKeysDailyLimitStretchesEverySourceAlike() throws {
        let places = (0..<10).map { "--location=P\($0)=\($0),1" }
        // weather 1440 + forecast 240 = 1680 a day; 840 allowed: both twice as long.
        let config = try load(places + ["--openweather.max-requests-per-day=840"])
        let plan = config.requestPlan
        #expect(plan.interval(of: "weather") == .seconds(1200) && plan.interval(of: "forecast") == .seconds(7200))
        #expect(plan.requestsPerDay <= 840 && plan.stretchedForDay == ["forecast", "weather"])
        #expect(plan.logFields.contains { $0 == ("budget_per_day", "840") })
        #expect(
            plan.summary
                == "forecast=0.08/min (1 request per location every 2h; 240/day needed, 120/day planned), weather=0.5/min (1 request per location every 20m; 1440/day needed, 720/day planned)"
        )
        #expect(
            config.warnings.contains {
                $0.contains("the key allows 840 a day in all (--openweather.max-requests-per-day)")
            })
        // Shards share the key's day as they share its minute.
        let shard = try load(
            places + [
                "--openweather.max-requests-per-day=840", "--total-shards=2", "--shard=0",
                "--collector.onecall", "--collector.onecall.max-requests-per-day=1000",
            ])
        #expect(shard.maxRequestsPerDay == 420 && shard.dailyLimits == ["onecall": 500])
        // One Call's own limit, then the key's share over both: both shown.
        let onecall = try #require(shard.requestPlan.entries.first { $0.name == "onecall" })
        #expect(
            onecall.text.hasSuffix(
                "/day needed, 500/day allowed, \(RequestPlan.count(onecall.requestsPerDay))/day planned)"),
            "\(onecall.text)")
        #expect(shard.requestPlan.requestsPerDay <= 420)
        #expect(!shard.warnings.isEmpty)
    }

    /// The demo's simulator bills nothing: One Call's default limit there is far above the demo's pace
    /// (so its series show and nothing stretches); a given one applies.
    @Test func theDemosOneCallLimitIsFarAboveItsPaceUnlessGiven() throws {
        #expect(
            try load(["--demo", "--collector.onecall"]).dailyLimits == ["onecall": OneCallSource.demoMaxRequestsPerDay])
        #expect(!(try load(["--demo", "--collector.onecall"]).requestPlan.stretched), "far above the demo's pace")
        #expect(
            try load(["--demo", "--collector.onecall", "--collector.onecall.max-requests-per-day=100"]).dailyLimits == [
                "onecall": 100
            ])
    }

    @Test func badLimitsSayWhatIsWrong() {
        #expect(throws: ConfigError.self) { try load(["--location=A=1,2", "--openweather.max-requests-per-day=-1"]) }
        #expect(throws: ConfigError.self) {
            try load(["--location=A=1,2", "--collector.onecall.max-requests-per-day=lots"])
        }
    }

    /// Three places polled every minute (4,320 a day) under a limit of 100 a day, over four virtual
    /// days starting at 20:00 UTC: never more than 100 in a UTC day, and each day's first request
    /// goes out at 00:00 UTC.
    @Test func neverMoreThanTheLimitInAUTCDayAndItResetsAtMidnight() {
        let day = 86_400.0
        let start = 20_000 * day + 20 * 3600
        var schedule = PollSchedule(names: ["a", "b", "c"], interval: 60, requestsPerMinute: 60, now: start)
        schedule.daily.configure(sources: ["onecall"], limits: [100], keyLimit: nil)
        var poller = VirtualPoller(schedule: schedule, now: start)
        poller.run(until: start + 4 * day)
        let byDay = Dictionary(grouping: poller.starts.map(\.time)) { Int(($0 / day).rounded(.down)) }
        #expect(byDay.keys.sorted() == [20_000, 20_001, 20_002, 20_003, 20_004])
        for (number, starts) in byDay {
            #expect(starts.count <= 100, "day \(number): \(starts.count)")
            if number > 20_000 {
                #expect(starts.min()! - Double(number) * day < 1, "day \(number) starts at \(starts.min()!)")
            }
        }
        #expect(byDay[20_001]!.count == 100)
        #expect(poller.schedule.daily.count(of: 0) == byDay[20_004]!.count)
    }

    /// The key's limit holds every source; a source's own holds only that source.
    @Test func theKeysLimitHoldsEverySource() {
        let day = 86_400.0
        let start = 30_000 * day
        var schedule = PollSchedule(
            specs: PollSchedule.specs(locations: 2, intervals: [60, 60]), sourceCount: 2, requestsPerMinute: 60,
            now: start)
        schedule.daily.configure(sources: ["onecall", "air_pollution"], limits: [10, nil], keyLimit: 50)
        var poller = VirtualPoller(schedule: schedule, now: start)
        poller.run(until: start + 2 * day)
        for number in [30_000, 30_001] {
            let today = poller.starts.filter { Int(($0.time / day).rounded(.down)) == number }
            #expect(today.count == 50)
            #expect(today.count { $0.job % 2 == 0 } == 10)
            #expect(today.count { $0.job % 2 == 1 } == 40)
        }
    }

    @Test func countsStartAgainOnlyOnALaterDay() {
        var budget = DailyBudget(wall: 100 * 86_400 + 5)
        budget.configure(sources: ["onecall", "weather"], limits: [2, nil], keyLimit: nil)
        budget.record(0)
        budget.record(0)
        #expect(!budget.allows(0, 1) && budget.allows(1, 1))
        budget.advance(to: 100 * 86_400 - 1)
        #expect(budget.count(of: 0) == 2, "a clock set back starts no other day")
        budget.advance(to: 101 * 86_400)
        #expect(budget.count(of: 0) == 0 && budget.allows(0, 1) && budget.total == 0)
        #expect(DailyBudget.nextMidnight(after: 101 * 86_400) == 102 * 86_400)
    }

    /// Counted by slot, named at the edges: a reload that moves, drops and brings back sources keeps
    /// each one's counts, room held and limit in its new slot, and the state file names them.
    @Test func aReloadMovesEachSourcesCountsWithIt() {
        var budget = DailyBudget(wall: 100 * 86_400 + 5)
        budget.configure(sources: ["onecall", "weather"], limits: [3, nil], keyLimit: nil)
        budget.record(0)
        budget.record(0)
        budget.record(1)
        budget.reserve(0, 1)
        budget.spend(1)
        budget.configure(sources: ["air_pollution", "weather", "onecall"], limits: [nil, nil, 3], keyLimit: nil)
        #expect(budget.count(of: 2) == 2 && budget.count(of: 1) == 1 && budget.count(of: 0) == 0)
        #expect(!budget.allows(2, 1), "2 sent and 1 held of onecall's 3")
        #expect(!budget.hasRoom(1, 1) && budget.hasRoom(0, 1), "weather's day is still spent, air pollution's is not")
        budget.release(2, 1)
        #expect(budget.allows(2, 1) && budget.limit(of: 2) == 3)
        // Dropped, its counts stay for the state file and for a reload that brings it back.
        budget.configure(sources: ["weather"], limits: [nil], keyLimit: nil)
        #expect(budget.count(named: "onecall") == 2 && budget.total == 3)
        #expect(
            budget.savedDay.counts.map(\.name) == ["onecall", "weather"]
                && budget.savedDay.counts.map(\.count) == [2, 1])
        #expect(budget.savedDay.spent == ["weather"])
        budget.configure(sources: ["onecall"], limits: [2], keyLimit: nil)
        #expect(budget.count(of: 0) == 2 && !budget.allows(0, 1))
    }

    /// The shared day may count sources this process does not poll (a backfill's One Call beside an
    /// exporter of the weather): they are kept and written back, never dropped.
    @Test func aSharedDayKeepsTheSourcesThisProcessDoesNotPoll() {
        let day = 100
        var budget = DailyBudget(wall: Double(day) * 86_400 + 5)
        budget.configure(sources: ["weather"], limits: [nil], keyLimit: 10)
        budget.record(0)
        budget.absorb(
            SavedState.Daily(day: day, total: 4, counts: [("geocoding", 1), ("onecall", 3)], spent: ["onecall"]))
        #expect(budget.dayTotal == 5 && budget.count(named: "onecall") == 3)
        let written = budget.shared()
        #expect(
            written.counts.map(\.name) == ["geocoding", "onecall", "weather"]
                && written.counts.map(\.count) == [1, 3, 1])
        #expect(written.total == 5 && written.spent == ["onecall"])
        // Read back as the next step does: the others' part is the same, nothing counted twice.
        budget.absorb(written)
        #expect(budget.dayTotal == 5 && budget.count(of: 0) == 1)
    }
}

extension Configuration {
    /// Each active source's own daily limit (this replica's share), by name.
    var dailyLimits: [String: Int] {
        Dictionary(
            uniqueKeysWithValues: activeSources.compactMap { source in dailyLimit(of: source).map { (source.name, $0) }
            })
    }
}

/// `configuration` with `--collector.onecall.max-requests-per-day=perDay`.
func withOneCallLimit(_ configuration: Configuration, perDay: Int) -> Configuration {
    var configuration = configuration
    for index in configuration.collectors.indices {
        guard var onecall = configuration.collectors[index].source as? OneCallSource else { continue }
        onecall.options.maxRequestsPerDay = perDay
        configuration.collectors[index].source = onecall
    }
    return configuration
}

/// Wall time `hours` into UTC day `day`, on a `ManualTime` whose monotonic clock reads `monotonic`.
func manualTime(day: Int, hours: Double, monotonic: Double = 1000) -> ManualTime {
    ManualTime(monotonic: monotonic, epoch: Double(day) * 86_400 + hours * 3600 - monotonic)
}

/// A 429 for the day (issue 23 §1): One Call, which has a daily limit, answers 429 although the
/// poller is within it (the account's own cap is lower). One Call alone pauses until 00:00 UTC; the
/// weather and forecast poll their own endpoints meanwhile, air quality goes on, and at 00:00 UTC
/// One Call stands in again.
@Suite struct DailyRateLimitTests {
    static let places = (0..<3).map { Location(name: "P\($0)", latitude: Double($0), longitude: 1) }
    static let oneCall = "/data/3.0/onecall"
    static let blocked = OpenWeatherError.http(
        status: 429,
        message: "Your account is temporary blocked due to exceeding of requests limitation of your subscription type.",
        retryAfterSeconds: nil)

    @Test func aFourTwentyNineOnOneCallPausesOneCallUntilMidnightOnly() {
        // 22:00 UTC; One Call every 10 minutes fits its 1,000 a day at 3 places.
        let config = configuration(Self.places, collectors: ["onecall": .seconds(600), "air_pollution": .seconds(600)])
        let rig = Rig(config, time: manualTime(day: 20_300, hours: 22))
        let spent = Locked(false)
        rig.transport.answer { request in
            request.path == Self.oneCall && spent.withLock({ $0 })
                ? .failure(Self.blocked) : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 1200)
        let answered = rig.transport.requests(to: Self.oneCall).count
        #expect(answered >= 6)
        spent.withLock { $0 = true }
        rig.run(until: 1000 + 1800 + 1)
        let refused = rig.transport.requests(to: Self.oneCall).count
        #expect(refused == answered + 1, "the first 429 pauses One Call for the day")
        // Until 00:00 UTC (2h from the start): no One Call, the free endpoints instead, air quality on.
        let midnight = 1000 + 7200.0
        rig.run(until: midnight - 1)
        #expect(rig.transport.requests(to: Self.oneCall).count == refused)
        #expect(
            rig.transport.requests(to: "/data/2.5/weather").count >= 3 * 8,
            "weather every 10 minutes from its own endpoint")
        #expect(rig.transport.requests(to: "/data/2.5/forecast").count >= 3)
        #expect(
            rig.transport.requests(to: "/data/2.5/air_pollution").filter { $0.time > 1000 + 1900 }.count >= 3 * 8,
            "not a pause of the key")
        #expect(rig.logs.all.contains { $0.contains("level=error") && $0.contains("pausing onecall until 00:00 UTC") })
        #expect(!rig.logs.all.contains { $0.contains("pausing all requests") })
        for place in Self.places { #expect(rig.state(place.name, "weather")?.up == true) }
        // 00:00 UTC: One Call again, and the free weather stops.
        spent.withLock { $0 = false }
        rig.run(until: midnight + 60)
        let after = rig.transport.requests(to: Self.oneCall).filter { $0.time >= midnight }
        #expect(after.count == 3 && after.allSatisfy { $0.time < midnight + 5 })
        let weather = rig.transport.requests(to: "/data/2.5/weather").count
        rig.run(until: midnight + 3600)
        #expect(
            rig.transport.requests(to: "/data/2.5/weather").count == weather, "One Call stands in for the weather again"
        )
        #expect(rig.logs.all.contains { $0.contains("a new UTC day: onecall stands in for") })
    }

    /// Its own limit spent (2 a day for 3 places: the first round cannot finish) hands the weather
    /// and forecast their endpoints too, until 00:00 UTC.
    @Test func oneCallsOwnLimitSpentHandsBackTheFreeEndpoints() {
        let config = withOneCallLimit(configuration(Self.places, collectors: ["onecall": .seconds(600)]), perDay: 2)
        let rig = Rig(config, time: manualTime(day: 20_300, hours: 22))
        rig.run(until: 1000 + 7200 - 1)
        #expect(rig.transport.requests(to: Self.oneCall).count == 2)
        #expect(rig.transport.requests(to: "/data/2.5/weather").count >= 3)
        #expect(rig.state("P2", "weather")?.up == true)
        #expect(rig.logs.all.contains { $0.contains("onecall may send no more requests today") })
    }

    /// A 429 on a source without a daily limit is the key's, as before: everything pauses.
    @Test func aFourTwentyNineElsewhereStillPausesTheKey() {
        let config = configuration(Self.places, collectors: ["weather": .seconds(600), "air_pollution": .seconds(600)])
        let rig = Rig(config, time: manualTime(day: 20_300, hours: 12))
        rig.transport.answer { request in
            request.path == "/data/2.5/weather" ? .failure(Self.blocked) : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 30)
        #expect(rig.logs.all.contains { $0.contains("pausing all requests") })
    }
}

extension DailyBudgetTests {
    /// One rendering kept across the first count and a limit appearing on a reload: the families'
    /// positions the shards are kept by do not move (a count appearing once crashed the renderer,
    /// whose shards left unchanged kept the old positions). 70 places: three shards, of which the
    /// first seconds' polls change one.
    @Test func oneRenderingAcrossTheFirstCountAndNewLimits() {
        let places = (0..<70).map { Location(name: "P\($0)", latitude: Double($0 % 80), longitude: 1) }
        let rig = Rig(configuration(places), time: manualTime(day: 20_400, hours: 12))
        var rendering = MetricsRendering(gzipAbove: .max)
        let wall = rig.time.wall()
        let empty = String(
            decoding: rendering.render(rig.store.snapshot(), now: wall).text.chunks.concatenated, as: UTF8.self)
        #expect(!empty.contains("requests_today"))
        rig.run(until: 1000 + 5)
        let counted = String(
            decoding: rendering.render(rig.store.snapshot(), now: wall + 5).text.chunks.concatenated, as: UTF8.self)
        let weather = rig.transport.requests(to: "/data/2.5/weather").count
        #expect(weather > 0 && weather < 32, "the first seconds' polls change one shard of three")
        #expect(counted.contains("\nopenweather_api_requests_today{source=\"weather\"} \(weather)\n"))
        var limited = withOneCallLimit(configuration(places, collectors: ["onecall": .seconds(600)]), perDay: 100)
        limited.maxRequestsPerDay = 1000
        rig.poller.apply(limited.pollerSetup(transport: rig.transport))
        rig.run(until: 1000 + 6)
        let text = String(
            decoding: rendering.render(rig.store.snapshot(), now: wall + 6).text.chunks.concatenated, as: UTF8.self)
        #expect(text.contains("\nopenweather_api_daily_request_limit{source=\"onecall\"} 100\n"))
        #expect(text.contains("\nopenweather_api_key_daily_request_limit 1000\n"))
        #expect(
            text.contains("\nopenweather_api_requests_today{source=\"weather\"} \(weather)\n"),
            "a reload keeps the day's counts")
    }
}
