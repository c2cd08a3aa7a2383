/// Renders metric families in the Prometheus text format 0.0.4.
///
/// Output is deterministic: families sorted by name, series by their label values
/// (byte order, as Go's client does), so golden files and diffs stay stable.
public enum Exposition {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Renders `families` into a fresh buffer.
    public static func render(_ families: [MetricFamily]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(families.reduce(0) { $0 + 96 + $1.samples.count * 96 })
        append(families, to: &out)
        return out
    }

    /// Appends `families` to `out`. Families with no series are left out: a HELP
    /// without a sample says nothing and only confuses readers.
    public static func append(_ families: [MetricFamily], to out: inout [UInt8]) {
        let sorted = families.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        for family in sorted where !family.samples.isEmpty {
            appendHeader(of: family, to: &out)
            appendSeries(of: family, to: &out)
        }
    }

    /// The family's series lines, sorted by label values, without its HELP and TYPE lines:
    /// for renderers that assemble one family from several parts.
    public static func appendSeries(of family: MetricFamily, to out: inout [UInt8]) {
        // Samples usually arrive sorted; checking first avoids the sort's copies.
        let sorted = zip(family.samples, family.samples.dropFirst()).allSatisfy { !precedes($1, $0) }
        for sample in sorted ? family.samples : family.samples.sorted(by: precedes) {
            appendSeries(name: family.name, labels: sample.labels, value: sample.value, to: &out)
        }
    }

    /// The HELP and TYPE lines of `family`.
    public static func appendHeader(of family: MetricFamily, to out: inout [UInt8]) {
        out.append(contentsOf: "# HELP ".utf8)
        out.append(contentsOf: family.name.utf8)
        out.append(UInt8(ascii: " "))
        appendEscaped(family.help, quotes: false, to: &out)
        out.append(contentsOf: "\n# TYPE ".utf8)
        out.append(contentsOf: family.name.utf8)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: family.type.rawValue.utf8)
        out.append(UInt8(ascii: "\n"))
    }

    /// One series line: `name{a="x",b="y"} value\n`.
    public static func appendSeries(
        name: String, labels: [(name: String, value: String)], value: Double, to out: inout [UInt8]
    ) {
        out.append(contentsOf: name.utf8)
        if !labels.isEmpty {
            out.append(UInt8(ascii: "{"))
            for (index, label) in labels.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: label.name.utf8)
                out.append(contentsOf: "=\"".utf8)
                appendEscaped(label.value, quotes: true, to: &out)
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: " "))
        appendValue(value, to: &out)
        out.append(UInt8(ascii: "\n"))
    }

    /// `{name="value"`: the opening of a series' labels, for renderers that render it once
    /// and reuse it for every series of the same label value.
    public static func appendOpeningLabel(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        appendLabelPair(name, value, to: &out)
    }

    /// `,name="value"`: a further label after `appendOpeningLabel`.
    public static func appendLabel(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        appendLabelPair(name, value, to: &out)
    }

    /// `} value\n`: the end of a series line whose labels were opened with `appendOpeningLabel`.
    public static func appendClosing(_ value: Double, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "}"))
        out.append(UInt8(ascii: " "))
        appendValue(value, to: &out)
        out.append(UInt8(ascii: "\n"))
    }

    private static func appendLabelPair(_ name: String, _ value: String, to out: inout [UInt8]) {
        appendUTF8(name, to: &out)
        out.append(UInt8(ascii: "="))
        out.append(UInt8(ascii: "\""))
        appendEscaped(value, quotes: true, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Copies the string's bytes in one go where they are contiguous (native strings always are).
    static func appendUTF8(_ text: String, to out: inout [UInt8]) {
        if text.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
            out.append(contentsOf: text.utf8)
        }
    }

    /// Backslash and newline are escaped everywhere; the double quote only in label values.
    static func appendEscaped(_ text: String, quotes: Bool, to out: inout [UInt8]) {
        let isPlain = { (byte: UInt8) in byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "\n") && (!quotes || byte != UInt8(ascii: "\"")) }
        let plain = text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isPlain) } ?? text.utf8.allSatisfy(isPlain)
        if plain {
            appendUTF8(text, to: &out)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\"") where quotes: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            default: out.append(byte)
            }
        }
    }

    /// Shortest round-tripping form; integers without a trailing `.0`.
    public static func appendValue(_ value: Double, to out: inout [UInt8]) {
        if value.isNaN {
            out.append(contentsOf: "NaN".utf8)
        } else if value.isInfinite {
            out.append(contentsOf: (value > 0 ? "+Inf" : "-Inf").utf8)
        } else if value == value.rounded(.towardZero), abs(value) < 1e15 {
            appendInteger(Int64(value), to: &out)
        } else {
            appendUTF8(value.description, to: &out)
        }
    }

    /// `appendValue` as a String, for label values that hold numbers.
    public static func formatValue(_ value: Double) -> String {
        var out: [UInt8] = []
        appendValue(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64) = (0, 0)  // scratch for the 15 digits below 1e15
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            while magnitude > 0 {
                scratch[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(scratch[index]) }
        }
    }

    static func precedes(_ lhs: Sample, _ rhs: Sample) -> Bool {
        for (left, right) in zip(lhs.labels, rhs.labels) where left.value != right.value {
            return left.value.utf8.lexicographicallyPrecedes(right.value.utf8)
        }
        return lhs.labels.count < rhs.labels.count
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`, the classic metric name grammar.
    public static func isValidMetricName(_ name: String) -> Bool {
        isValidName(name, allowColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`.
    public static func isValidLabelName(_ name: String) -> Bool {
        isValidName(name, allowColon: false)
    }

    private static func isValidName(_ name: String, allowColon: Bool) -> Bool {
        var first = true
        for byte in name.utf8 {
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            let ok = letter || byte == UInt8(ascii: "_") || (allowColon && byte == UInt8(ascii: ":")) || (!first && digit)
            if !ok { return false }
            first = false
        }
        return !first
    }
}
