import Glibc
import Platform

/// Nanoseconds on the monotonic clock: what every deadline in the server is measured in.
func monotonicNow() -> Int64 { SystemClock.monotonicNanoseconds() }

/// An operator's timeout in nanoseconds, saturated (`Duration.clampedNanoseconds`): 300 years must not trap.
func nanoseconds(_ duration: Duration) -> Int64 { duration.clampedNanoseconds }
