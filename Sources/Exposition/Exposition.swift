/// Renders metric families in the Prometheus text format 0.0.4 or in OpenMetrics 1.0.0 text.
///
/// Output is deterministic: families sorted by name, series by their label values
/// (byte order, as Go's client does), so golden files and diffs stay stable.
public enum Exposition {
    /// Renders `families` into a fresh buffer, without what ends a whole exposition (`trailer`).
    public static func render(_ families: [MetricFamily], format: ExpositionFormat = .text) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(families.reduce(0) { $0 + 96 + $1.samples.count * 96 })
        append(families, format: format, to: &out)
        return out
    }

    /// What follows the last family: OpenMetrics' `# EOF` line, nothing in the text format.
    public static func trailer(_ format: ExpositionFormat) -> [UInt8] {
        format == .openMetrics ? Array("# EOF\n".utf8) : []
    }

    /// Appends `families` to `out`. Families with no series are left out: a HELP
    /// without a sample says nothing and only confuses readers.
    public static func append(_ families: [MetricFamily], format: ExpositionFormat = .text, to out: inout [UInt8]) {
        let sorted = families.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        for family in sorted where !family.samples.isEmpty {
            appendHeader(of: family, format: format, to: &out)
            appendSeries(of: family, format: format, to: &out)
        }
    }

    /// The family's series lines, sorted by label values, without its HELP and TYPE lines:
    /// for renderers that assemble one family from several parts. In OpenMetrics a counter's
    /// `_total` line is followed by its `_created` line, when the family knows when it was created.
    public static func appendSeries(of family: MetricFamily, format: ExpositionFormat = .text, to out: inout [UInt8]) {
        // Samples usually arrive sorted; checking first avoids the sort's copies.
        let sorted = zip(family.samples, family.samples.dropFirst()).allSatisfy { !precedes($1, $0) }
        let created = format == .openMetrics && family.type == .counter ? family.created : nil
        let createdName = created.map { _ in family.openMetricsName + "_created" }
        for sample in sorted ? family.samples : family.samples.sorted(by: precedes) {
            appendSeries(name: family.name, labels: sample.labels, value: sample.value, to: &out)
            if let created, let createdName {
                appendSeries(name: createdName, labels: sample.labels, value: created, to: &out)
            }
        }
    }

    /// The HELP and TYPE lines of `family`; in OpenMetrics, under the family's name there, and its
    /// UNIT line when the name ends in a unit.
    public static func appendHeader(of family: MetricFamily, format: ExpositionFormat = .text, to out: inout [UInt8]) {
        let openMetrics = format == .openMetrics
        let name = openMetrics ? family.openMetricsName : Substring(family.name)
        out.append(contentsOf: "# HELP ".utf8)
        out.append(contentsOf: name.utf8)
        out.append(UInt8(ascii: " "))
        // OpenMetrics escapes the double quote in HELP too (its `escaped-string`).
        appendEscaped(family.help, quotes: openMetrics, to: &out)
        out.append(contentsOf: "\n# TYPE ".utf8)
        out.append(contentsOf: name.utf8)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: (openMetrics && family.type == .untyped ? "unknown" : family.type.rawValue).utf8)
        out.append(UInt8(ascii: "\n"))
        if openMetrics, let unit = family.unit {
            out.append(contentsOf: "# UNIT ".utf8)
            out.append(contentsOf: name.utf8)
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: unit.utf8)
            out.append(UInt8(ascii: "\n"))
        }
    }

    /// One series line: `name{a="x",b="y"} value\n`.
    public static func appendSeries<Name: StringProtocol>(
        name: Name, labels: [(name: String, value: String)], value: Double, to out: inout [UInt8]
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
        let isPlain = { (byte: UInt8) in
            byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "\n") && (!quotes || byte != UInt8(ascii: "\""))
        }
        let plain =
            text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isPlain) } ?? text.utf8.allSatisfy(isPlain)
        if plain {
            appendUTF8(text, to: &out)
            return
        }
        var text = text
        text.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count * 2) { scratch in
                let count = writeEscaped(bytes, quotes: quotes, into: scratch.baseAddress!)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<count]))
            }
        }
    }

    /// `bytes` escaped as `appendEscaped` does, written at `cursor` (room for twice the bytes);
    /// returns how many bytes it wrote.
    @usableFromInline static func writeEscaped(
        _ bytes: UnsafeBufferPointer<UInt8>, quotes: Bool, into cursor: UnsafeMutablePointer<UInt8>
    ) -> Int {
        var written = 0
        for byte in bytes {
            let escaped: UInt8? =
                switch byte {
                case UInt8(ascii: "\\"): UInt8(ascii: "\\")
                case UInt8(ascii: "\n"): UInt8(ascii: "n")
                case UInt8(ascii: "\"") where quotes: UInt8(ascii: "\"")
                default: nil
                }
            if let escaped {
                cursor[written] = UInt8(ascii: "\\")
                cursor[written + 1] = escaped
                written += 2
            } else {
                cursor[written] = byte
                written += 1
            }
        }
        return written
    }

    /// Shortest round-tripping form; integers without a trailing `.0`. The same text as
    /// `Double.description` (minus its `.0`), written without making a String for the common
    /// values: integers and numbers with up to six decimals between 0.0001 and 8·10^9.
    public static func appendValue(_ value: Double, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: valueScratch) { scratch in
            if let count = writeValue(value, into: scratch) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<count]))
            } else {
                appendUTF8(value.description, to: &out)
            }
        }
    }

    /// Room for any value `writeValue` writes: a sign, 19 digits and a point.
    @inlinable static var valueScratch: Int { 24 }

    /// Writes `value` as `appendValue` does into the start of `buffer` (at least `valueScratch` bytes) and returns the
    /// count, or nil where only `Double.description` gives the shortest form (very large, very small or long numbers).
    @usableFromInline static func writeValue(_ value: Double, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        if value.isNaN { return write("NaN", into: buffer) }
        if value.isInfinite { return write(value > 0 ? "+Inf" : "-Inf", into: buffer) }
        if value == value.rounded(.towardZero), abs(value) < 1e15 {
            return writeDecimal(Int64(value), decimals: 0, into: buffer)
        }
        if let (scaled, decimals) = shortDecimal(value) {
            return writeDecimal(scaled, decimals: decimals, into: buffer)
        }
        return nil
    }

    private static func write(_ text: StaticString, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let bytes = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        _ = buffer.initialize(from: bytes)
        return bytes.count
    }

    /// `value` as `scaled / 10^decimals` with the fewest decimals (up to six) that give back exactly
    /// `value`, for 0.0001 <= |value| < 8·10^9 (Unix times with microseconds included); nil when there
    /// is no such form.
    ///
    /// The decimal text of `scaled / 10^decimals` reads back as the double nearest to that quotient,
    /// which is what the (correctly rounded) division below computed; so when the division gives
    /// `value`, so does reading the text. In this range `scaled` stays below 2^53 (exact) and a double's
    /// spacing is finer than 10^-6, so at most one `scaled` per `decimals` reads back as `value`: the
    /// one `Double.description` prints.
    static func shortDecimal(_ value: Double) -> (scaled: Int64, decimals: Int)? {
        let magnitude = abs(value)
        guard magnitude >= 1e-4, magnitude < 8e9 else { return nil }
        var power = 1.0
        for decimals in 1...6 {
            power *= 10  // exact: powers of ten up to 10^22 are doubles
            let scaled = (value * power).rounded()
            if scaled / power == value { return (Int64(scaled), decimals) }
        }
        return nil
    }

    /// `scaled / 10^decimals` in decimal at the start of `buffer`: `-0.05` for (-5, 2), `42` for (42, 0).
    static func writeDecimal(_ scaled: Int64, decimals: Int, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var magnitude = scaled.magnitude
        var digits = 1
        var limit: UInt64 = 10
        while digits < 19 && magnitude >= limit {
            digits += 1
            limit &*= 10
        }
        digits = max(digits, decimals + 1)  // 0.05: the zeros before the digits
        let sign = scaled < 0 ? 1 : 0
        let count = sign + digits + (decimals > 0 ? 1 : 0)
        if sign == 1 { buffer[0] = UInt8(ascii: "-") }
        var position = count
        for written in 0..<digits {
            if written == decimals && decimals > 0 {
                position -= 1
                buffer[position] = UInt8(ascii: ".")
            }
            position -= 1
            buffer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        }
        return count
    }

    /// `appendValue` as a String, for label values that hold numbers.
    public static func formatValue(_ value: Double) -> String {
        var out: [UInt8] = []
        appendValue(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func precedes(_ lhs: Sample, _ rhs: Sample) -> Bool {
        for (left, right) in zip(lhs.labels, rhs.labels) where left.value != right.value {
            return left.value.utf8.lexicographicallyPrecedes(right.value.utf8)
        }
        return lhs.labels.count < rhs.labels.count
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`, the classic metric name grammar.
    public static func isValidMetricName(_ name: String) -> Bool {
        var first = true
        for byte in name.utf8 {
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            let ok = letter || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || (!first && digit)
            if !ok { return false }
            first = false
        }
        return !first
    }
}
