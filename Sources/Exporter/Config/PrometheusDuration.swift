import Platform

/// Durations as Prometheus writes them: `30s`, `10m`, `1h30m`, `500ms`, `1d`.
enum PrometheusDuration {
    private static let units: [(suffix: String, seconds: Double)] = [
        ("y", 365 * 86_400), ("w", 7 * 86_400), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1), ("ms", 0.001),
    ]

    /// Nil when `text` is not of that form; units must come largest first, each at most once.
    static func parse(_ text: String) -> Duration? {
        var bytes = Substring(text)
        var total = 0.0
        var lastUnit = -1
        guard !bytes.isEmpty else { return nil }
        while !bytes.isEmpty {
            let digits = bytes.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let number = Double(digits) else { return nil }
            bytes = bytes.dropFirst(digits.count)
            let letters = bytes.prefix { $0.isASCII && $0.isLetter }
            bytes = bytes.dropFirst(letters.count)
            guard let unit = units.firstIndex(where: { $0.suffix == letters }), unit > lastUnit else { return nil }
            lastUnit = unit
            total += number * units[unit].seconds
        }
        guard total.isFinite, total < 1e12 else { return nil }
        return .milliseconds(Int64((total * 1000).rounded()))
    }

    /// The shortest form `parse` reads back: `1h30m`, `15s`, `250ms`. Total over every duration: it
    /// counts in the 128-bit magnitude, where nothing overflows; a negative one gets a `-`.
    static func format(_ duration: Duration) -> String {
        // Rounded to the nearest millisecond, not cut: 914.4 s is held as 914.39999..., which cut
        // would show as 914s399ms. A Duration's attoseconds are below 2^127, so adding half fits.
        let total = (duration.attoseconds.magnitude + 500_000_000_000_000) / 1_000_000_000_000_000
        var whole = total / 1000
        let milliseconds = total % 1000
        if whole == 0 && milliseconds == 0 { return "0s" }
        var out = duration < .zero ? "-" : ""
        for (suffix, size) in [("d", UInt128(86_400)), ("h", 3_600), ("m", 60), ("s", 1)] where whole >= size {
            out += "\(whole / size)\(suffix)"
            whole %= size
        }
        return milliseconds == 0 ? out : out + "\(milliseconds)ms"
    }

    /// `format` for seconds computed at run time, perhaps from what a server sent: NaN is `0s`, and
    /// anything beyond what a `Duration` holds is shown as the longest one.
    static func format(seconds: Double) -> String {
        format(Duration(clampingSeconds: seconds))
    }
}
