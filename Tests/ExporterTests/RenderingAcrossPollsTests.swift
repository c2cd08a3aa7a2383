import Testing

@testable import Exporter

/// The renderer keeps one key per location and updates it in place, and the store shares its
/// chunks with the snapshots a renderer holds: poll after poll, every render must still be what
/// rendering everything from scratch gives.
@Suite struct RenderingAcrossPollsTests {
    @Test func everyRenderAfterAPollEqualsAFreshOne() throws {
        let now = WeatherRenderingTests.now
        let store = try WeatherRenderingTests.store()
        var rendering = WeatherRendering(collectors: MetricsPublisher.collectors(maxStaleness: 1800), maxStaleness: 1800, gzipAbove: .max)
        let first = rendering.render(store.snapshot(), now: now)
        #expect(Array(first.chunks.joined()) == WeatherRenderingTests.direct(store.snapshot(), now: now, maxStaleness: 1800))

        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        let names = store.snapshot().locations.map(\.location.name)
        for round in 1...6 {
            let held = store.snapshot()  // as a render in progress would hold it
            let at = now + Double(round)
            for name in names.enumerated().filter({ $0.offset % 7 == round }).map(\.element) {
                if round.isMultiple(of: 2) {
                    store.recordSuccess(name, reading: reading, duration: Double(round) / 8, now: at)
                } else {
                    store.recordFailure(name, code: "500", reason: "server error", duration: Double(round) / 4)
                }
            }
            #expect(held.locations.map(\.lastPollDuration) != store.snapshot().locations.map(\.lastPollDuration))
            let body = rendering.render(store.snapshot(), now: at)
            #expect(Array(body.chunks.joined()) == WeatherRenderingTests.direct(store.snapshot(), now: at, maxStaleness: 1800), "round \(round)")
        }
    }
}
