import Dispatch
import Glibc
import Gzip
import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// A poller on a manual clock with a state keeper, like `Rig`; `restarted` is the next run of the
/// same process: a new monotonic clock, the wall clock `after` seconds on, the same directory.
private struct StateRig {
    let time: ManualTime
    let transport: FakeTransport
    let store: ReadingStore
    let poller: Poller
    let keeper: StateKeeper
    let logs: LogCapture
    let scratch: ScratchDirectory
    let directory: String

    init(
        _ configuration: Configuration, scratch: ScratchDirectory = ScratchDirectory(), subdirectory: String = "",
        time: ManualTime = ManualTime(),
        answer: FakeTransport.Answer? = nil
    ) throws {
        self.time = time
        self.scratch = scratch
        let directory = scratch.path + subdirectory
        self.directory = directory
        transport = answer.map { FakeTransport(time: time, answer: $0) } ?? FakeTransport(time: time)
        let logs = LogCapture()
        self.logs = logs
        let logger = Logger(
            level: .debug, format: .logfmt, secrets: [configuration.apiKey.value], sink: { logs.append($0) })
        let setup = configuration.pollerSetup(transport: transport)
        let store = ReadingStore(setup: setup, now: time.wall())
        self.store = store
        let keeper = StateKeeper(
            storage: try StateStorage(directory: directory), store: store, logger: logger, time: time
        ) {}
        self.keeper = keeper
        poller = Poller(
            setup: setup, store: store, logger: logger, time: time, execute: { $0() },
            keepBody: { keeper.keep(body: $2, location: $0, source: $1) }, onChange: { keeper.changed() })
        keeper.load(into: poller)
    }

    func run(until end: Double) {
        while true {
            let decision = poller.step()
            keeper.step(poller)
            guard case .wait(let until) = decision, until <= end else { break }
            time.set(max(until, time.monotonic()))
        }
        time.set(max(end, time.monotonic()))
        keeper.step(poller)
    }

    /// Shuts down (the final write) and starts again `after` seconds later on a fresh monotonic clock.
    func restarted(
        _ configuration: Configuration, after: Double, answer: FakeTransport.Answer? = nil
    ) throws -> StateRig {
        keeper.stop(poller)
        let wall = time.wall() + after
        return try StateRig(
            configuration, scratch: scratch, time: ManualTime(monotonic: 50, epoch: wall - 50), answer: answer)
    }

    func state(_ location: String, _ source: String) -> ReadingStore.SlotState? {
        let snapshot = store.snapshot()
        guard let slot = snapshot.layout.sourceNames.firstIndex(of: source),
            let state = snapshot.locations.first(where: { $0.location.name == location })
        else { return nil }
        return state.slots[slot]
    }
}

/// A fresh directory under /tmp, removed with everything in it when the last reference goes.
final class ScratchDirectory: Sendable {
    let path: String

