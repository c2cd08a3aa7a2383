import Exposition
import Synchronization

/// Keeps the exposition rendered in memory. The weather part is re-rendered
/// when a reading changes or a location turns stale; the process part once a
/// second. A scrape only takes a reference to the bytes: it does no rendering.
final class MetricsPublisher: Sendable {
    private struct Rendered {
        var weather: [UInt8] = []
        var process: [UInt8] = []
        /// When the next fresh location turns stale and the weather part must be redone.
        var nextStaleness = Double.infinity
        /// Every location had been attempted when the weather part was rendered.
        var allAttempted = false
    }

    private let store: WeatherStore
    private let process = ProcessCollector()
    private let rendered = Mutex(Rendered())
    private let maxStaleness: Mutex<Double>

    init(store: WeatherStore, maxStaleness: Duration) {
        self.store = store
        self.maxStaleness = Mutex(maxStaleness.seconds)
        refreshWeather()
        refreshProcess()
    }

    /// The exposition as chunks to write one after the other; families stay sorted
    /// because every `openweather_*` name sorts before `process_*`.
    var body: [[UInt8]] {
        rendered.withLock { [$0.weather, $0.process] }
    }

    /// Readiness follows what is published, not the store, so a scrape right after
    /// `/-/ready` turns 200 already shows every location's first result.
    var ready: Bool { rendered.withLock { $0.allAttempted } }

    func setMaxStaleness(_ duration: Duration) {
        maxStaleness.withLock { $0 = duration.seconds }
        refreshWeather()
    }

    /// The `openweather_*` part of the exposition for `snapshot` as seen at `now`.
    static func renderWeather(_ snapshot: WeatherStore.Snapshot, now: Double, maxStaleness: Double) -> [UInt8] {
        let collectors: [any Collector] = [WeatherCollector(maxStaleness: maxStaleness), HealthCollector()]
        var families: [MetricFamily] = []
        for collector in collectors { collector.collect(snapshot, now: now, into: &families) }
        return Exposition.render(families)
    }

    func refreshWeather() {
        let snapshot = store.snapshot()
        let now = Clock.wallSeconds()
        let staleness = maxStaleness.withLock { $0 }
        let bytes = Self.renderWeather(snapshot, now: now, maxStaleness: staleness)
        let nextStaleness = snapshot.locations.compactMap { state in
            state.lastSuccess.map { $0 + staleness }.flatMap { $0 >= now ? $0 : nil }
        }.min() ?? .infinity
        rendered.withLock {
            $0.weather = bytes
            $0.nextStaleness = nextStaleness
            $0.allAttempted = snapshot.allAttempted
        }
    }

    func refreshProcess() {
        var families: [MetricFamily] = []
        process.collect(into: &families)
        let bytes = Exposition.render(families)
        rendered.withLock { $0.process = bytes }
    }

    /// Called about once a second.
    func tick() {
        refreshProcess()
        if rendered.withLock({ Clock.wallSeconds() > $0.nextStaleness }) { refreshWeather() }
    }
}
