/// Requests sent since 00:00 UTC (OpenWeather's day), per source and for the key, and the daily
/// limits they are held to. A source that reached its limit, or that OpenWeather said has spent the
/// day's quota (`spend`), sends nothing more until 00:00 UTC; when the key's limit is reached, no
/// source does. Sources are counted by slot, the poller's own (`configure`); their names are read
/// and written only where the counts leave or enter: the state file, the shared day, a reload.
///
/// A poll holds the most it may send (`reserve`) from when it starts until it ends (`release`), so
/// polls that overlap never pass a limit together: each is let start only with room for all of its
/// requests beside what every poll in flight may still send.
///
/// Other processes may share the day (a backfill with the exporter's `--storage.path`, `SharedDay`):
/// what they counted is `others`, read from the shared file before each decision (`absorb`), and
/// what this one holds is written back (`shared`) before a request of it leaves. The day is always
/// this process's own, by its clock: a saved or shared day of another is not today's counts.
struct DailyBudget: Equatable {
    static let day = 86_400.0
    /// The most source names a day counts. The exporter has 7 sources and a backfill counts 3 of them;
    /// a day keeps them, those a reload dropped, and those of other versions sharing the directory. 64
    /// leaves room for all of that many times over, and keeps a day a few KB: a saved or shared day
    /// that names more is not one this exporter wrote (`SharedDay` does not take it), and names past
    /// 64 are not learnt from a saved day (its total still counts them).
    static let maxNames = 64

