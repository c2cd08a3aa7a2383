import Synchronization

/// `rate_limit` of the web config, as exporter-toolkit reads it: one request per `interval` on average, up
/// to `burst` at once.
struct RateLimitConfiguration: Equatable, Sendable {
    /// Nanoseconds between two requests; more than 0.
    var interval: Int64
    /// Requests let through at once after a quiet spell; at least 1.
    var burst: Int

    /// Go's `time.ParseDuration` (what the toolkit's YAML reads): `1s`, `1.5s`, `100ms`, `1h30m`, `0`.
    /// Nanoseconds, or nil when `text` is not of that form or exceeds Go's 292 years.
    static func goDuration(_ text: String) -> Int64? {
        if text == "0" { return 0 }
        let units: [(String, Double)] = [
            ("ns", 1), ("us", 1e3), ("µs", 1e3), ("μs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 6e10), ("h", 3.6e12),
        ]
        var rest = Substring(text)
        var total = 0.0
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { ($0.isASCII && $0.isNumber) || $0 == "." }
            guard !number.isEmpty, number != ".", number.filter({ $0 == "." }).count <= 1, let value = Double(number)
            else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { !(($0.isASCII && $0.isNumber) || $0 == ".") }
            guard let scale = units.first(where: { $0.0 == unit })?.1 else { return nil }
            rest = rest.dropFirst(unit.count)
            total += value * scale
        }
        guard total < 9.2e18 else { return nil }
        return Int64(total)
    }
}

/// The toolkit's token bucket (golang.org/x/time/rate), one for the whole server: full at start, a token
/// back every `interval`. Kept as the time at which the bucket would be full again (GCRA), so a check is
/// one compare-and-swap.
final class RateLimiter: Sendable {
    let configuration: RateLimitConfiguration
    /// Monotonic nanoseconds at which every token is back; 0: full.
    private let fullAt = Atomic<Int64>(0)

    /// Nil without a limit.
    init?(_ configuration: RateLimitConfiguration?) {
        guard let configuration, configuration.interval > 0, configuration.burst > 0 else { return nil }
        self.configuration = configuration
    }

    /// Takes a token at `now` (monotonic nanoseconds) if there is one.
    func allow(now: Int64) -> Bool {
        let (span, spanOverflow) = configuration.interval.multipliedReportingOverflow(
            by: Int64(configuration.burst - 1))
        let capacity = spanOverflow ? Int64.max : span
        var current = fullAt.load(ordering: .relaxed)
        while true {
            let from = max(current, now)
            // Full again more than `burst - 1` intervals from now: no token left.
            guard from - now <= capacity else { return false }
            let (next, overflow) = from.addingReportingOverflow(configuration.interval)
            let (exchanged, original) = fullAt.compareExchange(
                expected: current, desired: overflow ? Int64.max : next, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }
}
