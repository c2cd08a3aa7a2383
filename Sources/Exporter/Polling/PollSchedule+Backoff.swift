/// The waits after a failure: transient failures backed off with jitter, a 429's pause and how a
/// Retry-After is held, for the schedule and for backfill alike.
extension PollSchedule {
    static let firstRateLimitPause = 60.0
    static let maxRateLimitPause = 3600.0
    /// A resolver's first retry after a transient failure; it doubles up to its interval.
    static let firstResolverRetry = 60.0

    /// The wait before the next try after `failures` transient failures in a row: `first`, doubling up
    /// to `cap`, spread ±20 % (`random` in 0..<1) so that jobs failing together do not retry together.
    static func backoff(failures: Int, first: Double, cap: Double, random: Double) -> Double {
        min(first * pow2(failures - 1), cap) * (0.8 + 0.4 * random)
    }

    /// The pause after `strikes` 429s in a row without a Retry-After: a minute, doubling up to an hour.
    static func rateLimitBackoff(strikes: Int) -> Double {
        min(firstRateLimitPause * pow2(strikes - 1), maxRateLimitPause)
    }

    /// The server's Retry-After held to [the first step, an hour]: a `0` must not let a blocked key
    /// be retried at full pace, nor `1e18` stop polling for good (OpenWeather asks for an hour at most).
    static func rateLimitPause(retryAfter: Double?, backoff: Double) -> Double {
        guard let retryAfter, !retryAfter.isNaN else { return backoff }
        return min(max(retryAfter, firstRateLimitPause), maxRateLimitPause)
    }

    private static func pow2(_ exponent: Int) -> Double {
        exponent >= 30 ? Double(1 << 30) : Double(1 << max(exponent, 0))
    }
}
