import Glibc
import Platform

/// Time as users read it. The clocks themselves are `Platform.SystemClock`'s.
enum Clock {
    /// `2026-11-29T16:00:00.123Z`. A time outside years 1...9999 (a state file's, say) is shown as
    /// the nearest end of that range, and NaN as the epoch: converting them to `time_t` would trap.
    static func rfc3339(_ seconds: Double) -> String {
        let seconds = seconds.isNaN ? 0 : min(max(seconds, -62_135_596_800), 253_402_300_799)
        let time = CivilTime(seconds: Int(seconds.rounded(.down)))
        let millis = Int((seconds - seconds.rounded(.down)) * 1000)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(time.year, 4))-\(pad(time.month, 2))-\(pad(time.day, 2))T"
            + "\(pad(time.hour, 2)):\(pad(time.minute, 2)):\(pad(time.second, 2)).\(pad(millis, 3))Z"
    }
}

/// Where the poller and the publisher read the time; tests pass a clock they move by hand.
protocol TimeSource: Sendable {
    /// Seconds on a clock that never jumps, for schedules and durations.
    func monotonic() -> Double
    /// Seconds since the epoch, for timestamps users see.
    func wall() -> Double
}

/// The system's clocks.
struct SystemTime: TimeSource {
    func monotonic() -> Double { SystemClock.monotonicSeconds() }
    func wall() -> Double { SystemClock.wallSeconds() }
}
