/// Durations as Prometheus writes them: `30s`, `10m`, `1h30m`, `500ms`, `1d`.
public enum PrometheusDuration {
    private static let units: [(suffix: String, seconds: Double)] = [
        ("y", 365 * 86_400), ("w", 7 * 86_400), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1), ("ms", 0.001),
    ]

    /// Nil when `text` is not of that form; units must come largest first, each at most once.
    public static func parse(_ text: String) -> Duration? {
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

    /// The shortest form `parse` reads back: `1h30m`, `15s`, `250ms`.
    public static func format(_ duration: Duration) -> String {
        var milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if milliseconds == 0 { return "0s" }
        var out = ""
        for (suffix, seconds) in units where suffix != "y" && suffix != "w" {
            let size = Int64(seconds * 1000)
            if milliseconds >= size {
                out += "\(milliseconds / size)\(suffix)"
                milliseconds %= size
            }
        }
        return out
    }
}

extension Duration {
    /// Seconds as a `Double`, for clocks and arithmetic.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

