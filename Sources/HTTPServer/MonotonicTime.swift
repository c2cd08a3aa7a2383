import Glibc

/// Nanoseconds on the monotonic clock: what every deadline in the server is measured in.
func monotonicNow() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
}
