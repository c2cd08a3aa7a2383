import Glibc
import Platform

/// Nanoseconds on the monotonic clock: what every deadline in the server is measured in.
func monotonicNow() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// An operator's timeout in nanoseconds, saturated (`Duration.clampedNanoseconds`): 300 years must not trap.
func nanoseconds(_ duration: Duration) -> Int64 { duration.clampedNanoseconds }
