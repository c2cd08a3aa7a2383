import Glibc
import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// Issue 27: a daily limit is a hard ceiling under concurrency. A poll holds the room for the most it
/// may send from its start to its end, every request is counted where it leaves (the client's resend
/// included), a restart keeps what polls in flight may still send, and backfill keeps the same day.
@Suite struct DailyCeilingTests {
    /// 00:00 UTC, 1 December 2025.
    static let midnight = 1_764_547_200.0
    static let places = (0..<6).map { "--location=P\($0)=\(30 + $0),\(-90 - $0)" }

    func load(_ arguments: [String]) throws -> Configuration {
        guard
            case .run(let configuration) = try ConfigurationLoader(
                arguments: arguments, environment: ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"]
            ).load()
        else { throw ConfigError("not a run") }
        return configuration
    }

    /// A current record that lists 16 alert IDs never seen before, each time it is asked.
    static func alertBursts() -> FakeTransport.Answer {
        let served = Locked(0)
        let current = String(decoding: Fixture.bytes("onecall4-current-tulsa.json"), as: UTF8.self)
        return { request in
            guard request.path == "/data/4.0/onecall/current" else { return FakeTransport.fixtures(request) }
            let round = served.withLock {
                $0 += 1
                return $0
            }
            let ids = (0..<16).map { "\"BURST-\(round)-\($0)\"" }.joined(separator: ",")
            return .success(
                Array(
                    current.replacing(
                        "\"alerts\":[\"4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31\"]", with: "\"alerts\":[\(ids)]"
                    ).utf8))
        }
    }

    /// A poller whose answers take `latency` on the test's clock: a poll's requests go when its answer
    /// is due, so polls started meanwhile are in flight together, as with slow answers in production.
    final class SlowRig: Sendable {
        let time: ManualTime
        let transport: FakeTransport
        let store: ReadingStore
        let poller: Poller
        let logs = LogCapture()
        let latency: Double
        private let pending = Locked<[(due: Double, work: @Sendable () -> Void)]>([])

        init(
            _ configuration: Configuration, time: ManualTime, transport: FakeTransport, latency: Double = 0.2,
            sharedDay: SharedDay? = nil
        ) {
            self.time = time
            self.transport = transport
            self.latency = latency
            let logs = self.logs
            let logger = Logger(level: .debug, format: .logfmt, secrets: [], sink: { logs.append($0) })
            let setup = configuration.pollerSetup(transport: transport)
            store = ReadingStore(setup: setup, now: time.wall())
            let pending = self.pending
            poller = Poller(
                setup: setup, store: store, logger: logger, time: time,
                execute: { work in pending.withLock { $0.append((time.monotonic() + latency, work)) } },
                sharedDay: sharedDay, onChange: {})
        }

        /// Polls in flight, not answered yet.
        var inFlight: Int { pending.withLock { $0.count } }

        /// Moves the clock from event to event (a start the schedule allows, an answer due) until `end`.
        func run(until end: Double, answering: Bool = true) {
            while true {
                let decision = poller.step()
                let now = time.monotonic()
                if answering {
                    let due = pending.withLock { list in
                        defer { list.removeAll { $0.due <= now } }
                        return list.filter { $0.due <= now }
                    }
                    if !due.isEmpty {
                        for answer in due { answer.work() }
                        continue
                    }
                }
                var next = end
                if case .wait(let until) = decision { next = min(next, until) }
                if answering, let answer = pending.withLock({ $0.map(\.due).min() }) { next = min(next, answer) }
                guard next < end else { break }
                time.set(max(next, now))
            }
            time.set(max(end, time.monotonic()))
        }

        /// Answers every poll still in flight (a stopped exporter's abandoned requests finishing).
        func answerAll() {
            let all = pending.withLock { list in
                defer { list = [] }
                return list
            }
            for answer in all { answer.work() }
        }
    }

    /// Calls to One Call 4.0 per UTC day of the test's clock.
    static func fourPerDay(_ transport: FakeTransport, epoch: Double) -> [Int: Int] {
        Dictionary(
            transport.log.filter { $0.request.path.hasPrefix("/data/4.0/") }.map {
                (Int(($0.time + epoch) / 86_400), 1)
            }, uniquingKeysWith: +)
    }

