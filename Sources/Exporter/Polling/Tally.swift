/// Requests by source name and in all (the key's count, kept on its own: a restore or the shared day
/// may hold a total beyond the sources listed). The daily budget keeps four: sent, held, the other
/// processes', and its own part of the shared day. Names, as the state file and the shared day keep
/// them, so a reload that changes the slots keeps the counts.
struct Tally: Equatable {
    private(set) var bySource: [String: Int] = [:]
    private(set) var total = 0

    init() {}

    /// The counts of a saved day (the state file's or the shared one), none below zero.
    init(_ saved: SavedState.Daily) {
        for (source, count) in saved.counts { bySource[source] = max(bySource[source] ?? 0, max(count, 0)) }
        total = max(saved.total, 0)
    }

    subscript(source: String) -> Int { bySource[source] ?? 0 }

    var sources: Dictionary<String, Int>.Keys { bySource.keys }

    mutating func add(_ source: String, _ count: Int) {
        bySource[source, default: 0] += count
        total += count
    }

    /// Takes off up to `count` of `source`'s (none below zero); returns how many it took.
    @discardableResult
    mutating func remove(_ source: String, upTo count: Int) -> Int {
        let taken = min(max(count, 0), self[source])
        guard taken > 0 else { return 0 }
        bySource[source] = self[source] == taken ? nil : self[source] - taken
        total -= taken
        return taken
    }

    /// The larger of each count.
    mutating func raise(to other: Tally) {
        for (source, count) in other.bySource { bySource[source] = max(self[source], count) }
        total = max(total, other.total)
    }

    static func + (lhs: Tally, rhs: Tally) -> Tally {
        var sum = lhs
        sum.bySource.merge(rhs.bySource, uniquingKeysWith: +)
        sum.total += rhs.total
        return sum
    }

    /// What `self` holds beyond `other`, per source and in all (none below zero).
    func beyond(_ other: Tally) -> Tally {
        var rest = Tally()
        for (source, count) in bySource where count > other[source] { rest.bySource[source] = count - other[source] }
        rest.total = max(total - other.total, 0)
        return rest
    }

    /// As a state file keeps a day: sources in name order.
    func saved(day: Int, spent: Set<String>) -> SavedState.Daily {
        SavedState.Daily(
            day: day, total: total,
            counts: bySource.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value) },
            spent: spent.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }
}
