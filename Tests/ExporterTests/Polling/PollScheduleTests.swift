import TestSupport
import Testing

@testable import Exporter

extension PollSchedule {
    /// One polling source at every location.
    init(names: [String], interval: Double, requestsPerMinute: Int, now: Double) {
        self.init(
            specs: names.map { Spec(key: $0, kind: .poll, interval: interval) }, sourceCount: 1,
            requestsPerMinute: requestsPerMinute,
            now: now)
    }

    /// Locations polled by several sources, each at its own interval: specs location by location.
    static func specs(locations: Int, intervals: [Double]) -> [Spec] {
        (0..<locations).flatMap { location in
            intervals.enumerated().map { source, interval in
                Spec(key: "L\(location)/\(source)", kind: .poll, interval: interval)
            }
        }
    }
}

/// Runs the schedule on a virtual clock: requests complete after `latency` with the outcome
/// `outcome(job, time)` gives.
struct VirtualPoller {
    var schedule: PollSchedule
    var now: Double
    var starts: [(time: Double, job: Int)] = []
    var latency = 0.2
    var pending: [(done: Double, job: Int)] = []
    var generator = SeededGenerator(seed: 7)

    init(names: [String], interval: Double, requestsPerMinute: Int, now: Double = 1000) {
        self.init(
            schedule: PollSchedule(names: names, interval: interval, requestsPerMinute: requestsPerMinute, now: now),
            now: now)
    }

    init(schedule: PollSchedule, now: Double = 1000) {
        self.schedule = schedule
        self.now = now
    }

    mutating func run(
        until end: Double, outcome: (Int, Double) -> PollSchedule.Outcome = { _, _ in .success },
        then: (inout PollSchedule, Int, PollSchedule.Outcome, Double) -> Void = { _, _, _, _ in }
    ) {
        while now < end {
            pending.sort { $0.done < $1.done }
            while let first = pending.first, first.done <= now {
                pending.removeFirst()
                let result = outcome(first.job, first.done)
                schedule.finished(
                    job: first.job, outcome: result, now: first.done,
                    random: Double.random(in: 0..<1, using: &generator))
                then(&schedule, first.job, result, first.done)
            }
            switch schedule.next(now: now, wall: now) {
            case .fire(let job):
                starts.append((now, job))
                pending.append((now + latency, job))
            case .wait(let until):
                now = min(until, pending.map(\.done).min() ?? until, end)
            case .idle:
                now = min(pending.map(\.done).min() ?? end, end)
            }
        }
    }

    func times(of job: Int) -> [Double] { starts.filter { $0.job == job }.map(\.time) }

    func maxInAnyWindow(_ window: Double) -> Int {
        var best = 0
        var low = 0
        for high in starts.indices {
            while starts[high].time - starts[low].time >= window { low += 1 }
            best = max(best, high - low + 1)
        }
        return best
    }
}

@Suite struct PollScheduleTests {
    @Test func firstRoundStartsAtOncePacedByTheBudget() {
        var poller = VirtualPoller(names: (0..<10).map { "L\($0)" }, interval: 600, requestsPerMinute: 60)
        poller.run(until: 1000 + 30)
        #expect(poller.starts.count == 10)
        #expect(poller.starts.first?.time == 1000)
        let gaps = zip(poller.starts.dropFirst(), poller.starts).map { $0.time - $1.time }
        #expect(gaps.allSatisfy { $0 >= 61.0 / 60 - 1e-9 })
    }