    /// The UTC day the counts are of: days since the epoch.
    private(set) var day: Int
    /// Requests this process sent today.
    private(set) var sent = Tally()
    /// Each slot's source name, as the state file and the shared day keep the counts: first the
    /// sources configured, in their slots; after them any other a saved or shared day counted, or a
    /// reload dropped, so its counts are kept and written back.
    private(set) var names: [String] = [] {
        didSet { slots = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first }) }
    }
    /// Each name's slot: a saved day's names are each looked up once, not searched for in `names`.
    private var slots: [String: Int] = [:]
    /// Slots OpenWeather refused for the rest of `day` (a 429 that says the day's quota is spent).
    private(set) var spent: Set<Int> = []
    /// Per slot; nil, or a slot past the end, has no limit of its own.
    private(set) var limits: [Int?] = []
    /// The key's limit, all sources together.
    private(set) var keyLimit: Int?
    /// Requests polls in flight may still send: not counted yet, but no room for anyone else. They
    /// outlive a day's end (the polls send them on the new day).
    private(set) var reserved = Tally()
    /// Rises with every change, so the poller tells the store only when there is something new.
    private(set) var revision = 0
    /// What other processes sharing the day counted (`absorb`).
    private(set) var others = Tally()
    /// This process's part of the shared day as it last wrote it (`shared`): the shared file less it is
    /// what the others counted.
    private(set) var published = Tally()

    /// The shared day cannot be read or written (`SharedDay`: not a regular file, say): what the others
    /// sent is unknown, so no source under a daily limit (its own or the key's) may send until it can be.
    /// When it is tried next (monotonic seconds): the jobs held wait until then.
    private(set) var withheldUntil: Double?
    var withheld: Bool { withheldUntil != nil }

    /// No limits until `configure`.
    init(wall: Double) { day = Self.day(of: wall) }

    /// The sources counted, by name in slot order, and their limits (a reload may change either): each
    /// source's counts move with it to its new slot.
    mutating func configure(sources: [String], limits: [Int?], keyLimit: Int?) {
        if !names.starts(with: sources) {
            let kept = names.filter { !sources.contains($0) }
            let order = SlotOrder(sources + kept, from: names)
            names = sources + kept
            sent = sent.reordered(order)
            reserved = reserved.reordered(order)
            others = others.reordered(order)
            published = published.reordered(order)
            spent = order.moved(spent)
            revision += 1
        }
        guard limits != self.limits || keyLimit != self.keyLimit else { return }
        self.limits = limits
        self.keyLimit = keyLimit
        revision += 1
    }

    /// The slot counting `name`: a new one after the others when no slot does yet.
    mutating func slot(named name: String) -> Int {
        if let slot = slots[name] { return slot }
        names.append(name)
        return names.count - 1
    }

    /// The slot counting `name` from a saved day: none for a name new to this budget once it counts
    /// `maxNames`, so a saved day cannot grow it without end.
    private mutating func savedSlot(named name: String) -> Int? {
        slots[name] ?? (names.count < Self.maxNames ? slot(named: name) : nil)
    }

    /// A saved day's counts (the state file's or the shared one) in this budget's slots, none below zero.
    private mutating func tally(_ saved: SavedState.Daily) -> Tally {
        var tally = Tally()
        for (name, count) in saved.counts {
            guard let slot = savedSlot(named: name) else { continue }
            if count > tally[slot] { tally.add(slot, count - tally[slot]) }
        }
        tally.set(total: saved.total)
        return tally
    }

    /// `tally` as a state file keeps a day: by name, in name order.
    private func saved(_ tally: Tally) -> SavedState.Daily {
        SavedState.Daily(
            day: day, total: tally.total,
            counts: names.indices.filter { tally[$0] > 0 }.map { (names[$0], tally[$0]) }
                .sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) },
            spent: spent.map { names[$0] }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    static func day(of wall: Double) -> Int { Int((wall / Self.day).rounded(.down)) }

    /// When the day of `wall` ends: the next 00:00 UTC.
    static func nextMidnight(after wall: Double) -> Double { Double(day(of: wall) + 1) * Self.day }

    /// Starts a new day's counts once `wall` is past 00:00 UTC; a clock set back does not bring an
    /// earlier day's counts back nor start another.
    mutating func advance(to wall: Double) {
        let today = Self.day(of: wall)
        guard today > day else { return }
        day = today
        sent = Tally()
        spent = []
        others = Tally()
        published = Tally()
        revision += 1
    }

    /// Requests this process sent today, all sources together.
    var total: Int { sent.total }

    /// Requests of the source in `slot` counted today, other processes' included.
    func count(of slot: Int) -> Int { sent[slot] + others[slot] }

    /// Its own limit of requests today; nil for none.
    func limit(of slot: Int) -> Int? { slot < limits.count ? limits[slot] : nil }

    /// By name, for the metrics (a reload may have moved the slots since the labels were laid out).
    func count(named name: String) -> Int { slots[name].map(count(of:)) ?? 0 }
    func limit(named name: String) -> Int? { slots[name].flatMap(limit(of:)) }

    /// The sources this process sent requests of today, by name.
    var namesSent: [String] { names.indices.filter { sent[$0] > 0 }.map { names[$0] } }

    /// Requests counted today, all sources and other processes' included.
    var dayTotal: Int { sent.total + others.total }

    var keyExhausted: Bool { keyLimit.map { dayTotal >= $0 } ?? false }

    /// A daily limit holds the source in `slot`: its own, or the key's.
    func governs(_ slot: Int) -> Bool { limit(of: slot) != nil || keyLimit != nil }

    /// The shared day cannot be used until at least `until` (nil: it can).
    mutating func withhold(until: Double?) {
        if (until != nil) != withheld { revision += 1 }
        withheldUntil = until
    }

    /// The source in `slot` may send `requests` more today, under its own limit and the key's, beside what polls
    /// in flight may still send (it may send none once OpenWeather said its day is spent).
    func allows(_ slot: Int, _ requests: Int) -> Bool {
        hasRoom(slot, requests + reserved[slot], keyRequests: requests + reserved.total)
    }

    /// The day's counts alone leave the source in `slot` room for `requests` (polls in flight may still take it):
    /// false means nothing more today.
    func hasRoom(_ slot: Int, _ requests: Int) -> Bool {
        hasRoom(slot, requests, keyRequests: requests)
    }

    private func hasRoom(_ slot: Int, _ requests: Int, keyRequests: Int) -> Bool {
        !spent.contains(slot) && !(withheld && governs(slot))
            && (limit(of: slot).map { count(of: slot) + requests <= $0 } ?? true)
            && (keyLimit.map { dayTotal + keyRequests <= $0 } ?? true)
    }

    /// One request sent; `reserved`: one its poll held (`reserve`), which it now uses.
    mutating func record(_ slot: Int, reserved fromReservation: Bool = false) {
        if fromReservation { release(slot, 1) }
        sent.add(slot, 1)
        revision += 1
    }

    /// One more request of the source in `slot` is about to leave: counted, out of the room its poll holds (`held`,
    /// lowered) or, past that, only when the day has room. False: it may not go.
    mutating func take(_ slot: Int, held: inout Int) -> Bool {
        if held > 0 {
            held -= 1
            record(slot, reserved: true)
            return true
        }
        guard allows(slot, 1) else { return false }
        record(slot)
        return true
    }

    /// Holds room for `requests` a poll of the source in `slot` may send.
    mutating func reserve(_ slot: Int, _ requests: Int) {
        guard requests > 0 else { return }
        reserved.add(slot, requests)
    }

    /// Gives back room a poll held and did not use.
    mutating func release(_ slot: Int, _ requests: Int) {
        reserved.remove(slot, upTo: requests)
    }

    /// The counts a restart must assume: what was sent, and what polls in flight may still send (a
    /// stop does not wait for every answer, and OpenWeather bills what was sent).
    var committed: Tally { sent + reserved }

    /// OpenWeather says the quota of the source in `slot` for the day is used up.
    mutating func spend(_ slot: Int) {
        if spent.insert(slot).inserted { revision += 1 }
    }

    /// What an earlier run counted (from the state file): kept only when it is of this same day. It
    /// wrote that much to the shared day too, so it is this process's part there.
    mutating func restore(_ saved: SavedState.Daily) {
        guard saved.day == day else { return }
        sent.raise(to: tally(saved))
        spent.formUnion(saved.spent.compactMap { savedSlot(named: $0) })
        published = sent
        revision += 1
    }

    /// The shared day as read (nil: none yet, or unreadable: the last known `others` stay): what it
    /// holds beyond this process's part is the others'. A day other than this process's is not taken:
    /// an earlier one is over, and a later one is not today by this process's clock (processes sharing
    /// the day advance each by its own clock, `advance`, under the file's lock, so on one host none writes
    /// a day the others have not reached): a clock elsewhere ahead, or a file written by hand. What this
    /// process sent today stays counted whatever the file says, and `shared` writes its own day over it.
    /// Returns false for a later day, which the caller warns of.
    @discardableResult
    mutating func absorb(_ shared: SavedState.Daily?) -> Bool {
        guard let shared else { return true }
        guard shared.day == day else { return shared.day < day }
        let others = tally(shared).beyond(published)
        let newlySpent = Set(shared.spent.compactMap { savedSlot(named: $0) }).subtracting(spent)
        guard others != self.others || !newlySpent.isEmpty else { return true }
        self.others = others
        spent.formUnion(newlySpent)
        revision += 1
        return true
    }

    /// The shared day to write back: the others' counts and this process's committed ones (held room as
    /// spent), which become its part.
    mutating func shared() -> SavedState.Daily {
        published = committed
        return saved(published + others)
    }

    /// What a restart must assume (`committed`), as the state file keeps it.
    var savedDay: SavedState.Daily { saved(committed) }
}
