/// Requests sent since 00:00 UTC (OpenWeather's day), per source and for the key, and the daily
/// limits they are held to. A source that reached its limit, or that OpenWeather said has spent the
/// day's quota (`spend`), sends nothing more until 00:00 UTC; when the key's limit is reached, no
/// source does. Counts are kept by source name (`Tally`), so a reload that changes the slots keeps them.
///
/// A poll holds the most it may send (`reserve`) from when it starts until it ends (`release`), so
/// polls that overlap never pass a limit together: each is let start only with room for all of its
/// requests beside what every poll in flight may still send.
///
/// Other processes may share the day (a backfill with the exporter's `--storage.path`, `SharedDay`):
/// what they counted is `others`, read from the shared file before each decision (`absorb`), and
/// what this one holds is written back (`shared`) before a request of it leaves.
struct DailyBudget: Equatable {
    static let day = 86_400.0

    /// The UTC day the counts are of: days since the epoch.
    private(set) var day: Int
    /// Requests this process sent today.
    private(set) var sent = Tally()
    /// Sources OpenWeather refused for the rest of `day` (a 429 that says the day's quota is spent).
    private(set) var spent: Set<String> = []
    /// Per source name; a source absent has no limit of its own.
    private(set) var limits: [String: Int] = [:]
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

    /// No limits until `configure`.
    init(wall: Double) { day = Self.day(of: wall) }

    /// A plan's limits (a reload may change them); the counts stay.
    mutating func configure(limits: [String: Int], keyLimit: Int?) {
        guard limits != self.limits || keyLimit != self.keyLimit else { return }
        self.limits = limits
        self.keyLimit = keyLimit
        revision += 1
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

    /// Requests of `source` counted today, other processes' included.
    func count(of source: String) -> Int { sent[source] + others[source] }

    /// Requests counted today, all sources and other processes' included.
    var dayTotal: Int { sent.total + others.total }

    var keyExhausted: Bool { keyLimit.map { dayTotal >= $0 } ?? false }

    /// `source` may send `requests` more today, under its own limit and the key's, beside what polls
    /// in flight may still send (it may send none once OpenWeather said its day is spent).
    func allows(_ source: String, _ requests: Int) -> Bool {
        hasRoom(source, requests + reserved[source], keyRequests: requests + reserved.total)
    }

    /// The day's counts alone leave `source` room for `requests` (polls in flight may still take it):
    /// false means nothing more today.
    func hasRoom(_ source: String, _ requests: Int) -> Bool {
        hasRoom(source, requests, keyRequests: requests)
    }

    private func hasRoom(_ source: String, _ requests: Int, keyRequests: Int) -> Bool {
        !spent.contains(source) && (limits[source].map { count(of: source) + requests <= $0 } ?? true)
            && (keyLimit.map { dayTotal + keyRequests <= $0 } ?? true)
    }

    /// One request sent; `reserved`: one its poll held (`reserve`), which it now uses.
    mutating func record(_ source: String, reserved fromReservation: Bool = false) {
        if fromReservation { release(source, 1) }
        sent.add(source, 1)
        revision += 1
    }

    /// One more request of `source` is about to leave: counted, out of the room its poll holds (`held`,
    /// lowered) or, past that, only when the day has room. False: it may not go.
    mutating func take(_ source: String, held: inout Int) -> Bool {
        if held > 0 {
            held -= 1
            record(source, reserved: true)
            return true
        }
        guard allows(source, 1) else { return false }
        record(source)
        return true
    }

    /// Holds room for `requests` a poll of `source` may send.
    mutating func reserve(_ source: String, _ requests: Int) {
        guard requests > 0 else { return }
        reserved.add(source, requests)
    }

    /// Gives back room a poll held and did not use.
    mutating func release(_ source: String, _ requests: Int) {
        reserved.remove(source, upTo: requests)
    }

    /// The counts a restart must assume: what was sent, and what polls in flight may still send (a
    /// stop does not wait for every answer, and OpenWeather bills what was sent).
    var committed: Tally { sent + reserved }

    /// OpenWeather says `source`'s quota for the day is used up.
    mutating func spend(_ source: String) {
        if spent.insert(source).inserted { revision += 1 }
    }

    /// What an earlier run counted (from the state file): kept only when it is of this same day. It
    /// wrote that much to the shared day too, so it is this process's part there.
    mutating func restore(_ saved: SavedState.Daily) {
        guard saved.day == day else { return }
        sent.raise(to: Tally(saved))
        spent.formUnion(saved.spent)
        published = sent
        revision += 1
    }

    /// The shared day as read (nil: none yet, or unreadable: the last known `others` stay): what it
    /// holds beyond this process's part is the others'.
    mutating func absorb(_ shared: SavedState.Daily?) {
        guard let shared else { return }
        // Another process saw 00:00 UTC first: the day it started is this one's too.
        if shared.day > day { advance(to: Double(shared.day) * Self.day) }
        guard shared.day == day else { return }
        let others = Tally(shared).beyond(published)
        let newlySpent = Set(shared.spent).subtracting(spent)
        guard others != self.others || !newlySpent.isEmpty else { return }
        self.others = others
        spent.formUnion(newlySpent)
        revision += 1
    }

    /// The shared day to write back: the others' counts and this process's committed ones (held room as
    /// spent), which become its part.
    mutating func shared() -> SavedState.Daily {
        published = committed
        return (published + others).saved(day: day, spent: spent)
    }
}
