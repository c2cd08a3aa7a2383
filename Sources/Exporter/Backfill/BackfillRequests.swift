import Glibc
import OpenWeather
import Platform

/// Where a backfill reads the time and waits: the system's clock, or one a test moves by hand.
protocol BackfillTime: Sendable {
    /// Unix seconds.
    func now() -> Double
    /// Returns at `time` (at once when it has passed).
    func sleep(until time: Double)
}

struct SystemBackfillTime: BackfillTime {
    func now() -> Double { SystemClock.wallSeconds() }

    func sleep(until time: Double) {
        var left = time - now()
        while left > 0 {
            var wait = timespec(tv_sec: Int(left), tv_nsec: Int((left - left.rounded(.down)) * 1e9))
            nanosleep(&wait, nil)
            left = time - now()
        }
    }
}

/// How a backfill's requests leave, by the exporter's rules: paced by its per-minute budget
/// (`RequestBudget`), each counted against the day's allowances (`DailyBudget`) where it leaves, the
/// client's resends included, within the room its location holds.
struct BackfillRequests {
    /// What a backfill's requests are counted as: the source the exporter counts the same endpoint's
    /// requests under (timemachine is billed as One Call). Its raw value is its slot in `daily`.
    enum Counted: Int, CaseIterable {
        case geocoding, oneCall, airPollution

        var name: String {
            switch self {
            case .geocoding: GeocodingSource.name
            case .oneCall: OneCallSource.name
            case .airPollution: AirPollutionSource.name
            }
        }
    }

    var budget: RequestBudget
    var daily: DailyBudget
    /// Room the location under way holds, by `Counted` (`DailyBudget.reserve`).
    var held = [Int](repeating: 0, count: Counted.allCases.count)
    /// 429s in a row: the exporter's pause doubles with them.
    var rateLimitStrikes = 0
    /// A line said the shared day's file was not taken (`Backfill.sharing`): once a run.
    var sharedDayOddReported = false

    init(perMinute: Int, oneCallPerDay: Int?, keyPerDay: Int?, wall: Double) {
        budget = RequestBudget(limitPerMinute: max(perMinute, 1))
        daily = DailyBudget(wall: wall)
        daily.configure(
            sources: Counted.allCases.map(\.name),
            limits: Counted.allCases.map { $0 == .oneCall ? oneCallPerDay : nil }, keyLimit: keyPerDay)
    }

    /// Holds the day's room for a location's requests, by `Counted`.
    mutating func hold(_ requests: [Int]) {
        for (slot, count) in requests.enumerated() where count > 0 {
            daily.reserve(slot, count)
            held[slot] += count
        }
    }

    /// Gives back what the location held and did not send.
    mutating func releaseHeld() {
        for (slot, count) in held.enumerated() { daily.release(slot, count) }
        held = held.map { _ in 0 }
    }

    /// One request counted as `counted` leaves at `now`: counted. False when the day has no room for it.
    mutating func send(_ counted: Counted, now: Double) -> Bool {
        guard daily.take(counted.rawValue, held: &held[counted.rawValue]) else { return false }
        budget.record(start: now)
        return true
    }
}
