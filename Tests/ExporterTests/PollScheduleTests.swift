import TestSupport
import Testing

@testable import Exporter

/// Runs the schedule on a virtual clock: requests complete after `latency`
/// with the outcome `outcome(name, time)` gives.
struct VirtualPoller {
    var schedule: PollSchedule
    var now: Double
    var starts: [(time: Double, name: String)] = []
    var latency = 0.2
    var pending: [(done: Double, name: String)] = []

    init(names: [String], interval: Double, requestsPerMinute: Int, now: Double = 1000) {
        schedule = PollSchedule(names: names, interval: interval, requestsPerMinute: requestsPerMinute, now: now)
        self.now = now
    }

    mutating func run(until end: Double, outcome: (String, Double) -> PollSchedule.Outcome = { _, _ in .success }) {
        var generator = SeededGenerator(seed: 7)
        while now < end {
            pending.sort { $0.done < $1.done }
            while let first = pending.first, first.done <= now {
                pending.removeFirst()
                schedule.finished(name: first.name, outcome: outcome(first.name, first.done), now: first.done,
                                  random: Double.random(in: 0..<1, using: &generator))
            }
            switch schedule.next(now: now) {
            case .fire(let name):
                starts.append((now, name))
                pending.append((now + latency, name))
            case .wait(let until):
                now = min(until, pending.map(\.done).min() ?? until, end)
            case .idle:
                now = min(pending.map(\.done).min() ?? end, end)
            }
        }
    }

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
        let names = (0..<10).map { "L\($0)" }
        var poller = VirtualPoller(names: names, interval: 600, requestsPerMinute: 60)
        poller.run(until: 1000 + 600 * 8)
        // After the first round: one request a minute, evenly spread.
        let steady = poller.starts.filter { $0.time >= 1000 + 600 && $0.time < 1000 + 600 * 7 }
        for name in names { #expect(steady.filter { $0.name == name }.count == 6) }
        let gaps = zip(steady.dropFirst(), steady).map { $0.time - $1.time }
        #expect(gaps.allSatisfy { abs($0 - 60) < 1.5 }, "\(gaps)")
        for name in names {
            let times = poller.starts.filter { $0.name == name }.map(\.time)
            let intervals = zip(times.dropFirst(), times).map { $0 - $1 }
            #expect(intervals.dropFirst().allSatisfy { abs($0 - 600) < 1.5 })
            #expect(intervals.allSatisfy { $0 >= 300 }, "\(name): \(intervals)")
        }
    }

    @Test func twoThousandLocationsNeverExceedTheBudget() {
        let names = (0..<2000).map { "L\($0)" }
        let interval = 61.0 * 2000 / 60  // what Configuration stretches the interval to
        var poller = VirtualPoller(names: names, interval: interval, requestsPerMinute: 60)
        poller.run(until: 1000 + interval * 2.5)
        #expect(poller.maxInAnyWindow(60) <= 60)
        #expect(poller.starts.count > 4000)
        let gaps = zip(poller.starts.dropFirst(), poller.starts).map { $0.time - $1.time }
        #expect(gaps.min()! >= 61.0 / 60 - 1e-9)
        #expect(gaps.max()! < 1.1, "requests should be spread evenly, not bunched")
    }

    @Test func transientFailuresBackOffWithJitterAndOthersAreUnaffected() {
        var poller = VirtualPoller(names: ["bad", "good"], interval: 60, requestsPerMinute: 600)
        poller.run(until: 1000 + 3600) { name, _ in name == "bad" ? .transientFailure : .success }
        let bad = poller.starts.filter { $0.name == "bad" }.map(\.time)
        let good = poller.starts.filter { $0.name == "good" }.map(\.time)
        let gaps = zip(bad.dropFirst(), bad).map { $0 - $1 }
        // 60, 120, 240, 480, 960, then capped at one hour: each ±20%.
        #expect(gaps.count >= 4)
        for (index, gap) in gaps.prefix(5).enumerated() {
            let expected = min(60 * Double(1 << index), 3600)
            #expect(gap >= expected * 0.8 - 0.5 && gap <= expected * 1.2 + 0.5, "gap \(index): \(gap)")
        }
        #expect(good.count >= 59)
    }

