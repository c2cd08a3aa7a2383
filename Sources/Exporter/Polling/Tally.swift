/// Requests by source and in all. By source as the daily budget's slots (`DailyBudget.names`), so
/// counting is an array's add; the total is kept on its own (a restore or the shared day may hold a
/// total beyond the sources counted). The daily budget keeps four: sent, held, the other processes',
/// and its own part of the shared day.
struct Tally: Equatable {
    /// By slot; a slot past the end counts 0 (slots come with names the budget learns).
    private(set) var bySlot: [Int] = []
    private(set) var total = 0

    init() {}

    subscript(slot: Int) -> Int { slot < bySlot.count ? bySlot[slot] : 0 }

    mutating func add(_ slot: Int, _ count: Int) {
        if slot >= bySlot.count { bySlot += repeatElement(0, count: slot + 1 - bySlot.count) }
        bySlot[slot] += count
        total += count
    }

    /// Takes off up to `count` of `slot`'s (none below zero); returns how many it took.
    @discardableResult
    mutating func remove(_ slot: Int, upTo count: Int) -> Int {
        let taken = min(max(count, 0), self[slot])
        guard taken > 0 else { return 0 }
        bySlot[slot] -= taken
        total -= taken
        return taken
    }

    /// The total as a saved day gives it (none below zero), whatever the slots add up to.
    mutating func set(total: Int) { self.total = max(total, 0) }

    /// The larger of each count.
    mutating func raise(to other: Tally) {
        let total = max(self.total, other.total)
        for slot in other.bySlot.indices where other[slot] > self[slot] { add(slot, other[slot] - self[slot]) }
        self.total = total
    }

    static func + (lhs: Tally, rhs: Tally) -> Tally {
        var sum = lhs
        for slot in rhs.bySlot.indices { sum.add(slot, rhs[slot]) }
        sum.total = lhs.total + rhs.total
        return sum
    }

    /// What `self` holds beyond `other`, per slot and in all (none below zero).
    func beyond(_ other: Tally) -> Tally {
        var rest = Tally()
        for slot in bySlot.indices where self[slot] > other[slot] { rest.add(slot, self[slot] - other[slot]) }
        rest.total = max(total - other.total, 0)
        return rest
    }

    /// The same counts in the new slots (a new source's: 0).
    func reordered(_ order: SlotOrder) -> Tally {
        var moved = Tally()
        for (slot, old) in order.old.enumerated() { if let old, self[old] > 0 { moved.add(slot, self[old]) } }
        moved.total = total
        return moved
    }

    /// Equal counts: a slot past the end is 0, so the arrays' lengths do not matter.
    static func == (lhs: Tally, rhs: Tally) -> Bool {
        lhs.total == rhs.total && (0..<max(lhs.bySlot.count, rhs.bySlot.count)).allSatisfy { lhs[$0] == rhs[$0] }
    }
}