    @Test func eachLocationOncePerIntervalSpreadEvenly() {
        var poller = VirtualPoller(names: (0..<10).map { "L\($0)" }, interval: 600, requestsPerMinute: 60)
        poller.run(until: 1000 + 600 * 8)
        // After the first round: one request a minute, evenly spread.
        let steady = poller.starts.filter { $0.time >= 1000 + 600 && $0.time < 1000 + 600 * 7 }
        for job in 0..<10 { #expect(steady.filter { $0.job == job }.count == 6) }
        let gaps = zip(steady.dropFirst(), steady).map { $0.time - $1.time }
        #expect(gaps.allSatisfy { abs($0 - 60) < 1.5 }, "\(gaps)")
        for job in 0..<10 {
            let intervals = zip(poller.times(of: job).dropFirst(), poller.times(of: job)).map { $0 - $1 }
            #expect(intervals.dropFirst().allSatisfy { abs($0 - 600) < 1.5 })
            #expect(intervals.allSatisfy { $0 >= 300 }, "\(job): \(intervals)")
        }
    }

    @Test func twoThousandLocationsNeverExceedTheBudget() {
        let names = (0..<2000).map { "L\($0)" }
        let interval = RequestPlan(
            sources: [.init(name: "weather", interval: .seconds(600), locations: 2000)], budgetPerMinute: 60
        ).entries[0].interval.seconds
        var poller = VirtualPoller(names: names, interval: interval, requestsPerMinute: 60)
        poller.run(until: 1000 + interval * 2.5)
        #expect(poller.maxInAnyWindow(60) <= 60)
        #expect(poller.starts.count > 4000)
        let gaps = zip(poller.starts.dropFirst(), poller.starts).map { $0.time - $1.time }
        #expect(gaps.min()! >= 61.0 / 60 - 1e-9)
        #expect(gaps.max()! < 1.1, "requests should be spread evenly, not bunched")
    }

    /// Weather every 10 minutes and air pollution every hour for 600 locations (70 requests a minute):
    /// one budget for both, stretched.
    @Test func twoSourcesShareOneBudget() {
        let plan = RequestPlan(
            sources: [
                .init(name: "weather", interval: .seconds(600), locations: 600),
                .init(name: "air_pollution", interval: .seconds(3600), locations: 600),
            ], budgetPerMinute: 60)
        #expect(plan.stretched)
        #expect(plan.requestsPerMinute <= RequestPlan.capacity(60) + 1e-9)
        // Stretched by one factor: each keeps its share.
        #expect(abs(plan.entries[0].interval.seconds / plan.entries[1].interval.seconds - 600.0 / 3600) < 1e-6)
        let intervals = plan.entries.map(\.interval.seconds)
        var poller = VirtualPoller(
            schedule: PollSchedule(
                specs: PollSchedule.specs(locations: 600, intervals: intervals), sourceCount: 2, requestsPerMinute: 60,
                now: 1000))
        poller.run(until: 1000 + intervals[1] * 5)
        #expect(poller.maxInAnyWindow(60) <= 60)
        // After the first round (1,200 requests at the budget's pace), each source at its own rate.
        let steady = poller.starts.filter { $0.time >= 1000 + intervals[1] && $0.time < 1000 + 3 * intervals[1] }
        let weather = Double(steady.count { $0.job % 2 == 0 })
        let air = Double(steady.count { $0.job % 2 == 1 })
        #expect(abs(weather / (600 * 2 * intervals[1] / intervals[0]) - 1) < 0.02, "\(weather)")
        #expect(abs(air / 1200 - 1) < 0.02, "\(air)")
        // Each job keeps its interval once the first round's backlog is through.
        for job in [0, 1, 598, 599, 1198, 1199] {
            let gaps = zip(poller.times(of: job).dropFirst(), poller.times(of: job)).map { $0 - $1 }.dropFirst(2)
            #expect(!gaps.isEmpty && gaps.allSatisfy { abs($0 - intervals[job % 2]) < 2 }, "job \(job): \(gaps)")
        }
    }

    /// The caller chooses which locations follow each other (the poller: the exposition's order);
    /// each source then goes through them in that order, still evenly spread.
    @Test func eachSourcePollsTheLocationsInThePhaseOrder() {
        let order = [3, 0, 4, 1, 2]
        let intervals = [300.0, 600.0]
        var poller = VirtualPoller(
            schedule: PollSchedule(
                specs: PollSchedule.specs(locations: 5, intervals: intervals), sourceCount: 2, requestsPerMinute: 600,
                now: 1000,
                phaseOrder: order))
        poller.run(until: 1000 + 600 * 4)
        for source in 0..<2 {
            let steady = poller.starts.filter { $0.time >= 1000 + 600 && $0.job % 2 == source }
            let ranks = steady.map { order.firstIndex(of: $0.job / 2)! }
            #expect(steady.count >= 2 * 5, "source \(source): \(steady.count) polls")
            #expect(zip(ranks.dropFirst(), ranks).allSatisfy { $0 == ($1 + 1) % 5 }, "source \(source): \(ranks)")
            let gaps = zip(steady.dropFirst(), steady).map { $0.time - $1.time }
            #expect(gaps.allSatisfy { abs($0 - intervals[source] / 5) < 1.5 }, "source \(source): \(gaps)")
        }
    }

    @Test func aPlanThatFitsIsNotStretched() {
        let plan = RequestPlan(
            sources: [
                .init(name: "weather", interval: .seconds(600), locations: 10),
                .init(name: "air_pollution", interval: .seconds(3600), locations: 10),
            ], budgetPerMinute: 60)
        #expect(!plan.stretched)
        #expect(plan.entries.map(\.interval) == [.seconds(600), .seconds(3600)])
        #expect(abs(plan.requestsPerMinute - (1 + 10.0 / 60)) < 1e-9)
    }

    @Test func transientFailuresBackOffWithJitterUpToAnHourAndOthersAreUnaffected() {
        var poller = VirtualPoller(names: ["bad", "good"], interval: 60, requestsPerMinute: 600)
        poller.run(until: 1000 + 6 * 3600) { job, _ in job == 0 ? .transientFailure : .success }
        let gaps = zip(poller.times(of: 0).dropFirst(), poller.times(of: 0)).map { $0 - $1 }
        // 60, 120, 240, 480, 960, 1920, then capped at one hour: each ±20%.
        #expect(gaps.count >= 8)
        for (index, gap) in gaps.enumerated() {
            let expected = min(60 * Double(1 << min(index, 20)), 3600)
            #expect(gap >= expected * 0.8 - 0.5 && gap <= expected * 1.2 + 0.5, "gap \(index): \(gap)")
        }
        // The jitter is drawn, not fixed: the capped gaps differ from one another.
        let capped = gaps.dropFirst(6)
        #expect(Set(capped.map { ($0 / 10).rounded() }).count > 1, "\(capped)")
        #expect(poller.times(of: 1).count >= 6 * 59)
    }

    @Test func jitterSpansMinusToPlusTwentyPercent() {
        for (random, factor) in [(0.0, 0.8), (0.5, 1.0), (0.999_999, 1.2)] {
            var schedule = PollSchedule(names: ["a"], interval: 100, requestsPerMinute: 600, now: 0)
            #expect(schedule.next(now: 0, wall: 0) == .fire(job: 0))
            schedule.finished(job: 0, outcome: .transientFailure, now: 10, random: random)
            guard case .wait(let until) = schedule.next(now: 10, wall: 10) else {
                Issue.record("not waiting")
                continue
            }
            #expect(abs(until - (10 + 100 * factor)) < 0.01, "random \(random): \(until)")
        }
    }

    @Test func unauthorizedKeepsTheNormalInterval() {
        var poller = VirtualPoller(names: ["a"], interval: 60, requestsPerMinute: 600)
        poller.run(until: 1000 + 600) { _, _ in .steadyFailure }
        #expect(poller.starts.count == 10)
    }

    @Test func rateLimitOnOneSourcePausesEverySourceThenResumes() {
        var poller = VirtualPoller(
            schedule: PollSchedule(
                specs: PollSchedule.specs(locations: 5, intervals: [60, 120]), sourceCount: 2, requestsPerMinute: 600,
                now: 1000))
        var hit: Double?
        poller.run(until: 1000 + 400) { job, time in
            // The second source (air pollution, say) answers 429 once.
            if hit == nil && job % 2 == 1 && time > 1000 + 60 {
                hit = time
                return .rateLimited(retryAfter: nil)
            }
            return .success
        }
        guard let hit else {
            Issue.record("no request of the second source after a minute")
            return
        }
        let during = poller.starts.filter { $0.time > hit && $0.time < hit + 60 }
        #expect(during.isEmpty, "nothing may start during the pause: \(during)")
        #expect(poller.starts.contains { $0.time >= hit + 60 && $0.time < hit + 70 && $0.job % 2 == 0 })
    }

    @Test func rateLimitHonoursRetryAfterAndGrowsWithoutIt() {
        var schedule = PollSchedule(names: ["a"], interval: 60, requestsPerMinute: 600, now: 0)
        _ = schedule.next(now: 0, wall: 0)
        schedule.finished(job: 0, outcome: .rateLimited(retryAfter: 90), now: 1, random: 0.5)
        #expect(schedule.pause(now: 1) == 90)
        #expect(schedule.next(now: 5, wall: 5) == .wait(until: 91))
        _ = schedule.next(now: 91, wall: 91)
        schedule.finished(job: 0, outcome: .rateLimited(retryAfter: nil), now: 92, random: 0.5)
        #expect(schedule.pause(now: 92) == 120)  // second strike: 60 s doubled
        var time = 92.0
        for _ in 0..<10 {
            time = schedule.pausedUntil
            #expect(schedule.next(now: time, wall: time) == .fire(job: 0))
            schedule.finished(job: 0, outcome: .rateLimited(retryAfter: nil), now: time, random: 0.5)
        }
        #expect(schedule.pause(now: time) == 3600)
        _ = schedule.next(now: schedule.pausedUntil, wall: schedule.pausedUntil)
        schedule.finished(job: 0, outcome: .success, now: schedule.pausedUntil, random: 0.5)
        #expect(schedule.rateLimitStrikes == 0)
    }

    /// A server's Retry-After is held to [the first step, an hour]: `0` does not let a blocked key be
    /// retried at full pace, `1e18` does not stop polling for good (nor trap).
    @Test(arguments: [
        (0.0, 60.0), (-5, 60), (30, 60), (60, 60), (61.5, 61.5), (3599, 3599), (3600, 3600), (3601, 3600),
        (1_000_000_000_000, 3600), (1e18, 3600), (1e300, 3600), (.greatestFiniteMagnitude, 3600), (.infinity, 3600),
        (-.infinity, 60), (.nan, 60),
    ])
    func retryAfterIsClampedBetweenTheFirstStepAndAnHour(retryAfter: Double, pause: Double) {
        var schedule = PollSchedule(names: ["a"], interval: 60, requestsPerMinute: 600, now: 0)
        _ = schedule.next(now: 0, wall: 0)
        schedule.finished(job: 0, outcome: .rateLimited(retryAfter: retryAfter), now: 1, random: 0.5)
        #expect(schedule.pause(now: 1) == pause)
        #expect(schedule.next(now: 1, wall: 1) == .wait(until: 1 + pause))
    }

    @Test func reconfigureKeepsStateAndAddsNewJobsAtOnce() {
        var schedule = PollSchedule(names: ["a", "b"], interval: 600, requestsPerMinute: 600, now: 0)
        #expect(schedule.next(now: 0, wall: 0) == .fire(job: 0))
        schedule.finished(job: 0, outcome: .success, now: 0.1, random: 0.5)
        schedule.reconfigure(
            specs: ["a", "c"].map { .init(key: $0, kind: .poll, interval: 600) }, sourceCount: 1,
            requestsPerMinute: 600, now: 1)
        #expect(schedule.jobs.map(\.spec.key) == ["a", "c"])
        #expect(schedule.jobs[0].nextDue > 300, "a keeps its next phase")
        #expect(schedule.next(now: 1, wall: 1) == .fire(job: 1))
    }

    /// A reload that removes jobs with requests in flight: those requests still count until they answer.
    @Test func aReloadNeverLetsMoreRequestsRunAtOnce() {
        var schedule = PollSchedule(
            specs: (0..<20).map { .init(key: "old\($0)", kind: .poll, interval: 600) }, sourceCount: 1,
            requestsPerMinute: 1_000_000, now: 0, maxInFlight: 16)
        var time = 0.0
        while case .fire = schedule.next(now: time, wall: time) { time += 1 }
        #expect(schedule.inFlightCount == 16)
        schedule.reconfigure(
            specs: (0..<20).map { .init(key: "new\($0)", kind: .poll, interval: 600) }, sourceCount: 1,
            requestsPerMinute: 1_000_000,
            now: time)
        #expect(schedule.next(now: time + 1, wall: time + 1) == .idle, "16 requests are still out")
        for _ in 0..<4 { schedule.orphanFinished() }
        var fired = 0
        while case .fire = schedule.next(now: time + 2 + Double(fired), wall: time + 2 + Double(fired)) { fired += 1 }
        #expect(fired == 4)
    }

    /// Starts every job it may until the schedule waits past `end` or idles; `hangs` says which
    /// jobs' requests never answer, the others answer at once. Returns the starts per slot.
    static func startAll(_ schedule: inout PollSchedule, slots: Int, until end: Double, hangs: (Int) -> Bool) -> [Int] {
        var started = [Int](repeating: 0, count: slots)
        var time = 0.0
        while time <= end {
            switch schedule.next(now: time, wall: time) {
            case .fire(let job):
                started[job % slots] += 1
                if !hangs(job) { schedule.finished(job: job, outcome: .success, now: time, random: 0.5) }
            case .wait(let until): time = until
            case .idle: return started
            }
        }
        return started
    }

    /// A source whose endpoint hangs holds its share of the 16 requests in flight, not all of them:
    /// 60 places' air quality all go while the weather's requests never answer.
    @Test func aHangingSourceHoldsOnlyItsShareOfTheRequestsInFlight() {
        var schedule = PollSchedule(
            specs: PollSchedule.specs(locations: 60, intervals: [3600, 600]), sourceCount: 2, requestsPerMinute: 6000,
            now: 0)
        #expect(schedule.shares == [8, 8])
        let started = Self.startAll(&schedule, slots: 2, until: 60) { $0 % 2 == 1 }
        #expect(started == [60, 8], "every place's air quality; the weather holds 8 of the 16")
        #expect(schedule.inFlightCount == 8 && schedule.inFlightBySlot == [0, 8])
        // Three sources: 6, 5 and 5; one alone takes all 16.
        let three = PollSchedule(
            specs: PollSchedule.specs(locations: 4, intervals: [600, 600, 600]), sourceCount: 3, requestsPerMinute: 60,
            now: 0)
        #expect(three.shares == [6, 5, 5])
        #expect(PollSchedule(names: ["a"], interval: 600, requestsPerMinute: 60, now: 0).shares == [16])
    }

    /// A resolver that has found every place gives its share to the sources that poll; a source
    /// switched off (a stand-in covers it) takes none.
    @Test func sharesFollowTheSourcesThatStillSend() {
        // Location 0 is resolved by name; 23 others have coordinates. Every weather request hangs.
        let specs: [PollSchedule.Spec] = (0..<24).flatMap { location -> [PollSchedule.Spec] in
            [
                .init(key: "L\(location)/geocoding", kind: location == 0 ? .resolve : .none, interval: 3600),
                .init(key: "L\(location)/weather", kind: .poll, interval: 600, waiting: location == 0),
            ]
        }
        var schedule = PollSchedule(specs: specs, sourceCount: 2, requestsPerMinute: 6000, now: 0)
        #expect(schedule.shares == [8, 8])
        #expect(Self.startAll(&schedule, slots: 2, until: 60) { _ in true } == [1, 8], "the resolver hangs too")
        schedule.finished(job: 0, outcome: .success, now: 1, random: 0.5)
        #expect(schedule.shares == [0, 16])
        #expect(Self.startAll(&schedule, slots: 2, until: 60) { _ in true } == [0, 8], "8 more weather requests")
        #expect(schedule.inFlightCount == 16)

        var standIn = PollSchedule(
            specs: PollSchedule.specs(locations: 4, intervals: [600, 600, 600]), sourceCount: 3, requestsPerMinute: 60,
            now: 0)
        standIn.setSlot(1, on: false, now: 0)
        #expect(standIn.shares == [8, 0, 8])
    }

    @Test func neverTwoRequestsForOneJobAtOnce() {
        var schedule = PollSchedule(names: ["a"], interval: 1, requestsPerMinute: 6000, now: 0)
        #expect(schedule.next(now: 0, wall: 0) == .fire(job: 0))
        #expect(schedule.next(now: 100, wall: 100) == .idle)
    }

    /// A place given by name: its resolver runs first and once; its polling jobs wait for it.
    @Test func pollingWaitsForTheResolverWhichRunsOnce() {
        let specs: [PollSchedule.Spec] = [
            .init(key: "paris/geocoding", kind: .resolve, interval: 3600),
            .init(key: "paris/weather", kind: .poll, interval: 600, waiting: true),
            .init(key: "oslo/geocoding", kind: .none, interval: 3600),
            .init(key: "oslo/weather", kind: .poll, interval: 600),
        ]
        var schedule = PollSchedule(specs: specs, sourceCount: 2, requestsPerMinute: 600, now: 0)
        #expect(schedule.next(now: 0, wall: 0) == .fire(job: 0))
        #expect(schedule.next(now: 1, wall: 1) == .fire(job: 3))
        #expect(schedule.next(now: 2, wall: 2) == .idle, "Paris's weather waits for its coordinates")
        schedule.finished(job: 0, outcome: .success, now: 3, random: 0.5)
        schedule.unblock(location: 0, now: 3)
        #expect(schedule.next(now: 3, wall: 3) == .fire(job: 1))
        schedule.finished(job: 1, outcome: .success, now: 4, random: 0.5)
        schedule.finished(job: 3, outcome: .success, now: 4, random: 0.5)
        // Hours later the resolver has not run again; the weather has, every 10 minutes.
        var poller = VirtualPoller(schedule: schedule, now: 4)
        poller.run(until: 4 * 3600)
        #expect(poller.times(of: 0).isEmpty)
        #expect(poller.times(of: 1).count >= 23)
    }

    /// No match: retried at its interval (an hour), not sooner; at once after a reload.
    @Test func anUnresolvedPlaceIsRetriedHourlyAndAtOnceOnReload() {
        let specs: [PollSchedule.Spec] = [
            .init(key: "atlantis/geocoding", kind: .resolve, interval: 3600),
            .init(key: "atlantis/weather", kind: .poll, interval: 600, waiting: true),
        ]
        var poller = VirtualPoller(
            schedule: PollSchedule(specs: specs, sourceCount: 2, requestsPerMinute: 60, now: 0), now: 0)
        poller.run(until: 3 * 3600 - 1) { _, _ in .steadyFailure }
        #expect(poller.times(of: 0).map { ($0 / 100).rounded() } == [0, 36, 72])
        #expect(poller.times(of: 1).isEmpty)
        poller.schedule.reconfigure(specs: specs, sourceCount: 2, requestsPerMinute: 60, now: poller.now)
        #expect(poller.schedule.next(now: poller.now, wall: poller.now) == .fire(job: 0))
    }

    /// A transient failure of a resolver retries after a minute, doubling up to its interval.
    @Test func aResolverBacksOffFromAMinute() {
        let specs: [PollSchedule.Spec] = [.init(key: "x/geocoding", kind: .resolve, interval: 3600)]
        var poller = VirtualPoller(
            schedule: PollSchedule(specs: specs, sourceCount: 1, requestsPerMinute: 60, now: 0), now: 0)
        poller.run(until: 5 * 3600) { _, _ in .transientFailure }
        let gaps = zip(poller.times(of: 0).dropFirst(), poller.times(of: 0)).map { $0 - $1 }
        for (index, gap) in gaps.enumerated() {
            let expected = min(60 * Double(1 << min(index, 20)), 3600)
            #expect(gap >= expected * 0.8 - 0.5 && gap <= expected * 1.2 + 0.5, "gap \(index): \(gap)")
        }
    }
}

@Suite struct DueQueueTests {
    /// Against a sorted list: random inserts and removals, many equal times (ties go by position).
    @Test func popsInTimeThenPositionOrder() {
        var generator = SeededGenerator(seed: 7)
        let initial = (0..<200).map { (Double(Int.random(in: 0..<20, using: &generator)), $0) }
        var queue = DueQueue(initial)
        var reference = initial
        for step in 0..<5_000 {
            if Bool.random(using: &generator) || reference.isEmpty {
                let entry = (
                    Double(Int.random(in: 0..<50, using: &generator)), Int.random(in: 0..<1_000, using: &generator)
                )
                queue.insert(entry)
                reference.append(entry)
            } else {
                reference.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
                #expect(queue.first?.due == reference[0].0 && queue.first?.index == reference[0].1, "step \(step)")
                queue.removeFirst()
                reference.removeFirst()
            }
            #expect(queue.count == reference.count)
        }
    }
}
