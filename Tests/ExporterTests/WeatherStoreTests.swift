import Testing

@testable import Exporter

@Suite struct WeatherStoreTests {
    static func locations(_ count: Int) -> [Location] {
        (0..<count).map { Location(name: "Place \($0)", latitude: Double($0 % 180) - 90, longitude: Double($0 % 360) - 180) }
    }

    /// A renderer may hold a snapshot while polls land: it keeps what it saw, and the store copies
    /// only the chunk a write touches, not every location's state.
    @Test func aSnapshotKeepsItsValuesAndAWriteCopiesOnlyItsChunk() {
        let locations = Self.locations(1_000)
        let store = WeatherStore(locations: locations, thresholds: { _ in .init() }, now: 0)
        let before = store.snapshot()
        store.recordFailure("Place 500", code: "500", reason: "server error", duration: 1.5)
        let after = store.snapshot()

        #expect(before.locations[500].up == nil)
        #expect(after.locations[500].up == false)
        #expect(after.locations[500].lastError == "server error")
        #expect(after.locations.map(\.location) == locations)
        let copied = after.locations.indices.filter { !before.locations.sharesChunk(with: after.locations, at: $0) }
        #expect(copied.count == WeatherStore.LocationStates.chunkSize)
        #expect(copied.contains(500))
    }

    @Test func statesKeepTheirOrderAcrossChunks() {
        let size = WeatherStore.LocationStates.chunkSize
        for count in [0, 1, size - 1, size, size + 1, 3 * size + 2] {
            let locations = Self.locations(count)
            let store = WeatherStore(locations: locations, thresholds: { _ in .init() }, now: 0)
            for location in locations where location.name.hasSuffix("1") {
                store.recordFailure(location.name, code: "timeout", reason: "timed out", duration: 10)
            }
            let states = store.snapshot().locations
            #expect(states.count == count)
            #expect(states.map(\.location) == locations)
            #expect(states.map { $0.up == false } == locations.map { $0.name.hasSuffix("1") })
        }
    }

    /// A reload keeps the kept locations' state, in the new order.
    @Test func replacingLocationsKeepsTheirStateInTheNewOrder() {
        let locations = Self.locations(40)
        let store = WeatherStore(locations: locations, thresholds: { _ in .init() }, now: 0)
        store.recordFailure("Place 3", code: "500", reason: "server error", duration: 1)
        let next = [Location(name: "New", latitude: 1, longitude: 2)] + locations.reversed()
        store.replaceLocations(next, thresholds: { _ in .init(aboveCelsius: 30) })
        let states = store.snapshot().locations
        #expect(states.map(\.location) == next)
        #expect(states.map(\.thresholds.aboveCelsius) == Array(repeating: 30, count: next.count))
        #expect(states.filter { $0.up == false }.map(\.location.name) == ["Place 3"])
    }
}
