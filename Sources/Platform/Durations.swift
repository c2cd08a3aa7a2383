/// The checked conversions of a duration that came from outside (a flag, a file, an upstream): none
/// traps, whatever the value. `Duration.seconds(_: Double)` traps beyond ±2^63 s and on NaN, and
/// `seconds * 1_000_000_000` in `Int64` past 292 years (`--web.read-timeout=300y` once did at start).
extension Duration {
    /// Saturates at what a `Duration` of whole `Int64` seconds holds; NaN is zero.
    public init(clampingSeconds seconds: Double) {
        let limit = Double(Int64.max)  // 2^63: the first Double past what `Int64` holds
        if seconds.isNaN {
            self = .zero
        } else if seconds >= limit {
            self = .seconds(Int64.max)
        } else if seconds <= -limit {
            self = .seconds(Int64.min)
        } else {
            self = .seconds(seconds)
        }
    }

    /// Seconds as a `Double`, for clocks and arithmetic.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole nanoseconds from 0 to `Int64.max` (292 years): negative is 0, longer saturates.
    public var clampedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let whole = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = whole.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        return whole.overflow || total.overflow ? Int64.max : max(0, total.partialValue)
    }
}

#if !compiler(>=6.1)
    // Swift 6.0's standard library has Int128 but not these two, which 6.1 added (inlined, as here):
    // the arm64 release is built with Debian 13's Swift 6.0.3.
    extension Duration {
        public var attoseconds: Int128 { Int128(_low: _low, _high: _high) }
        public init(attoseconds: Int128) { self.init(_high: attoseconds._high, low: attoseconds._low) }
    }
#endif