    /// Six places, One Call 4.0 polled, answers taking 0.2 s, 16 new alert IDs a poll, and a limit of
    /// 30 calls a day on the source (`--collector.onecall4.max-requests-per-day`) or on the key
    /// (`--openweather.max-requests-per-day`, every source together): measured before the room was
    /// held, 132 calls in the day; now never more than 30, each counted.
    @Test(
        arguments: [
            ("--collector.onecall4.max-requests-per-day=30", "onecall4"),
            ("--openweather.max-requests-per-day=30", nil),
        ] as [(String, String?)])
    func overlappingPollsNeverPassADailyLimit(limit: String, source: String?) throws {
        let config = try load(
            Self.places + ["--collector.onecall4", limit, "--openweather.max-requests-per-minute=600"])
        let time = ManualTime(monotonic: 1000, epoch: Self.midnight - 1000)
        let rig = SlowRig(config, time: time, transport: FakeTransport(time: time, answer: Self.alertBursts()))
        rig.run(until: 1000 + 2 * 86_400 - 1)
        // The calls the limit holds, per UTC day of the test's clock.
        let perDay =
            source == nil
            ? Dictionary(rig.transport.log.map { (Int(($0.time + time.epoch) / 86_400), 1) }, uniquingKeysWith: +)
            : Self.fourPerDay(rig.transport, epoch: time.epoch)
        #expect(perDay.count == 2 && perDay.values.allSatisfy { $0 <= 30 }, "\(perDay)")
        #expect(
            perDay.values.allSatisfy { $0 >= 18 },
            "a whole poll fits in 30 (22 with every page, 18 with the pages kept): \(perDay)")
        let counted = rig.poller.withState { _, schedule, _ in
            source.map(schedule.daily.count(named:)) ?? schedule.daily.total
        }
        #expect(counted == perDay[Int(time.wall() / 86_400)], "every call sent today is counted")
        if source != nil {
            #expect(
                rig.transport.log.contains { $0.request.path == "/data/2.5/weather" }, "the free endpoints stood in")
            #expect(!rig.logs.all.contains { $0.contains("not sent") }, "no poll ran out of room midway")
        }
    }

    /// A restart while a poll is in flight: the state saved says what that poll may still send, so the
    /// next run (whose predecessor's requests still go out) does not spend that room a second time.
    @Test func aRestartWithAPollInFlightKeepsItsRoom() throws {
        let config = try load(
            Self.places + [
                "--collector.onecall4", "--collector.onecall4.max-requests-per-day=30",
                "--openweather.max-requests-per-minute=600",
            ])
        let time = ManualTime(monotonic: 1000, epoch: Self.midnight + 3600 - 1000)
        let transport = FakeTransport(time: time, answer: Self.alertBursts())
        let first = SlowRig(config, time: time, transport: transport)
        first.run(until: 1000.05, answering: false)
        #expect(first.inFlight == 1, "one poll holds the room for 22 of the 30")
        let directory = BackfillTests.temporaryDirectory()
        let keeper = StateKeeper(
            storage: try StateStorage(directory: directory), store: first.store,
            logger: Logger(level: .error, format: .logfmt), time: time
        ) {}
        let saved = keeper.capture(first.poller)
        #expect(saved.daily?.counts.first { $0.name == "onecall4" }?.count == 22)

        let second = SlowRig(config, time: time, transport: transport)
        _ = StateRestore.apply(
            saved, to: second.poller, store: second.store, wallNow: time.wall(), now: time.monotonic())
        first.answerAll()
        second.run(until: 1000 + 3600)
        let perDay = Self.fourPerDay(transport, epoch: time.epoch)
        #expect(perDay.values.allSatisfy { $0 <= 30 }, "\(perDay)")
    }

    /// A reload that moves One Call 4.0 to another slot (air quality switched on before it) while a poll
    /// of it is in flight: the poll's later requests are counted as One Call 4.0's, and the room it held
    /// goes back to One Call 4.0, in its new slot.
    @Test func aReloadWithAPollInFlightCountsItUnderItsSourcesNewSlot() throws {
        let flags = [
            "--collector.onecall4", "--collector.onecall4.max-requests-per-day=30",
            "--openweather.max-requests-per-minute=600",
        ]
        let time = ManualTime(monotonic: 1000, epoch: Self.midnight + 3600 - 1000)
        let transport = FakeTransport(time: time, answer: Self.alertBursts())
        let rig = SlowRig(try load([Self.places[0]] + flags), time: time, transport: transport)
        rig.run(until: 1000.05, answering: false)
        #expect(rig.inFlight == 1)
        let before = rig.poller.withState { setup, _, _ in setup.layout.sourceNames.firstIndex(of: "onecall4") }
        rig.poller.apply(
            try load([Self.places[0]] + flags + ["--collector.air_pollution"]).pollerSetup(transport: transport))
        let after = rig.poller.withState { setup, _, _ in setup.layout.sourceNames.firstIndex(of: "onecall4") }
        #expect(
            before != nil && after != nil && before != after,
            "the reload moved it: \(String(describing: before)) → \(String(describing: after))")
        rig.answerAll()
        rig.poller.step()
        let sent = Self.fourPerDay(transport, epoch: time.epoch).values.reduce(0, +)
        #expect(sent > 1, "the poll asked for its parts after the reload")
        rig.poller.withState { setup, schedule, _ in
            #expect(schedule.daily.count(named: "onecall4") == sent, "every call of the poll counted as One Call 4.0's")
            #expect(
                schedule.daily.count(named: "air_pollution") == transport.requests(to: "/data/2.5/air_pollution").count)
            #expect(
                schedule.daily.reserved[after ?? 0] == schedule.jobs.filter(\.inFlight).map(\.held).reduce(0, +),
                "the poll's room went back")
        }
    }

    /// Answers every request, and sends it a second time as the client does after a kept connection
    /// closed under it (when the caller lets it): what leaves is in `sent`.
    final class ResendingTransport: OpenWeatherTransport {
        let inner: FakeTransport
        let times: Int
        let sent = Locked(0)
        init(_ inner: FakeTransport, times: Int = 1) {
            self.inner = inner
            self.times = times
        }

        func get(_ request: APIRequest, resend: () -> Bool) throws(OpenWeatherError) -> [UInt8] {
            sent.withLock { $0 += 1 }
            for _ in 0..<times where resend() { sent.withLock { $0 += 1 } }
            return try inner.get(request, resend: resend)
        }
    }

    /// A poller over `transport` on `time` that runs its jobs inline, and what it logs at debug.
    static func loggedPoller(
        _ config: Configuration, transport: any OpenWeatherTransport, time: ManualTime
    ) -> (Poller, LogCapture) {
        let logs = LogCapture()
        let setup = config.pollerSetup(transport: transport)
        let store = ReadingStore(setup: setup, now: time.wall())
        let poller = Poller(
            setup: setup, store: store, logger: Logger(level: .debug, format: .logfmt, sink: { logs.append($0) }),
            time: time, execute: { $0() },
            onChange: {})
        return (poller, logs)
    }

    /// Before, 19 sent and 10 counted: the resend after a keep-alive close was not counted. Now each is
    /// counted as it leaves and goes only with room, so the key's 11 a day are 11 sent (the last poll's
    /// resend finds no room and stays unsent).
    @Test func theClientsResendIsCountedAndHeldToTheDay() throws {
        var config = configuration(
            [Location(name: "Zocca", latitude: 44.34, longitude: 10.99)], collectors: ["weather": .seconds(60)])
        config.maxRequestsPerDay = 11
        let time = ManualTime(monotonic: 1000, epoch: Self.midnight + 3600 - 1000)
        let transport = ResendingTransport(FakeTransport(time: time))
        let (poller, _) = Self.loggedPoller(config, transport: transport, time: time)
        // The day's last hour left out: the counts are of one UTC day.
        while case .wait(let until) = poller.step(), until < 1000 + 82_000 { time.set(max(until, time.monotonic())) }
        let sent = transport.sent.withLock { $0 }
        #expect(sent == 11, "sent \(sent)")
        #expect(poller.withState { _, schedule, _ in schedule.daily.total } == sent)
    }

    /// A request past the room its poll held, refused by the day's limit, is not sent and says so:
    /// `code="daily_limit"`, not the `connect` it was labelled before. Every One Call 4.0 request is
    /// resent here (as the client does after a kept connection closed), so the poll's 22 of room run
    /// out before its last part.
    @Test func aRequestPastItsPollsRoomFailsAsTheDailyLimit() throws {
        let config = try load([Self.places[0], "--collector.onecall4", "--collector.onecall4.max-requests-per-day=22"])
        let time = ManualTime(monotonic: 1000, epoch: Self.midnight + 3600 - 1000)
        // Each request resent four times: the room runs out before the poll's sixth part.
        let transport = ResendingTransport(FakeTransport(time: time, answer: Self.alertBursts()), times: 4)
        let (poller, logs) = Self.loggedPoller(config, transport: transport, time: time)
        poller.step()
        let failed = logs.all.filter { $0.contains("poll failed") && $0.contains("source=onecall4") }
        #expect(
            failed.count == 1 && failed.first?.contains("code=daily_limit") == true
                && failed.first?.contains("not sent") == true, "\(failed)")
        let sent = transport.sent.withLock { $0 }
        #expect(
            sent == 22 && poller.withState { _, schedule, _ in schedule.daily.count(named: "onecall4") } == sent,
            "sent \(sent)")
    }

    // MARK: backfill

    /// `Retry-After: 1e19` and `1e300` trapped backfill's own retry (SIGILL), and a date in the year
    /// 9999 was announced as a wait of 251606013993 s: the exporter's clamp holds each to an hour.
    @Test(arguments: [1e19, 1e300, 251_606_013_993])
    func backfillHoldsAHostileRetryAfterToAnHour(retryAfter: Double) throws {
        let output = BackfillTests.temporaryDirectory() + "/history.om"
        let run = BackfillTests.Run(output: output)
        let served = Locked(0)
        run.transport.answer { request in
            served.withLock {
                $0 += 1
                return $0
            } == 1
                ? .failure(.http(status: 429, message: "slow down", retryAfterSeconds: retryAfter))
                : BackfillTests.answers(request)
        }
        let started = run.time.wall()
        try run.backfill([BackfillTests.locations[0]], air: false).run(
            since: .seconds(3600), until: BackfillTests.until)
        let lines = run.lines.withLock { $0 }
        #expect(lines.contains { $0.hasSuffix("trying again in 1h") }, "\(lines)")
        #expect(run.time.wall() - started <= 3600 + 60, "waited \(run.time.wall() - started) s")
        #expect(try BackfillTests.text(output).contains("location=\"Zocca\""))
    }

    /// A 5xx is retried after the exporter's backoff (a minute, doubling), not a wait of its own.
    @Test func backfillBacksOffAsTheExporterDoes() throws {
        let output = BackfillTests.temporaryDirectory() + "/history.om"
        let run = BackfillTests.Run(output: output)
        let served = Locked(0)
        run.transport.answer { request in
            served.withLock {
                $0 += 1
                return $0
            } <= 2
                ? .failure(.http(status: 503, message: "down", retryAfterSeconds: nil)) : BackfillTests.answers(request)
        }
        try run.backfill([BackfillTests.locations[0]], air: false).run(
            since: .seconds(3600), until: BackfillTests.until)
        let times = run.transport.log.map(\.time)
        #expect(times.count == 3)
        #expect((48...72).contains(times[1] - times[0]), "first wait \(times[1] - times[0])")
        #expect((96...144).contains(times[2] - times[1]), "second wait \(times[2] - times[1])")
    }

    /// A process that holds the shared file locked and never lets go (a backfill stopped with SIGSTOP)
    /// costs the others a bounded wait, then a decision on their own counts: never a poller stuck.
    @Test func aLockHeldForeverIsWaitedForABoundedTime() throws {
        let directory = BackfillTests.temporaryDirectory()
        let shared = SharedDay(storage: try StateStorage(directory: directory))
        let holder = open(shared.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(holder >= 0)
        defer { close(holder) }
        try #require(flock(holder, LOCK_EX) == 0)
        var decided = false
        #expect(throws: SharedDay.Failure.self) {
            try shared.update { day in
                decided = true
                return ((), day.day ?? SavedState.Daily(day: 0, total: 0, counts: []))
            }
        }
        #expect(!decided)
        flock(holder, LOCK_UN)
        try shared.update { _ in
            decided = true
            return ((), SavedState.Daily(day: 0, total: 0, counts: []))
        }
        #expect(decided)
    }

    /// Three runs with the key's limit at 5 and the exporter's state directory sent 9 calls when each
    /// counted its own day; sharing the directory's day they send 5 in all, the file says so, and the
    /// exporter started afterwards counts them.
    @Test func backfillsShareTheExportersDay() throws {
        let directory = BackfillTests.temporaryDirectory()
        let storage = try StateStorage(directory: directory)
        var sent = 0
        for round in 0..<3 {
            let run = BackfillTests.Run(output: BackfillTests.temporaryDirectory() + "/history.om")
            var backfill = run.backfill(Array(BackfillTests.locations.prefix(3)), air: false, keyPerDay: 5)
            backfill.sharedDay = SharedDay(storage: storage)
            #expect(throws: BackfillError.self) {
                try backfill.run(since: .seconds(2 * 3600), until: BackfillTests.until)
            }
            sent += run.transport.log.count
            if round == 0 { #expect(run.lines.withLock { $0 }.first?.contains("shared with the exporter") == true) }
        }
        #expect(sent == 4, "two hours of two locations would be 4, a third location passes 5")
        let shared = try StateFile.decode(try readFile(directory + "/" + SharedDay.fileName)).daily
        #expect(shared?.total == 4)
        #expect(shared?.counts.first { $0.name == OneCallSource.name }?.count == 4)

        // The exporter after them: its key's day starts at 4.
        var config = configuration([Location(name: "Zocca", latitude: 44.34, longitude: 10.99)])
        config.maxRequestsPerDay = 5
        let time = ManualTime(monotonic: 1000, epoch: BackfillTests.until + 60 - 1000)
        let rig = SlowRig(
            config, time: time, transport: FakeTransport(time: time), sharedDay: SharedDay(storage: storage))
        rig.run(until: 1000 + 3600)
        #expect(rig.transport.log.count == 1, "one call left of the day's 5")
    }

    /// Issue 27: a backfill run while the exporter polls, both on one state directory and the key's
    /// limit at 20. Before, the exporter kept its day in memory and wrote over what the backfill added:
    /// each kept to 20 of its own. Each decides on room and writes what it holds under the shared
    /// file's lock, so together they send 20, whichever asks when.
    @Test func aBackfillAndTheExporterTogetherNeverPassTheDay() throws {
        let directory = BackfillTests.temporaryDirectory()
        let storage = try StateStorage(directory: directory)
        var config = configuration(
            [Location(name: "Zocca", latitude: 44.34, longitude: 10.99)], collectors: ["weather": .seconds(60)])
        config.maxRequestsPerDay = 20
        let time = ManualTime(monotonic: 1000, epoch: BackfillTests.until + 60 - 1000)
        let exporter = SlowRig(
            config, time: time, transport: FakeTransport(time: time), sharedDay: SharedDay(storage: storage))
        // Its plan spreads the 20 over the day (a poll every 72 minutes): five hours of it first.
        exporter.run(until: 1000 + 5 * 3600)
        let before = exporter.transport.log.count
        // Every backfill request lets the exporter run 90 s more of its clock: they interleave.
        let run = BackfillTests.Run(output: BackfillTests.temporaryDirectory() + "/history.om") { request in
            exporter.run(until: time.monotonic() + 90)
            return BackfillTests.answers(request)
        }
        var backfill = run.backfill(Array(BackfillTests.locations.prefix(3)), air: false, keyPerDay: 20)
        backfill.sharedDay = SharedDay(storage: storage)
        #expect(throws: BackfillError.self, "the day runs out before its third location") {
            try backfill.run(since: .seconds(6 * 3600), until: BackfillTests.until)
        }
        // The rest of the day.
        exporter.run(until: 1000 + 10 * 3600)
        let backfilled = run.transport.log.count
        let polled = exporter.transport.log.count
        #expect(backfilled + polled == 20, "backfill \(backfilled), exporter \(polled)")
        #expect(
            before == 5 && backfilled == 12,
            "two locations of 6 calls fit beside the exporter's first 5, not a third: \(before), \(backfilled)")
        let shared = try StateFile.decode(try readFile(directory + "/" + SharedDay.fileName)).daily
        #expect(shared?.total == 20)
        #expect(exporter.poller.withState { _, schedule, _ in schedule.daily.dayTotal } == 20)
    }

    /// Backfill's requests leave through the same client: its resends count against the day too.
    @Test func backfillCountsTheClientsResends() throws {
        let run = BackfillTests.Run(output: BackfillTests.temporaryDirectory() + "/history.om")
        let transport = ResendingTransport(run.transport)
        var backfill = run.backfill([BackfillTests.locations[0]], air: false, keyPerDay: 3)
        backfill.transport = transport
        try backfill.run(since: .seconds(2 * 3600), until: BackfillTests.until)
        #expect(
            transport.sent.withLock { $0 } == 3, "two hours, the first resent, the second's resend past the day's 3")
    }

    @Test func withoutAStateDirectoryBackfillSaysItsCountsArePerRun() throws {
        let run = BackfillTests.Run(output: BackfillTests.temporaryDirectory() + "/history.om")
        try run.backfill([BackfillTests.locations[0]], air: false).run(
            since: .seconds(3600), until: BackfillTests.until)
        #expect(run.lines.withLock { $0 }.first?.contains("counted for this run alone") == true)
    }
}