    init() {
        var template = Array("/tmp/owx-state-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit { Self.remove(path) }

    private static func remove(_ path: String) {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
                }
                if name == "." || name == ".." { continue }
                remove(path + "/" + name)
            }
            closedir(directory)
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

private let places = [
    Location(name: "Zocca", latitude: 44.34, longitude: 10.99),
    Location(name: "London", place: .query(.name("London,GB"))),
]

@Suite struct StateFileTests {
    static let sample = SavedState(
        savedAt: 1_700_000_000, pausedUntil: 1_700_003_600, rateLimitStrikes: 2,
        recentStarts: [1_699_999_990, 1_699_999_995],
        locations: [
            .init(
                identity: Location(name: "Zocca", latitude: 44.34, longitude: 10.99).identity,
                sources: [
                    .init(
                        name: "weather", up: true, lastSuccess: 1_699_999_000, lastPollDuration: 0.2, lastError: nil,
                        lastAttempt: 1_699_999_000,
                        nextDue: 1_700_000_500, failures: 0, body: Fixture.bytes("current-zocca-rain.json")),
                    .init(
                        name: "air_pollution", up: false, lastSuccess: nil, lastPollDuration: 10, lastError: "timeout",
                        lastAttempt: 1_699_999_500,
                        nextDue: 1_700_000_700, failures: 3, body: []),
                ]),
            .init(identity: "nobody\u{0}at:0.0,0.0", sources: []),
        ])

    @Test func checksumIsZlibs() {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }
        for count in [0, 1, 7, 8, 9, 100, 10_000] {
            #expect(CRC32.checksum(bytes.prefix(count)) == Gzip.crc32(Array(bytes.prefix(count))))
        }
    }

    /// A state file written while air pollution was still `air-pollution` restores under its new name.
    @Test func aSourcesFormerNameIsReadAsItsName() throws {
        var old = Self.sample
        old.locations[0].sources[1].name = "air-pollution"
        #expect(try StateFile.decode(StateFile.encode(old)).renamingSources(Sources.formerNames) == Self.sample)
    }

    /// Files written by earlier versions name their locations this way: a change here forgets them all.
    @Test func aLocationsIdentityIsTheTextEarlierFilesHold() {
        #expect(Location(name: "Zocca", latitude: 44.34, longitude: 10.99).identity == "Zocca\u{0}at:44.34,10.99")
        #expect(Location(name: "Home", place: .query(.name("London,GB"))).identity == "Home\u{0}query:London,GB")
        #expect(Location(name: "Office", place: .query(.zip("94040,US"))).identity == "Office\u{0}query:zip:94040,US")
    }

    @Test func roundTrips() throws {
        #expect(try StateFile.decode(StateFile.encode(Self.sample)) == Self.sample)
        var pieces: [[UInt8]] = []
        let header = StateFile.write(Self.sample, pieceSize: 100) { pieces.append($0) }
        #expect(pieces.count >= 2 && header.count == StateFile.headerCount)
        #expect(header + pieces.joined() == StateFile.encode(Self.sample), "streamed in pieces, the same bytes")
        #expect(try StateFile.decode(StateFile.encode(SavedState(savedAt: 0))) == SavedState(savedAt: 0))
    }

    @Test func refusesTruncatedCorruptFutureAndForeignFiles() {
        let bytes = StateFile.encode(Self.sample)
        func reason(_ bytes: [UInt8]) -> String? {
            do {
                _ = try StateFile.decode(bytes)
                return nil
            } catch { return error.description }
        }
        #expect(reason(Array(bytes.prefix(bytes.count - 1)))?.contains("truncated") == true)
        #expect(reason(Array(bytes.prefix(10)))?.contains("too short") == true)
        var flipped = bytes
        flipped[bytes.count - 40] ^= 0x01
        #expect(reason(flipped)?.contains("checksum") == true)
        var future = bytes
        future[8] = 3
        #expect(reason(future)?.contains("version 3") == true)
        #expect(reason(Array("{\"json\": true, \"padding\": \"................\"}".utf8))?.contains("magic") == true)
    }

    /// Thousands of random mutations (flips, cuts, splices, with the checksum fixed up so the payload
    /// parser is reached): the decoder throws or returns, never crashes or reads out of bounds.
    @Test func survivesMutations() {
        var random = SeededGenerator(seed: 13)  // seeded, so a failing mutation can be replayed
        let original = StateFile.encode(Self.sample)
        var decoded = 0
        for round in 0..<4000 {
            var bytes = original
            for _ in 0..<(1 + Int(random.next() % 4)) {
                guard !bytes.isEmpty else { break }
                let position = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[position] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                case 1: bytes.removeSubrange(position..<min(bytes.count, position + Int(random.next() % 64)))
                case 2:
                    bytes.insert(
                        contentsOf: (0..<Int(random.next() % 16)).map { _ in UInt8(truncatingIfNeeded: random.next()) },
                        at: position)
                default: bytes[position] = [0, 0xFF, 0x7F, 0x80][Int(random.next() % 4)]
                }
            }
            if round % 2 == 0, bytes.count >= StateFile.headerCount {
                // Re-seal, as someone editing the file on purpose would.
                var sealed = StateFile.magic + withUnsafeBytes(of: StateFile.version.littleEndian, Array.init)
                let payload = Array(bytes[StateFile.headerCount...])
                let crc = CRC32.checksum(payload)
                for shift in stride(from: 0, to: 32, by: 8) {
                    sealed.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift)))
                }
                for shift in stride(from: 0, to: 64, by: 8) {
                    sealed.append(UInt8(truncatingIfNeeded: UInt64(payload.count) >> UInt64(shift)))
                }
                bytes = sealed + payload
            }
            guard let state = try? StateFile.decode(bytes) else { continue }
            decoded += 1
            // What decodes must also restore without harm: into a poller that has the sample's location.
            if decoded % 8 == 0 {
                let rig = Rig(
                    configuration([places[0]], collectors: ["weather": .seconds(600), "air_pollution": .seconds(3600)]))
                _ = StateRestore.apply(state, to: rig.poller, store: rig.store, wallNow: 1_700_000_100, now: 1000)
                rig.run(until: 1000 + 7200)
            }
        }
        #expect(decoded > 100, "re-sealed mutations should often still parse, reaching the restore's own checks")
    }
}

extension StateStorage {
    /// Puts these exact bytes in the file, as a damaged or hand-made one.
    func write(_ bytes: [UInt8]) throws(StateStorageError) {
        try write(headerCount: 0) { emit in
            emit(bytes)
            return []
        }
    }
}

@Suite struct StateRestartTests {
    private func setup() -> Configuration {
        configuration(places, collectors: ["weather": .seconds(600), "air_pollution": .seconds(3600)])
    }

