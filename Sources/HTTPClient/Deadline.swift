/// The single instant by which a whole exchange must be over.
struct Deadline {
    let instant: ContinuousClock.Instant

    init(after timeout: Duration) {
        instant = ContinuousClock.now.advanced(by: timeout)
    }

    /// Milliseconds left for poll(2), rounded up so a wait never ends just short of the deadline.
    func remainingMilliseconds() throws(HTTPClientError) -> Int32 {
        let left = instant - ContinuousClock.now
        guard left > .zero else { throw .timeout }
        let (seconds, attoseconds) = left.components
        let ms = seconds.multipliedReportingOverflow(by: 1000)
        if ms.overflow || ms.partialValue >= Int64(Int32.max) { return Int32.max }
        let total = ms.partialValue + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(min(total, Int64(Int32.max)))
    }
}
