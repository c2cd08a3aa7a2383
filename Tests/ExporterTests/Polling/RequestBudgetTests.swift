import TestSupport
import Testing

@testable import Exporter

@Suite struct RequestBudgetTests {
    /// The rule written the plain way: the last `limit` starts, whatever their age.
    struct Reference {
        let limit: Int
        var starts: [Double] = []

        func nextAllowed() -> Double {
            guard let last = starts.last else { return -.infinity }
            var earliest = last + 61.0 / Double(limit)
            if starts.count >= limit { earliest = max(earliest, starts[starts.count - limit] + 60) }
            return earliest
        }

        mutating func record(start: Double) {
            starts.append(start)
            if starts.count > limit { starts.removeFirst(starts.count - limit) }
        }
    }

    /// Random gaps, bursts and pauses: the budget that forgets old starts agrees with the plain rule.
    @Test(arguments: [1, 3, 60, 1_000])
    func agreesWithThePlainRule(limit: Int) {
        var generator = SeededGenerator(seed: UInt64(limit))
        var budget = RequestBudget(limitPerMinute: limit)
        var reference = Reference(limit: limit)
        var now = 1_000.0
        for step in 0..<20_000 {
            #expect(budget.nextAllowed() == reference.nextAllowed(), "step \(step)")
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: now += Double.random(in: 30...90, using: &generator)  // a pause
            case 1: break  // a burst: the same instant
            default: now = max(now, reference.nextAllowed()) + Double.random(in: 0...0.5, using: &generator)
            }
            budget.record(start: now)
            reference.record(start: now)
        }
        #expect(budget.recentStarts.count <= limit)
    }

    /// With a high limit, only the last minute's starts are kept, not `limit` of them.
    @Test func keepsOnlyTheLastMinute() {
        var budget = RequestBudget(limitPerMinute: 100_000)
        for index in 0..<300_000 { budget.record(start: Double(index) * 0.001) }
        #expect(budget.recentStarts.count == 60_000)
        #expect(budget.recentStarts.first == Double(240_000) * 0.001)  // 60 s before the last start is out
    }
}