    @Test func restartKeepsReadingsPlacesScheduleAndHealth() throws {
        let config = setup()
        let first = try StateRig(config)
        first.run(until: 1000 + 30)
        #expect(first.transport.log.count == 5, "geocoding London, then weather and air pollution at both")
        let file = try #require(try StateStorage(directory: first.directory).read()).bytes
        #expect(!String(decoding: file, as: UTF8.self).contains("test-key-123"), "the key is never written")

        // Two minutes later: everything served at once, nothing asked again.
        let second = try first.restarted(config, after: 120)
        #expect(second.store.snapshot().allAttempted)
        #expect(second.state("Zocca", "weather")?.reading is CurrentWeather)
        #expect(second.state("London", "air_pollution")?.reading is AirPollution)
        #expect(second.store.snapshot().locations[1].resolved?.name == "London")
        #expect(
            second.logs.all.contains {
                $0.contains("state restored") && $0.contains("readings=5") && $0.contains("places=1")
            })
        let exposition = String(decoding: renderPlain(second.store.snapshot(), now: second.time.wall()), as: UTF8.self)
        #expect(exposition.contains("openweather_temperature_celsius{location=\"Zocca\"}"))
        #expect(exposition.contains("openweather_temperature_celsius{location=\"London\"}"))
        second.run(until: 50 + 400)
        #expect(
            second.transport.log.isEmpty,
            "weather was polled 2.5 minutes before the restart; its 10 minutes are not over")
        second.run(until: 50 + 600)
        #expect(second.transport.requests(to: "/data/2.5/weather").count == 2)
        #expect(second.transport.requests(to: "/geo/1.0/direct").isEmpty, "a resolved place is not resolved again")
        #expect(second.transport.requests(to: "/data/2.5/air_pollution").isEmpty)
    }

    /// One Call fills the weather and forecast slots from its one answer: the file keeps One Call's
    /// body only, and a restart gives all three slots their readings back from it.
    @Test func oneCallStandInReadingsComeBack() throws {
        let config = configuration([places[0]], collectors: ["onecall": .seconds(600)])
        let first = try StateRig(config)
        first.run(until: 1000 + 30)
        #expect(first.transport.log.map(\.request.path) == ["/data/3.0/onecall"])
        let saved = try StateFile.decode(try #require(try StateStorage(directory: first.directory).read()).bytes)
        let bodies = Dictionary(
            uniqueKeysWithValues: try #require(saved.locations.first).sources.map { ($0.name, $0.body) })
        #expect(bodies["onecall"]?.isEmpty == false)
        #expect(bodies["weather"] == [] && bodies["forecast"] == [], "a stood-in slot has no body of its own")

        let second = try first.restarted(config, after: 120)
        let oneCall = try #require(second.state("Zocca", "onecall")?.reading as? OneCall)
        #expect(second.state("Zocca", "weather")?.reading as? CurrentWeather == oneCall.current)
        #expect(second.state("Zocca", "forecast")?.reading as? Forecast == oneCall.hourly)
        #expect(second.state("Zocca", "weather")?.up == true)
        #expect(second.logs.all.contains { $0.contains("state restored") && $0.contains("readings=3") })
        let exposition = String(decoding: renderPlain(second.store.snapshot(), now: second.time.wall()), as: UTF8.self)
        #expect(exposition.contains("openweather_temperature_celsius{location=\"Zocca\"}"))
        #expect(exposition.hasLine("openweather_up{location=\"Zocca\",source=\"weather\"} 1"))
        second.run(until: 50 + 400)
        #expect(
            second.transport.log.isEmpty, "One Call was asked 2 minutes before the restart; its 10 minutes are not over"
        )
    }

    @Test func aChangedLocationKeepsNothing() throws {
        let first = try StateRig(setup())
        first.run(until: 1030)
        var moved = setup()
        moved.locations[0] = Location(name: "Zocca", latitude: 44.35, longitude: 10.99)
        let second = try first.restarted(moved, after: 60)
        #expect(second.state("Zocca", "weather")?.reading == nil)
        #expect(second.state("Zocca", "weather")?.up == nil)
        #expect(second.state("London", "weather")?.reading is CurrentWeather)
        second.run(until: 53)
        #expect(second.transport.log.map(\.request.path).sorted() == ["/data/2.5/air_pollution", "/data/2.5/weather"])
    }

    @Test func staleReadingsAreNotServedButThePlaceStays() throws {
        let first = try StateRig(setup())
        first.run(until: 1030)
        // Weather shows for 30 minutes (3 × 10m), air pollution for 3 hours.
        let second = try first.restarted(setup(), after: 2 * 3600)
        #expect(second.state("Zocca", "weather")?.reading == nil)
        #expect(second.state("Zocca", "weather")?.lastSuccess != nil, "its health (the last success) stays")
        #expect(second.state("Zocca", "air_pollution")?.reading is AirPollution)
        #expect(second.store.snapshot().locations[1].resolved != nil)
        second.run(until: 60)
        #expect(second.transport.requests(to: "/data/2.5/weather").count == 2, "overdue: polled at once")
        #expect(second.transport.requests(to: "/geo/1.0/direct").isEmpty)
    }

    @Test func aReadingThatNoLongerDecodesIsPolledAtOnce() throws {
        let first = try StateRig(configuration([places[0]]))
        first.run(until: 1001)
        first.keeper.stop(first.poller)
        // As if an upgrade's decoder refused the saved answer: a body cut short.
        let storage = try StateStorage(directory: first.directory)
        var saved = try StateFile.decode(try #require(try storage.read()).bytes)
        saved.locations[0].sources[0].body.removeLast(10)
        try storage.write(StateFile.encode(saved))
        let second = try StateRig(
            configuration([places[0]]), scratch: first.scratch,
            time: ManualTime(monotonic: 50, epoch: first.time.wall() + 60 - 50))
        #expect(second.state("Zocca", "weather")?.reading == nil)
        second.run(until: 51)
        #expect(second.transport.log.count == 1, "not left blank until its next due time, 10 minutes away")
        #expect(second.state("Zocca", "weather")?.reading is CurrentWeather)
    }

    @Test func anHourOf429PauseSurvivesARestart() throws {
        let blocked: FakeTransport.Answer = { _ in
            .failure(.http(status: 429, message: "blocked", retryAfterSeconds: 3600))
        }
        let config = configuration([places[0]])
        let first = try StateRig(config, answer: blocked)
        first.run(until: 1010)
        #expect(first.transport.log.count == 1)
        let second = try first.restarted(config, after: 60)
        #expect(second.logs.all.contains { $0.contains("state restored") && $0.contains("rate_limit_pause=58m50s") })
        second.run(until: 50 + 3500)
        #expect(second.transport.log.isEmpty, "the pause runs on through the restart")
        second.run(until: 50 + 3560)
        #expect(second.transport.log.count == 1)
    }

    @Test func backoffSurvivesARestart() throws {
        let failing: FakeTransport.Answer = { _ in .failure(.http(status: 503, message: "down", retryAfterSeconds: nil))
        }
        let config = configuration([places[0]])
        let first = try StateRig(config, answer: failing)
        // One failure: the retry is 10 minutes ± 20% away.
        first.run(until: 1001)
        #expect(first.transport.log.count == 1)
        let second = try first.restarted(config, after: 5)
        second.run(until: 50 + 400)
        #expect(second.transport.log.isEmpty, "the retry keeps its time; a restart does not make it due at once")
        second.run(until: 50 + 800)
        #expect(second.transport.log.count == 1)
    }

    @Test func theBudgetSurvivesARestart() throws {
        let locations = (0..<5).map { Location(name: "L\($0)", latitude: Double($0), longitude: 0) }
        let config = configuration(locations, budget: 2)
        let first = try StateRig(config)
        first.run(until: 1000 + 31)
        #expect(first.transport.log.count == 2, "2 a minute, spaced by 30.5 s")
        let second = try first.restarted(config, after: 1)
        second.run(until: 50 + 28.9)
        #expect(second.transport.log.isEmpty, "the last start was 1.5 s ago: the next may come 30.5 s after it")
        second.run(until: 50 + 29)
        #expect(second.transport.log.count == 1)
    }

    @Test func aCorruptFileIsOneWarningAndACleanStart() throws {
        let scratch = ScratchDirectory()
        let storage = try StateStorage(directory: scratch.path)
        try storage.write(Array(StateFile.encode(StateFileTests.sample).dropLast(3)))
        let rig = try StateRig(configuration([places[0]]), scratch: scratch)
        #expect(rig.logs.all.count { $0.contains("level=warn") } == 1)
        #expect(rig.logs.all.contains { $0.contains("state file cannot be used") && $0.contains("truncated") })
        rig.run(until: 1001)
        #expect(rig.transport.log.count == 1)
        rig.run(until: 1010)
        #expect(
            try StateFile.decode(try #require(try storage.read()).bytes).locations.count == 1,
            "the next write replaces it")
    }

    @Test func writesArePacedWhateverTheChanges() throws {
        let locations = (0..<50).map { Location(name: "L\($0)", latitude: Double($0), longitude: 0) }
        let rig = try StateRig(configuration(locations, budget: 6000))
        var writes: [Double] = []
        var last = 0.0
        for tick in 0..<200 {
            rig.time.set(1000 + Double(tick) * 0.1)
            rig.poller.step()
            rig.keeper.step(rig.poller)
            let stamp = rig.store.snapshot().stateWrites?.lastSuccess ?? 0
            if stamp != last {
                writes.append(stamp)
                last = stamp
            }
        }
        #expect(rig.transport.log.count == 50)
        #expect(writes.count >= 2 && writes.count <= 4, "20 s of changes: a write at most every 5 s")
        for (earlier, later) in zip(writes, writes.dropFirst()) {
            #expect(later - earlier >= StateKeeper.spacing - 1e-6)
        }
    }

    @Test func anUnwritableDirectoryLaterIsAWarningAndAMetric() throws {
        let rig = try StateRig(configuration([places[0]]))
        let directory = rig.directory
        #expect(rmdir(directory) == 0)
        rig.run(until: 1001)
        rig.time.advance(StateKeeper.spacing)
        rig.poller.apply(configuration([places[0]]).pollerSetup(transport: rig.transport))
        rig.keeper.step(rig.poller)
        let writes = try #require(rig.store.snapshot().stateWrites)
        #expect(writes.failures == 2 && writes.lastSuccess == 0)
        #expect(
            rig.logs.all.count { $0.contains("cannot write the state file") } == 1, "one warning, not one per attempt")
        let exposition = String(decoding: renderPlain(rig.store.snapshot(), now: rig.time.wall()), as: UTF8.self)
        #expect(exposition.contains("openweather_exporter_state_write_failures_total 2\n"))
        #expect(exposition.contains("openweather_exporter_state_last_write_success_timestamp_seconds 0\n"))
        #expect(mkdir(directory, 0o700) == 0)
        rig.time.advance(StateKeeper.spacing)
        rig.keeper.step(rig.poller)
        #expect(rig.store.snapshot().stateWrites?.lastSuccess == rig.time.wall())
        #expect(rig.logs.all.contains { $0.contains("state file written again") })
    }

    /// A request in flight when the state is saved counted against the plan: the next run asks again
    /// a minute after it was sent, not at once; and an answer that came in before the last write is kept.
    @Test func requestsInFlightAtShutdown() throws {
        let scratch = ScratchDirectory()
        let time = ManualTime()
        let held = Locked<[@Sendable () -> Void]>([])
        let config = configuration([places[0]])
        let transport = FakeTransport(time: time)
        let logger = Logger(level: .error, format: .logfmt, secrets: [], sink: { _ in })
        let setup = config.pollerSetup(transport: transport)
        let store = ReadingStore(setup: setup, now: time.wall())
        let keeper = StateKeeper(
            storage: try StateStorage(directory: scratch.path), store: store, logger: logger, time: time
        ) {}
        let poller = Poller(
            setup: setup, store: store, logger: logger, time: time,
            execute: { work in held.withLock { $0.append(work) } },
            keepBody: { keeper.keep(body: $2, location: $0, source: $1) }, onChange: { keeper.changed() })
        poller.step()
        #expect(transport.log.isEmpty && held.withLock { $0.count } == 1, "sent, not answered")
        time.advance(1)
        let inFlight = keeper.capture(poller).locations[0].sources[0]
        #expect(inFlight.nextDue == time.wall() - 1 + StateKeeper.inFlightRetry)
        #expect(inFlight.lastAttempt == time.wall() - 1)

        // The answer arrives during the shutdown's grace: stored, and in the last write.
        let answers = held.withLock { list in
            defer { list = [] }
            return list
        }
        for answer in answers { answer() }
        poller.settle(grace: 0)
        keeper.stop(poller)
        let saved = try StateFile.decode(try #require(try StateStorage(directory: scratch.path).read()).bytes)
        #expect(saved.locations[0].sources[0].up == true && !saved.locations[0].sources[0].body.isEmpty)
        #expect(
            saved.locations[0].sources[0].nextDue! > time.wall() + 300, "polled: next due at its phase, minutes away")
    }

    @Test func theFileIsTheOwnersAlone() throws {
        let rig = try StateRig(configuration([places[0]]), subdirectory: "/state")
        let directory = rig.directory
        rig.run(until: 1010)
        var info = stat()
        #expect(stat(directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(stat(directory + "/" + StateStorage.fileName, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func aDirectoryThatCannotBeUsedIsAnError() throws {
        let scratch = ScratchDirectory()
        let parent = scratch.path
        let file = parent + "/plain-file"
        try StateStorage(directory: parent).write([1])
        #expect(rename(parent + "/" + StateStorage.fileName, file) == 0)
        #expect(throws: StateStorageError.self) { try StateStorage(directory: file) }
        #expect(throws: StateStorageError.self) { try StateStorage(directory: "/proc/self/owx-state") }
        #expect(throws: StateStorageError.self) { try StateStorage(directory: parent + "/missing/state") }
    }
}

