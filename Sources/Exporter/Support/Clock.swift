import Glibc
import Platform

/// Time as users read it. The clocks themselves are `Platform.SystemClock`'s.
enum Clock {
    /// `2026-11-29T16:00:00.123Z`. A time outside years 1...9999 (a state file's, say) is shown as
    /// the nearest end of that range, and NaN as the epoch: converting them to `time_t` would trap.
    static func rfc3339(_ seconds: Double) -> String {
        let seconds = seconds.isNaN ? 0 : min(max(seconds, -62_135_596_800), 253_402_300_799)
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        let millis = Int((seconds - seconds.rounded(.down)) * 1000)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
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
