import Testing

@testable import Exporter

/// The plan of requests on its own: what each source needs a minute and a day, and the intervals
/// stretched to fit the key's budgets (the per-minute one alike for all, a source's own daily limit
/// for that source alone, the key's daily one alike for all again).
@Suite struct RequestPlanTests {
    /// Milliseconds of rounding up: a stretched interval is never shorter than the exact one.
    func seconds(_ entry: RequestPlan.Entry) -> Double { entry.interval.seconds }

    @Test func withinTheBudgetNothingIsStretched() {
        let plan = RequestPlan(
            sources: [
                .init(name: "weather", interval: .seconds(600), locations: 10),
                .init(name: "air_pollution", interval: .seconds(3600), locations: 10),
            ], budgetPerMinute: 60)
        #expect(plan.entries.map(\.interval) == [.seconds(600), .seconds(3600)])
        #expect(!plan.stretched && plan.stretchedForDay.isEmpty)
        #expect(plan.entries.map(\.requestsPerMinute) == [1, 10.0 / 60])
        #expect(abs(plan.requestsPerMinute - (1 + 10.0 / 60)) < 1e-12)
        #expect(plan.requestsPerDay == plan.requestsPerMinute * 1440)
        #expect(
            plan.summary
                == "weather=1/min (1 request per location every 10m), air_pollution=0.17/min (1 request per location every 1h)"
        )
    }

    /// 70 requests a minute wanted, 59 (60 spaced 61 s / 60 apart) possible: both intervals grow by 70/59.02.
    @Test func overTheMinuteBudgetEveryIntervalStretchesByTheSameFactor() throws {
        let plan = RequestPlan(
            sources: [
                .init(name: "weather", interval: .seconds(600), locations: 600),
                .init(name: "air_pollution", interval: .seconds(3600), locations: 600),
            ], budgetPerMinute: 60)
        #expect(RequestPlan.capacity(60) == 3600.0 / 61)
        let factor = 70 / RequestPlan.capacity(60)
        #expect(plan.stretched && plan.stretchedForDay.isEmpty)
        for (entry, configured) in zip(plan.entries, [600.0, 3600.0]) {
            #expect(
                seconds(entry) >= configured * factor && seconds(entry) <= configured * factor + 0.001,
                "\(entry.interval)")
            #expect(entry.configured == .seconds(Int64(configured)))
        }
        #expect(
            plan.requestsPerMinute <= RequestPlan.capacity(60)
                && plan.requestsPerMinute > RequestPlan.capacity(60) - 0.001)
        #expect(abs(plan.configuredRequestsPerMinute - 70) < 1e-9)
        #expect(plan.logFields.contains { $0 == ("stretched", "true") })
    }

    /// One Call's own 1,000 a day: 10 places every 10 minutes need 1,440, so One Call alone waits 864 s.
    @Test func aSourcesOwnDailyLimitStretchesThatSourceAlone() throws {
        let plan = RequestPlan(
            sources: [
                .init(name: "onecall", interval: .seconds(600), locations: 10, dailyLimit: 1000),
                .init(name: "weather", interval: .seconds(600), locations: 10),
            ],
            budgetPerMinute: 600)
        let onecall = plan.entries[0]
        let weather = plan.entries[1]
        #expect(seconds(onecall) >= 864 && seconds(onecall) <= 864.001, "\(onecall.interval)")
        #expect(weather.interval == .seconds(600))
        #expect(plan.stretchedForDay == ["onecall"] && !plan.stretched)
        #expect(onecall.neededPerDay == 1440)
        #expect(onecall.requestsPerDay <= 1000 && onecall.requestsPerDay > 999.99)
        #expect(onecall.text == "0.69/min (1 request per location every 14m24s; 1440/day needed, 1000/day allowed)")
        #expect(weather.text == "1/min (1 request per location every 10m)")
        #expect(plan.logFields.contains { $0 == ("stretched_for_day", "onecall") })
    }

    /// The key's 1,000 a day against 1,440 + 240 wanted: every polling source waits 1.68 times longer.
    @Test func theKeysDailyLimitStretchesEverySourceAlike() {
        let plan = RequestPlan(
            sources: [
                .init(name: "weather", interval: .seconds(600), locations: 10),
                .init(name: "air_pollution", interval: .seconds(3600), locations: 10),
            ],
            budgetPerMinute: 60, budgetPerDay: 1000)
        #expect(plan.stretchedForDay == ["weather", "air_pollution"])
        for (entry, configured) in zip(plan.entries, [600.0, 3600.0]) {
            #expect(
                seconds(entry) >= configured * 1.68 - 1e-9 && seconds(entry) <= configured * 1.68 + 0.001,
                "\(entry.interval)")
        }
        #expect(plan.requestsPerDay <= 1000 && plan.requestsPerDay > 999.99)
        #expect(
            plan.entries[0].text == "0.6/min (1 request per location every 16m48s; 1440/day needed, 858/day planned)")
        #expect(plan.logFields.contains { $0 == ("budget_per_day", "1000") })
    }

    /// A source's own limit is met first; the key's then stretches whatever is still over, all alike.
    @Test func bothDailyLimitsTogether() {
        let plan = RequestPlan(
            sources: [
                .init(name: "onecall", interval: .seconds(600), locations: 10, dailyLimit: 1000),
                .init(name: "weather", interval: .seconds(600), locations: 10),
            ],
            budgetPerMinute: 600, budgetPerDay: 1220)
        // onecall at its limit (1,000) + weather 1,440 = 2,440: twice the key's 1,220.
        #expect(seconds(plan.entries[0]) >= 1728 && seconds(plan.entries[0]) <= 1728.001)
        #expect(seconds(plan.entries[1]) >= 1200 && seconds(plan.entries[1]) <= 1200.001)
        #expect(plan.requestsPerDay <= 1220 && plan.requestsPerDay > 1219.99)
    }

    /// A source asked in parts weighs what a poll sends on average: 1 + 1/3 + 1/6 = 1.5.
    @Test func partsWeighAsTheirAverageRequestsAPoll() throws {
        let parts = [
            RequestPlan.Part(name: "current", perPoll: 1), .init(name: "1h", perPoll: 1.0 / 3),
            .init(name: "1day", perPoll: 1.0 / 6),
        ]
        #expect(RequestPlan.weight(of: []) == 1)
        #expect(abs(RequestPlan.weight(of: parts) - 1.5) < 1e-12)
        let plan = RequestPlan(
            sources: [.init(name: "onecall4", interval: .seconds(600), locations: 10, parts: parts)],
            budgetPerMinute: 60)
        let entry = plan.entries[0]
        #expect(abs(entry.weight - 1.5) < 1e-12 && abs(entry.requestsPerMinute - 1.5) < 1e-12)
        #expect(
            entry.text
                == "1.5/min (1 poll per location every 10m, per location current 144/day, 1h 48/day, 1day 24/day)")
        // The weight counts against the budgets: 1.5 a minute does not fit 1 (0.98 spaced).
        let tight = RequestPlan(
            sources: [.init(name: "onecall4", interval: .seconds(600), locations: 10, parts: parts)], budgetPerMinute: 1
        )
        #expect(tight.stretched && seconds(tight.entries[0]) >= 600 * 1.5 / RequestPlan.capacity(1))
        // And against a daily limit: 2,160 a day wanted, 1,000 allowed.
        let limited = RequestPlan(
            sources: [.init(name: "onecall4", interval: .seconds(600), locations: 10, dailyLimit: 1000, parts: parts)],
            budgetPerMinute: 60)
        #expect(seconds(limited.entries[0]) >= 1296 && seconds(limited.entries[0]) <= 1296.001)
        #expect(limited.entries[0].neededPerDay == 2160)
    }

    /// A source another stands in for sends nothing, so no limit stretches it.
    @Test func aSourceReadFromAnotherNeedsNothing() {
        let plan = RequestPlan(
            sources: [
                .init(name: "weather", interval: .seconds(600), locations: 0, readFrom: "onecall", dailyLimit: 1),
                .init(name: "onecall", interval: .seconds(600), locations: 10, dailyLimit: 1000),
            ],
            budgetPerMinute: 60)
        #expect(plan.entries[0].text == "read from onecall (no requests of its own)")
        #expect(plan.entries[0].requestsPerMinute == 0 && plan.entries[0].neededPerDay == 0)
        #expect(plan.entries[0].interval == .seconds(600))
        #expect(plan.stretchedForDay == ["onecall"])
        #expect(plan.interval(of: "weather") == .seconds(600) && plan.interval(of: "nothing") == nil)
    }

    /// Rates keep two decimals, or two significant digits below 0.01; counts a day round up.
    @Test func ratesAndCountsAsTheLogShowsThem() {
        #expect(RequestPlan.rate(1.234) == "1.23")
        #expect(RequestPlan.rate(0.005) == "0.005")
        #expect(RequestPlan.rate(0.0012345) == "0.0012")
        #expect(RequestPlan.rate(0) == "0")
        #expect(RequestPlan.count(999.2) == "1000")
        #expect(
            RequestPlan.count(1000 * (1 + 1e-12)) == "1000",
            "an interval fitted to a limit exactly is not shown one over it")
        #expect(RequestPlan.count(1000.01) == "1001")
        #expect(RequestPlan.count(.infinity) == "?")
    }
}
