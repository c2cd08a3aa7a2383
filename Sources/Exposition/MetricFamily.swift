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
    public let name: String
    public let help: String
    public let type: MetricType
    public var samples: [Sample]

    public init(name: String, help: String, type: MetricType = .gauge, samples: [Sample] = []) {
        precondition(Exposition.isValidMetricName(name), "invalid metric name \(name)")
        self.name = name
        self.help = help
        self.type = type
        self.samples = samples
    }

    public mutating func add(_ labels: [(name: String, value: String)] = [], _ value: Double) {
        samples.append(Sample(labels, value: value))
    }
}