    @Test func unauthorizedKeepsTheNormalInterval() {
        var poller = VirtualPoller(names: ["a"], interval: 60, requestsPerMinute: 600)
        poller.run(until: 1000 + 600) { _, _ in .steadyFailure }
        #expect(poller.starts.count == 10)
    }

    @Test func rateLimitPausesEveryLocationThenResumes() {
        var poller = VirtualPoller(names: (0..<5).map { "L\($0)" }, interval: 60, requestsPerMinute: 600)
        var hit: Double?
        poller.run(until: 1000 + 400) { _, time in
            if hit == nil && time > 1000 + 60 { hit = time; return .rateLimited(retryAfter: nil) }
            return .success
        }
        guard let hit else { Issue.record("no request after a minute"); return }
        let during = poller.starts.filter { $0.time > hit && $0.time < hit + 60 }
        #expect(during.isEmpty, "nothing may start during the pause: \(during)")
        #expect(poller.starts.contains { $0.time >= hit + 60 && $0.time < hit + 70 })
    }

    @Test func rateLimitHonoursRetryAfterAndGrowsWithoutIt() {
        var schedule = PollSchedule(names: ["a"], interval: 60, requestsPerMinute: 600, now: 0)
        _ = schedule.next(now: 0)
        schedule.finished(name: "a", outcome: .rateLimited(retryAfter: 7), now: 1, random: 0.5)
        #expect(schedule.pause(now: 1) == 7)
        #expect(schedule.next(now: 5) == .wait(until: 8))
        _ = schedule.next(now: 8)
        schedule.finished(name: "a", outcome: .rateLimited(retryAfter: nil), now: 9, random: 0.5)
        #expect(schedule.pause(now: 9) == 120)  // second strike: 60 s doubled
        var time = 9.0
        for _ in 0..<10 {
            time = schedule.pausedUntil
            #expect(schedule.next(now: time) == .fire(name: "a"))
            schedule.finished(name: "a", outcome: .rateLimited(retryAfter: nil), now: time, random: 0.5)
        }
        #expect(schedule.pause(now: time) == 3600)
        _ = schedule.next(now: schedule.pausedUntil)
        schedule.finished(name: "a", outcome: .success, now: schedule.pausedUntil, random: 0.5)
        #expect(schedule.rateLimitStrikes == 0)
    }

    @Test func reconfigureKeepsStateAndAddsNewLocationsAtOnce() {
        var schedule = PollSchedule(names: ["a", "b"], interval: 600, requestsPerMinute: 600, now: 0)
        #expect(schedule.next(now: 0) == .fire(name: "a"))
        schedule.finished(name: "a", outcome: .success, now: 0.1, random: 0.5)
        schedule.reconfigure(names: ["a", "c"], interval: 600, requestsPerMinute: 600, now: 1)
        #expect(schedule.slots.map(\.name) == ["a", "c"])
        #expect(schedule.next(now: 1) == .fire(name: "c"))
        schedule.finished(name: "b", outcome: .success, now: 2, random: 0.5)  // a removed location: ignored
        #expect(schedule.slots.count == 2)
    }

    /// The poller finds a fired location by its position in the plan, so it must follow every reconfigure.
    @Test func positionIsWhereTheNameIsInTheNamesGiven() {
        var schedule = PollSchedule(names: ["a", "b", "c"], interval: 600, requestsPerMinute: 600, now: 0)
        #expect(["a", "b", "c", "zz"].map(schedule.position(of:)) == [0, 1, 2, nil])
        schedule.reconfigure(names: ["c", "d", "a"], interval: 600, requestsPerMinute: 600, now: 1)
        #expect(["a", "b", "c", "d"].map(schedule.position(of:)) == [2, nil, 0, 1])
    }

    @Test func neverTwoRequestsForOneLocationAtOnce() {
        var schedule = PollSchedule(names: ["a"], interval: 1, requestsPerMinute: 6000, now: 0)
        #expect(schedule.next(now: 0) == .fire(name: "a"))
        #expect(schedule.next(now: 100) == .idle)
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
                let entry = (Double(Int.random(in: 0..<50, using: &generator)), Int.random(in: 0..<1_000, using: &generator))
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
