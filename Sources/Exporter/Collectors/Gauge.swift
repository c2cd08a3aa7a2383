import Exposition

/// One gauge a source reads from a field: its family's name and help, and its value (`nil`: no
/// line). A source keeps its gauges in one table, so a new gauge is one record there.
struct Gauge<Input>: Sendable {
    let name: String
    let help: String
    let value: @Sendable (Input) -> Double?

    var family: MetricFamily { MetricFamily(name: name, help: help) }
}
