import Testing

@testable import Exporter

/// The daily limits (issue 23 §1): the plan stretches intervals to fit them, and the schedule never
/// sends more than a limit in a UTC day, starting again at 00:00 UTC.
@Suite struct DailyBudgetTests {
    func load(_ arguments: [String]) throws(ConfigError) -> Configuration {
        switch try ConfigurationLoader(arguments: arguments, environment: ["OPENWEATHER_API_KEY": "test-key-123"]).load() {
        case .run(let configuration): return configuration
        default: throw ConfigError("not a run")
        }
    }

    /// 10 places every 10 minutes need 1,440 One Call requests a day: One Call alone stretches to
    /// 864 s to fit the free 1,000, the free sources keep their intervals, and the plan says so.
    @Test func aSourcesDailyLimitStretchesThatSourceOnly() throws {
        let places = (0..<10).map { "--location=P\($0)=\($0),1" }
        let config = try load(places + ["--collector.onecall", "--collector.air_pollution"])
        let plan = config.requestPlan
        let onecall = try #require(plan.entries.first { $0.source == "onecall" })
        #expect(onecall.interval == .seconds(864))
        #expect(onecall.requestsPerDay <= 1000 && onecall.requestsPerDay > 999.9)
        #expect(plan.interval(of: "air_pollution") == .seconds(3600))
        #expect(plan.stretchedForDay == ["onecall"] && !plan.stretched)
        #expect(onecall.text == "0.69/min (1 request per location every 14m24s; 1440/day needed, 1000/day allowed)")
        #expect(plan.logFields.contains { $0 == ("stretched_for_day", "onecall") })
        #expect(config.warnings.contains { $0.contains("onecall needs 1440 a day at its configured interval, 1000 allowed (--collector.onecall.max-requests-per-day)") })
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
        #expect(config.warnings.contains { $0.contains("the key allows 840 a day in all (--openweather.max-requests-per-day)") })
        // Shards share the key's day as they share its minute.
        let shard = try load(places + ["--openweather.max-requests-per-day=840", "--total-shards=2", "--shard=0",
                                       "--collector.onecall", "--collector.onecall.max-requests-per-day=1000"])
        #expect(shard.maxRequestsPerDay == 420 && shard.dailyLimits == ["onecall": 500])
        #expect(!shard.warnings.isEmpty)
    }

    @Test func badLimitsSayWhatIsWrong() {
        #expect(throws: ConfigError.self) { try load(["--location=A=1,2", "--openweather.max-requests-per-day=-1"]) }
        #expect(throws: ConfigError.self) { try load(["--location=A=1,2", "--collector.onecall.max-requests-per-day=lots"]) }
    }

    /// Three places polled every minute (4,320 a day) under a limit of 100 a day, over four virtual
    /// days starting at 20:00 UTC: never more than 100 in a UTC day, and each day's first request
    /// goes out at 00:00 UTC.
    @Test func neverMoreThanTheLimitInAUTCDayAndItResetsAtMidnight() {
        let day = 86_400.0
        let start = 20_000 * day + 20 * 3600
        var schedule = PollSchedule(names: ["a", "b", "c"], interval: 60, requestsPerMinute: 60, now: start)
        schedule.slotNames = ["onecall"]
        schedule.daily.limits = ["onecall": 100]
        var poller = VirtualPoller(schedule: schedule, now: start)
        poller.run(until: start + 4 * day)
        let byDay = Dictionary(grouping: poller.starts.map(\.time)) { Int(($0 / day).rounded(.down)) }
        #expect(byDay.keys.sorted() == [20_000, 20_001, 20_002, 20_003, 20_004])
        for (number, starts) in byDay {
            #expect(starts.count <= 100, "day \(number): \(starts.count)")
            if number > 20_000 { #expect(starts.min()! - Double(number) * day < 1, "day \(number) starts at \(starts.min()!)") }
        }
        #expect(byDay[20_001]!.count == 100)
        #expect(poller.schedule.daily.count(of: "onecall") == byDay[20_004]!.count)
    }

    /// The key's limit holds every source; a source's own holds only that source.
    @Test func theKeysLimitHoldsEverySource() {
        let day = 86_400.0
        let start = 30_000 * day
        var schedule = PollSchedule(
            specs: PollSchedule.specs(locations: 2, intervals: [60, 60]), sourceCount: 2, requestsPerMinute: 60, now: start)
        schedule.slotNames = ["onecall", "air_pollution"]
        schedule.daily.limits = ["onecall": 10]
        schedule.daily.keyLimit = 50
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
        var budget = DailyBudget(wall: 100 * 86_400 + 5, limits: ["onecall": 2])
        budget.record("onecall")
        budget.record("onecall")
        #expect(budget.exhausted("onecall") && !budget.exhausted("weather"))
        budget.advance(to: 100 * 86_400 - 1)
        #expect(budget.count(of: "onecall") == 2, "a clock set back starts no other day")
        budget.advance(to: 101 * 86_400)
        #expect(budget.count(of: "onecall") == 0 && !budget.exhausted("onecall") && budget.total == 0)
        #expect(DailyBudget.nextMidnight(after: 101 * 86_400) == 102 * 86_400)
    }
}
