import Glibc

/// The system's clocks as `Double` seconds, read in one place for the exporter, the API client and
/// the simulator. Code that schedules takes its time from a clock passed in; this is what the real
/// one reads.
public enum SystemClock {
    /// Seconds since the epoch: timestamps users see, and what an HTTP-date is compared with.
    public static func wallSeconds() -> Double { seconds(CLOCK_REALTIME) }

    /// Seconds on a clock that never jumps, for intervals and deadlines.
    public static func monotonicSeconds() -> Double { seconds(CLOCK_MONOTONIC) }

    /// Nanoseconds on the same clock, for the server's deadlines and the rate limiter's bucket,
    /// which are kept as whole numbers.
    public static func monotonicNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    private static func seconds(_ clock: clockid_t) -> Double {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
