import Testing

@testable import Exporter

@Suite struct ReadingStoreTests {
    static let weather = Sources.all.firstIndex { $0.name == "weather" }!

    static func locations(_ count: Int) -> [Location] {
        (0..<count).map {
            Location(name: "Place \($0)", latitude: Double($0 % 180) - 90, longitude: Double($0 % 360) - 180)
        }
    }

    /// A renderer may hold a snapshot while polls land: it keeps what it saw, and the store bumps the
    /// generation of what changed, and nothing else.
    @Test func aSnapshotKeepsItsValuesAndAWriteBumpsOnlyItsLocation() {
        let locations = Self.locations(1_000)
        let store = ReadingStore.allSources(locations, now: 0)
        let before = store.snapshot()
        store.failure("Place 500", "weather", code: "500", reason: "server error", duration: 1.5)
        let after = store.snapshot()

        #expect(before.locations[500].slots[Self.weather].up == nil)
        #expect(after.locations[500].slots[Self.weather].up == false)
        #expect(after.locations[500].slots[Self.weather].lastError == "server error")
        #expect(after.locations.map(\.location) == locations)
        let changed = after.locations.indices.filter {
            after.locations[$0].generation != before.locations[$0].generation
        }
        #expect(changed == [500])
        #expect(after.requestCounts == [.init(source: "weather", code: "500"): 1])
    }

    @Test func statesKeepTheirOrderAcrossChunks() {
        let size = ReadingStore.LocationStates.chunkSize
        for count in [0, 1, size - 1, size, size + 1, 3 * size + 2] {
            let locations = Self.locations(count)
            let store = ReadingStore.allSources(locations, now: 0)
            for location in locations where location.name.hasSuffix("1") {
                store.failure(location.name, "weather", code: "timeout", reason: "timed out", duration: 10)
            }
            let states = store.snapshot().locations
            #expect(states.count == count)
            #expect(states.map(\.location) == locations)
            #expect(states.map { $0.slots[Self.weather].up == false } == locations.map { $0.name.hasSuffix("1") })
        }
    }

    /// A reload keeps the kept locations' state, in the new order, for the sources they still have; a
    /// moved location starts afresh.
    @Test func replacingLocationsKeepsTheirStateInTheNewOrder() {
        let locations = Self.locations(40)
        let store = ReadingStore.allSources(locations, now: 0)
        store.failure("Place 3", "weather", code: "500", reason: "server error", duration: 1)
        store.failure("Place 3", "air_pollution", code: "500", reason: "server error", duration: 1)
        store.failure("Place 4", "weather", code: "500", reason: "server error", duration: 1)
        var next = [Location(name: "New", latitude: 1, longitude: 2)] + locations.reversed()
        next[next.firstIndex { $0.name == "Place 4" }!] = Location(name: "Place 4", latitude: 5, longitude: 5)
        store.replaceLocations(
            Layout(
                locations: next, sources: [WeatherSource()], intervals: [.seconds(600)], maxStaleness: [1800],
                thresholds: { _ in .init(aboveCelsius: 30) }))
        let snapshot = store.snapshot()
        #expect(snapshot.layout.sourceNames == ["weather"])
        #expect(snapshot.locations.map(\.location) == next)
        #expect(snapshot.locations.map(\.thresholds.aboveCelsius) == Array(repeating: 30, count: next.count))
        #expect(snapshot.locations.filter { $0.slots[0].up == false }.map(\.location.name) == ["Place 3"])
        #expect(snapshot.locations.allSatisfy { $0.slots.count == 1 })
    }

    /// The state file's families appear when the keeper starts, after the first render: the renderer
    /// lays out anew rather than keep its shards' lines by family positions that moved (it crashed).
    @Test func theStateFamiliesAppearingAfterARenderAreRendered() {
        let store = ReadingStore.allSources(Self.locations(3), now: 0)
        store.failure("Place 1", "weather", code: "500", reason: "server error")
        var rendering = MetricsRendering(gzipAbove: .max)
        let before = String(
            decoding: rendering.render(store.snapshot(), now: 10).text.chunks.concatenated, as: UTF8.self)
        store.recordStateWrite(successful: nil, now: 10)
        let after = String(
            decoding: rendering.render(store.snapshot(), now: 10).text.chunks.concatenated, as: UTF8.self)
        #expect(!before.contains("openweather_exporter_state_write_failures_total"))
        #expect(after.contains("openweather_exporter_state_write_failures_total 0"))
        #expect(after.contains(#"openweather_up{location="Place 1",source="weather"} 0"#))
    }

    /// Ready once every source that can run has been tried; a place with no match counts as tried.
    @Test func readinessCountsEverySourceAndAnUnresolvablePlace() {
        let store = ReadingStore.allSources(
            [Location(name: "A", latitude: 1, longitude: 2), Location(name: "B", place: .query(.name("Atlantis")))],
            sources: ReadingStore.fixtureSources, now: 0)
        #expect(!store.snapshot().allAttempted)
        store.failure("A", "weather", code: "500", reason: "x")
        store.failure("B", "geocoding", code: "200", reason: "no place matches")
        #expect(!store.snapshot().allAttempted, "A's air pollution has not been tried")
        store.failure("A", "air_pollution", code: "500", reason: "x")
        store.failure("A", "air_pollution_forecast", code: "500", reason: "x")
        #expect(!store.snapshot().allAttempted, "A's forecast has not been tried")
        store.failure("A", "forecast", code: "500", reason: "x")
        store.failure("A", "onecall", code: "500", reason: "x")
        #expect(store.snapshot().allAttempted)
    }
}