@Suite struct StateConfigurationTests {
    @Test func offByDefaultAlsoInTheDemo() throws {
        #expect(try load(["--location", "A=1,2"]).storagePath == nil)
        #expect(try load(["--demo"]).storagePath == nil)
        #expect(try load(["--demo", "--storage.path=/tmp/x"]).storagePath == "/tmp/x")
    }

    @Test func fromTheFlagTheEnvironmentOrTheFile() throws {
        #expect(try load(["--location", "A=1,2", "--storage.path", "/var/lib/owx"]).storagePath == "/var/lib/owx")
        #expect(
            try load(
                ["--location", "A=1,2"],
                environment: ["OPENWEATHER_API_KEY": "k", "OPENWEATHER_EXPORTER_STORAGE_PATH": "/env"]
            ).storagePath == "/env")
        let file = temporaryFile(
            #"{"storage": {"path": "/from-file"}, "locations": [{"name": "A", "latitude": 1, "longitude": 2}]}"#)
        defer { unlink(file) }
        #expect(try load(["--config.file", file]).storagePath == "/from-file")
        #expect(Flag.helpText.contains("--storage.path=DIR"))
    }

    @Test func anEmptyPathIsAnError() {
        #expect(throws: ConfigError.self) { try load(["--location", "A=1,2", "--storage.path="]) }
    }
}

