/// The two text formats a scrape may ask for. Both carry the same families and series; OpenMetrics
/// adds `# UNIT`, names a counter's family without `_total`, adds its `_created` series and ends
/// with `# EOF`.
public enum ExpositionFormat: Sendable, CaseIterable {
    /// The Prometheus text format 0.0.4.
    case text
    /// OpenMetrics 1.0.0 text.
    case openMetrics

    public var contentType: String {
        switch self {
        case .text: "text/plain; version=0.0.4; charset=utf-8"
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        }
    }

    /// The format for the `Accept` header values of a request, as Prometheus' client_golang chooses
    /// (`expfmt.NegotiateIncludingOpenMetrics`): the media ranges are taken by descending q (in the
    /// header's order among equal q), and the first that is `text/plain` (version 0.0.4 or none) or
    /// `application/openmetrics-text` (version 1.0.0, 0.0.1 or none) decides; anything else, and no
    /// header, is the text format. Unlike client_golang, a range with q=0 (or a q that is not a
    /// number) is refused, as RFC 9110 says, and types compare without regard to case.
    public static func negotiate(accept values: [String]) -> ExpositionFormat {
        var best: (format: ExpositionFormat, quality: Double)?
        for value in values {
            for range in value.split(separator: ",") {
                guard let (format, quality) = candidate(range), quality > 0 else { continue }
                if quality > best?.quality ?? 0 { best = (format, quality) }
            }
        }
        return best?.format ?? .text
    }

    /// The format `range` names and its q, or nil for any other media range.
    private static func candidate(_ range: Substring) -> (ExpositionFormat, Double)? {
        let parts = range.split(separator: ";", omittingEmptySubsequences: false).map { trimmed($0) }
        var version: Substring?
        var quality = 1.0
        for parameter in parts.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let name = trimmed(parameter[..<equals]).lowercased()
            var value = trimmed(parameter[parameter.index(after: equals)...])
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            if name == "q" {
                quality = Double(value).flatMap { (0...1).contains($0) ? $0 : nil } ?? 0
            } else if name == "version" {
                version = value
            }
        }
        switch parts[0].lowercased() {
        case "text/plain" where version == nil || version == "0.0.4":
            return (.text, quality)
        case "application/openmetrics-text" where version == nil || version == "1.0.0" || version == "0.0.1":
            return (.openMetrics, quality)
        default:
            return nil
        }
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}

/// One value per format: what is kept rendered in both.
public struct PerFormat<Value> {
    public var text: Value
    public var openMetrics: Value

    public init(text: Value, openMetrics: Value) {
        self.text = text
        self.openMetrics = openMetrics
    }

    public init(_ make: (ExpositionFormat) -> Value) {
        self.init(text: make(.text), openMetrics: make(.openMetrics))
    }

    public subscript(format: ExpositionFormat) -> Value {
        get { format == .text ? text : openMetrics }
        set {
            if format == .text { text = newValue } else { openMetrics = newValue }
        }
    }
}

extension PerFormat: Sendable where Value: Sendable {}
