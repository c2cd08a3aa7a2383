import Glibc
import OpenWeather
import Testing

@testable import Exporter

/// State file costs for `Tests/bench/run.sh`, not a test: skipped unless `BENCH=1`; prints instead
/// of asserting. At `BENCH_LOCATIONS` locations (10,000), each with weather and air pollution
/// answered from the fixtures: the file's size, the bodies kept in memory, and the time of one
/// write (capture under the poller's lock, then encoding streamed to the file with fsync; encoding
/// alone for reference) and of one load at start.
@Suite(.enabled(if: getenv("BENCH") != nil, "set BENCH=1 to run the state benchmark"))
struct StateBenchmark {
    @Test func stateFileAtScale() throws {
        let count = RenderBenchmark.locationCount
        var template = Array("/tmp/owe-state-bench-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        defer {
            _ = unlink(directory + "/" + StateStorage.fileName)
            _ = rmdir(directory)
        }
        let locations = (0..<count).map {
            Location(name: "Place \($0)", latitude: Double($0 % 180) - 89.5, longitude: Double($0 % 360) - 179.75)
        }
        let config = configuration(
            locations, collectors: ["weather": .seconds(600), "air_pollution": .seconds(3600)], budget: 1_000_000)

        func rig(time: ManualTime) throws -> (Poller, StateKeeper, FakeTransport) {
            let transport = FakeTransport(time: time)
            let logger = Logger(level: .error, format: .logfmt, secrets: [], sink: { _ in })
            let setup = config.pollerSetup(transport: transport)
            let store = ReadingStore(setup: setup, now: time.wall())
            let keeper = StateKeeper(
                storage: try StateStorage(directory: directory), store: store, logger: logger, time: time
            ) {}
            let poller = Poller(
                setup: setup, store: store, logger: logger, time: time, execute: { $0() },
                keepBody: { keeper.keep(body: $2, location: $0, source: $1) }, onChange: { keeper.changed() })
            return (poller, keeper, transport)
        }

        let time = ManualTime()
        let (poller, keeper, transport) = try rig(time: time)
        // One whole round: the budget lets every request start at once, a microsecond apart.
        while case .wait(let until) = poller.step(), transport.log.count < 2 * count {
            time.set(max(until, time.monotonic()))
        }
        let storage = try StateStorage(directory: directory)
        var state = SavedState(savedAt: 0)
        let capture = RenderBenchmark.measure("capture", runs: 5) { state = keeper.capture(poller) }
        let bytes = StateFile.encode(state)
        let encode = RenderBenchmark.measure("encode", runs: 5) { _ = StateFile.write(state) { _ in } }
        let write = RenderBenchmark.measure("write", runs: 5) {
            try? storage.write(headerCount: StateFile.headerCount) { StateFile.write(state, emit: $0) }
        }
        let bodies = state.locations.reduce(0) { $0 + $1.sources.reduce(0) { $0 + $1.body.count } }
        let load = RenderBenchmark.measure("load", runs: 5) {
            let later = ManualTime(monotonic: 50, epoch: time.wall() - 50 + 60)
            guard let (fresh, freshKeeper, _) = try? rig(time: later) else { return }
            freshKeeper.load(into: fresh)
        }
        print(
            "STATE_BENCHMARK locations=\(count) sources=air_pollution+weather file_bytes=\(bytes.count) body_bytes=\(bodies) \(capture) \(encode) \(write) \(load)"
        )
    }
}