/// Whoever else can write the state directory can plant names in it: a link must never be followed
/// (it once made the exporter overwrite its target), a FIFO must not hang startup, and a directory
/// or file others control is worth a warning.
@Suite struct StateDirectoryTests {
    private static func contents(_ path: String) -> String? {
        (try? readFile(path)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func linksPlantedAtTheTemporaryNamesAreNotFollowed() throws {
        let scratch = ScratchDirectory()
        let precious = temporaryFile("root's own file\n", mode: 0o644)
        defer { unlink(precious) }
        let directory = scratch.path
        #expect(symlink(precious, directory + "/" + StateStorage.fileName + ".tmp") == 0)
        #expect(symlink(precious, directory + "/.write-test-\(getpid())") == 0)
        let rig = try StateRig(configuration([places[0]]), scratch: scratch)
        rig.run(until: 1010)
        #expect(Self.contents(precious) == "root's own file\n", "the target is untouched")
        var info = stat()
        #expect(stat(precious, &info) == 0 && info.st_mode & 0o777 == 0o644, "and keeps its mode")
        #expect(lstat(directory + "/" + StateStorage.fileName, &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
        #expect(
            try StateFile.decode(try #require(try StateStorage(directory: directory).read()).bytes).locations.count == 1
        )
        #expect(
            lstat(directory + "/" + StateStorage.fileName + ".tmp", &info) == 0 && info.st_mode & S_IFMT == S_IFLNK,
            "the planted link is left alone")
    }

    /// A FIFO at the state path once hung startup, deaf to SIGTERM: it is a warning and a clean start.
    @Test func aFIFOAtTheStatePathIsAWarningNotAHang() throws {
        let scratch = ScratchDirectory()
        let path = scratch.path + "/" + StateStorage.fileName
        #expect(mkfifo(path, 0o600) == 0)
        let loaded = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var rig: StateRig? }  // written before the signal, read after
        let box = Box()
        DispatchQueue.global().async {
            box.rig = try? StateRig(configuration([places[0]]), scratch: scratch)
            loaded.signal()
        }
        if loaded.wait(timeout: .now() + 10) == .timedOut {
            // Stuck opening the FIFO: a writer lets it go, so the test fails instead of hanging.
            let writer = open(path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            loaded.wait()
            Issue.record("loading the state blocked on a FIFO")
        }
        let started = try #require(box.rig)
        #expect(
            started.logs.all.contains {
                $0.contains("cannot read the state file; starting clean") && $0.contains("it is a FIFO")
            }, "\(started.logs.all)")
        started.run(until: 1010)
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "the first write replaces it")
    }

    @Test func aLinkAtTheStatePathIsNotRead() throws {
        let scratch = ScratchDirectory()
        let elsewhere = temporaryFile()
        defer { unlink(elsewhere) }
        try writeFile(elsewhere, StateFile.encode(StateFileTests.sample))
        #expect(symlink(elsewhere, scratch.path + "/" + StateStorage.fileName) == 0)
        let rig = try StateRig(configuration([places[0]]), scratch: scratch)
        #expect(rig.logs.all.contains { $0.contains("cannot read the state file") && $0.contains("symbolic link") })
        #expect(!rig.logs.all.contains { $0.contains("state restored") })
    }

    /// The sticky bit only stops others removing our files: they can still plant names, so it warns too.
    @Test(arguments: [
        (0o777 as mode_t, "every user"), (0o770, "its group"), (0o1777, "every user"), (0o1770, "its group"),
        (0o700, nil), (0o750, nil),
    ])
    func aDirectoryOthersCanWriteIsAWarning(mode: mode_t, who: String?) throws {
        let scratch = ScratchDirectory()
        #expect(chmod(scratch.path, mode) == 0)
        let rig = try StateRig(configuration([places[0]]), scratch: scratch)
        let warnings = rig.logs.all.filter { $0.contains("level=warn") && $0.contains("is writable by") }
        if let who {
            #expect(warnings.count == 1 && warnings[0].contains("writable by \(who)"), "\(rig.logs.all)")
        } else {
            #expect(warnings.isEmpty, "\(warnings)")
        }
    }

    /// The temporary name was once fixed: anything there that could not be removed (another user's file
    /// in a sticky directory, a directory) stopped every write for good. Each write now makes a name of its own.
    @Test func aTakenTemporaryNameDoesNotStopWrites() throws {
        let scratch = ScratchDirectory()
        #expect(chmod(scratch.path, 0o1777) == 0)
        let planted = scratch.path + "/" + StateStorage.fileName + ".tmp"
        #expect(mkdir(planted, 0o755) == 0 && mkdir(planted + "/inside", 0o755) == 0)
        let storage = try StateStorage(directory: scratch.path)
        for _ in 0..<3 { try storage.write(StateFile.encode(StateFileTests.sample)) }
        #expect(
            try StateFile.decode(try #require(try storage.read()).bytes).locations.count
                == StateFileTests.sample.locations.count)
        #expect(
            Self.names(scratch.path) == [StateStorage.fileName, StateStorage.fileName + ".tmp"],
            "no temporary is left behind")
    }

    /// A write that fails after its temporary file is made (here the rename, over a directory) removes it.
    @Test func aFailedWriteLeavesNoTemporary() throws {
        let scratch = ScratchDirectory()
        let storage = try StateStorage(directory: scratch.path)
        #expect(mkdir(storage.path, 0o700) == 0 && mkdir(storage.path + "/inside", 0o700) == 0)
        #expect(throws: StateStorageError.self) { try storage.write(StateFile.encode(StateFileTests.sample)) }
        #expect(Self.names(scratch.path) == [StateStorage.fileName], "no temporary is left behind")
    }

    /// At start, temporaries a crashed write left are removed: ours only (our prefix, our uid, regular
    /// files); a link there is neither followed nor removed, and another user's file stays.
    @Test func leftoverTemporariesOfOurOwnAreRemovedAtStart() throws {
        let scratch = ScratchDirectory()
        let precious = temporaryFile("root's own file\n", mode: 0o644)
        defer { unlink(precious) }
        let prefix = scratch.path + "/" + StateStorage.fileName + ".tmp"
        try writeFile(prefix, "old fixed name")
        try writeFile(prefix + "-1f2e3d", "a crashed write")
        try writeFile(scratch.path + "/unrelated", "not ours to remove")
        #expect(symlink(precious, prefix + "-link") == 0)
        var kept = [StateStorage.fileName + ".tmp-link", "unrelated"]
        if geteuid() == 0 {
            try writeFile(prefix + "-other", "another user's")
            #expect(chown(prefix + "-other", 65534, 65534) == 0)
            kept.insert(StateStorage.fileName + ".tmp-other", at: 1)
        }
        _ = try StateStorage(directory: scratch.path)
        #expect(Self.names(scratch.path) == kept)
        #expect(Self.contents(precious) == "root's own file\n")
    }

    private static func names(_ directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the file away"))
    func aFileOfAnotherUserIsAWarning() throws {
        let scratch = ScratchDirectory()
        let storage = try StateStorage(directory: scratch.path)
        try storage.write(StateFile.encode(StateFileTests.sample))
        #expect(chown(storage.path, 4242, 4242) == 0)
        let rig = try StateRig(configuration([places[0]]), scratch: scratch)
        #expect(
            rig.logs.all.contains { $0.contains("belongs to another user") && $0.contains("owner_uid=4242") },
            "\(rig.logs.all)")
    }

    /// A hand-made file asking for a day's pause (a Retry-After of 10^12 s once saved as one) is held
    /// to the hour any 429 pause is held to.
    @Test func aRestoredPauseIsAtMostAnHour() throws {
        let scratch = ScratchDirectory()
        let time = ManualTime()
        var saved = SavedState(savedAt: time.wall() - 10)
        saved.pausedUntil = time.wall() + 86_400
        saved.rateLimitStrikes = 1
        try StateStorage(directory: scratch.path).write(StateFile.encode(saved))
        let rig = try StateRig(configuration([places[0]]), scratch: scratch, time: time)
        #expect(
            rig.logs.all.contains { $0.contains("state restored") && $0.hasSuffix("rate_limit_pause=1h") },
            "\(rig.logs.all)")
        rig.run(until: time.monotonic() + 3599)
        #expect(rig.transport.log.isEmpty)
        rig.run(until: time.monotonic() + 2)
        #expect(rig.transport.log.count == 1)
    }

    /// Times in a file no calendar holds are shown at its ends, not trapped on.
    @Test func absurdTimesInTheFileDoNotTrap() throws {
        let scratch = ScratchDirectory()
        var saved = StateFileTests.sample
        saved.savedAt = 1e300
        saved.pausedUntil = .greatestFiniteMagnitude
        try StateStorage(directory: scratch.path).write(StateFile.encode(saved))
        let rig = try StateRig(configuration([places[0]]), scratch: scratch)
        #expect(
            rig.logs.all.contains { $0.contains("state restored") && $0.contains("saved=9999-12-31T23:59:59.000Z") },
            "\(rig.logs.all)")
    }
}

