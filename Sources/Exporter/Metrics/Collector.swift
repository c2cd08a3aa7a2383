import Exposition

/// One source of metric families. Adding a data source (air pollution, a
/// forecast) is adding a collector.
protocol Collector: Sendable {
    func collect(_ snapshot: WeatherStore.Snapshot, now: Double, into families: inout [MetricFamily])
}
