import Testing

@testable import Exporter

/// The renderer keeps one key per location and updates it in place, and the store shares its
/// chunks with the snapshots a renderer holds: poll after poll, every render must still be what
/// rendering everything from scratch gives.
@Suite struct RenderingAcrossPollsTests {
    @Test func everyRenderAfterAPollEqualsAFreshOne() throws {
        let now = WeatherRenderingTests.now
        let store = try WeatherRenderingTests.store()
        var rendering = WeatherRendering(gzipAbove: .max)
        let first = rendering.render(store.snapshot(), now: now).text
        #expect(Array(first.chunks.joined()) == renderPlain(store.snapshot(), now: now))

        let reading = try ExpositionGoldenTests.fixture("current-zocca-rain.json")
        let names = store.snapshot().locations.map(\.location.name)
        for round in 1...6 {
            let held = store.snapshot()  // as a render in progress would hold it
            let at = now + Double(round)
            for name in names.enumerated().filter({ $0.offset % 7 == round }).map(\.element) {
                if round.isMultiple(of: 2) {
                    store.success(name, "weather", reading, duration: Double(round) / 8, now: at)
                } else {
                    store.failure(name, round == 3 ? "air-pollution" : "weather", code: "500", reason: "server error", duration: Double(round) / 4)
                }
            }
            #expect(held.locations.map(\.generation) != store.snapshot().locations.map(\.generation))
            let body = Array(rendering.render(store.snapshot(), now: at).text.chunks.joined())
            #expect(body == renderPlain(store.snapshot(), now: at), "round \(round)")
            #expect(body == ExpositionText.reRendered(body), "round \(round)")
        }
    }
}