/// The day's request counts in the state file: a restart the same UTC day goes on counting, one on a
/// later day starts at 0, and a file written before they were kept (version 1) still loads.
@Suite struct DailyCountStateTests {
    static let five = (0..<5).map { Location(name: "P\($0)", latitude: Double($0), longitude: 1) }
    static let ten = (0..<10).map { Location(name: "P\($0)", latitude: Double($0), longitude: 1) }

    /// 8 One Call requests a day. The first run polls 5 places at 10:00 UTC; a restart a minute later
    /// polls 10, the 5 new ones at once: only 3 go out (8 - 5), the other 2 at 00:00 UTC.
    @Test func aRestartTheSameDayGoesOnCounting() throws {
        let first = try StateRig(
            withOneCallLimit(configuration(Self.five, collectors: ["onecall": .seconds(600)]), perDay: 8),
            time: manualTime(day: 20_200, hours: 10))
        first.run(until: 1000 + 60)
        #expect(first.transport.requests(to: "/data/3.0/onecall").count == 5)
        let config = withOneCallLimit(configuration(Self.ten, collectors: ["onecall": .seconds(600)]), perDay: 8)
        let second = try first.restarted(config, after: 60)
        #expect(second.store.snapshot().daily?.count(named: "onecall") == 5, "restored, shown before the first step")
        second.run(until: 50 + 3600)
        #expect(second.transport.requests(to: "/data/3.0/onecall").count == 3, "5 sent before the restart, 8 allowed")
        #expect(second.store.snapshot().daily?.count(named: "onecall") == 8)
        // 00:00 UTC is 14h - 2m away: the two held back go then, with any place due since.
        let midnight = 50 + 14 * 3600 - 120.0
        second.run(until: midnight - 1)
        #expect(second.transport.requests(to: "/data/3.0/onecall").count == 3)
        second.run(until: midnight + 30)
        let today = second.transport.requests(to: "/data/3.0/onecall").filter { $0.time >= midnight }
        #expect(today.count >= 2 && today.allSatisfy { $0.time < midnight + 15 }, "\(today.map(\.time))")
        #expect(second.store.snapshot().daily?.count(named: "onecall") == today.count)
    }

