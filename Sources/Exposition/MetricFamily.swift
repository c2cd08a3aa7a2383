/// The type line of a family in the text format.
public enum MetricType: String, Sendable {
    case gauge
    case counter
    case untyped
}

/// One series: its label pairs (in the family's label order) and its value.
public struct Sample: Sendable {
    public var labels: [(name: String, value: String)]
    public var value: Double

    public init(_ labels: [(name: String, value: String)] = [], value: Double) {
        self.labels = labels
        self.value = value
    }
}

/// A metric family as the text format 0.0.4 shows it: HELP, TYPE, then its series.
public struct MetricFamily: Sendable {
    /// The name of its series; a counter's ends in `_total`.
    public let name: String
    public let help: String
    public let type: MetricType
    public var samples: [Sample]
    /// For a counter, when its series started from zero (Unix time): OpenMetrics shows it as the
    /// `_created` series of each.
    public var created: Double?

    public init(name: String, help: String, type: MetricType = .gauge, samples: [Sample] = [], created: Double? = nil) {
        precondition(Exposition.isValidMetricName(name), "invalid metric name \(name)")
        self.name = name
        self.help = help
        self.type = type
        self.samples = samples
        self.created = created
    }

    /// The units a name may end in, in base units as Prometheus' naming guide asks; the longest
    /// match wins. A family whose name ends in one of them has it as its OpenMetrics `# UNIT`.
    static let units = [
        "grams_per_cubic_meter", "meters_per_second", "celsius", "seconds", "degrees", "pascals", "meters", "bytes",
        "ratio",
    ]

    /// The family's name in OpenMetrics: a counter's without `_total`, which its samples carry.
    public var openMetricsName: Substring {
        type == .counter && name.hasSuffix("_total") ? name.dropLast(6) : Substring(name)
    }

    /// The unit `openMetricsName` ends in (after an underscore), if any.
    public var unit: String? {
        let family = openMetricsName
        return Self.units.first { unit in
            family.count > unit.count + 1 && family.hasSuffix(unit) && family.dropLast(unit.count).hasSuffix("_")
        }
    }

    public mutating func add(_ labels: [(name: String, value: String)] = [], _ value: Double) {
        samples.append(Sample(labels, value: value))
    }
}