    @Test func aRestartOnALaterDayStartsAtZero() throws {
        let config = withOneCallLimit(configuration(Self.five, collectors: ["onecall": .seconds(600)]), perDay: 8)
        let first = try StateRig(config, time: manualTime(day: 20_200, hours: 23))
        first.run(until: 1000 + 60)
        let second = try first.restarted(config, after: 3600)
        second.run(until: 51)
        #expect(second.store.snapshot().daily?.day == 20_201)
        #expect(
            second.store.snapshot().daily?.count(named: "onecall")
                == second.transport.requests(to: "/data/3.0/onecall").count)
    }

    /// A version 1 file (before the counts): its readings load, the counts start at 0.
    @Test func aFileOfVersionOneStillLoads() throws {
        let scratch = ScratchDirectory()
        let config = configuration([places[0]])
        let first = try StateRig(config, scratch: scratch)
        first.run(until: 1001)
        first.keeper.stop(first.poller)
        var saved = try StateFile.decode(try #require(try StateStorage(directory: scratch.path).read()).bytes)
        #expect(saved.daily?.count(of: "weather") == 1)
        saved.daily = nil
        // Version 1: the same bytes without the trailing counts (day, total, two empty lists).
        var bytes = StateFile.encode(saved)
        bytes.removeLast(16)
        bytes[8] = 1
        let payload = Array(bytes[StateFile.headerCount...])
        let crc = CRC32.checksum(payload)
        for index in 0..<4 { bytes[12 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
        for index in 0..<8 {
            bytes[16 + index] = UInt8(truncatingIfNeeded: UInt64(payload.count) >> (8 * UInt64(index)))
        }
        #expect(try StateFile.decode(bytes) == saved)
        try StateStorage(directory: scratch.path).write(bytes)
        let second = try StateRig(
            config, scratch: scratch, time: ManualTime(monotonic: 50, epoch: first.time.wall() + 60 - 50))
        #expect(second.state("Zocca", "weather")?.reading is CurrentWeather)
        #expect(second.logs.all.contains { $0.contains("state restored") })
        #expect(second.store.snapshot().daily?.count(named: "weather") == 0)
    }
}

extension SavedState.Daily {
    func count(of source: String) -> Int? { counts.first { $0.name == source }?.count }
}
