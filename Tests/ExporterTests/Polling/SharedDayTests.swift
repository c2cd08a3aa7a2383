import Glibc
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// Issue 38: the shared day file (`DIR/openweather-exporter.day`) under attack. Whatever another
/// process, or anyone who can write the directory, puts there or holds: this process keeps what it
/// sent today, waits for a lock it does not get once, and reads a bounded file.
@Suite struct SharedDayTests {
    /// 01:00 UTC, 1 December 2025: the rig's wall clock at its start (monotonic 1000).
    static let start = DailyCeilingTests.midnight + 3600
    static let today = Int(DailyCeilingTests.midnight / 86_400)

    /// `places` places' weather polled every minute, the day shared in a directory of its own.
    static func rig(places: Int = 1, keyPerDay: Int? = nil) throws -> (DailyCeilingTests.SlowRig, SharedDay) {
        let shared = SharedDay(storage: try StateStorage(directory: BackfillTests.temporaryDirectory()))
        let locations = (0..<places).map { Location(name: "P\($0)", latitude: 30 + Double($0) / 10, longitude: -90) }
        var config = configuration(locations, collectors: ["weather": .seconds(60)])
        config.maxRequestsPerDay = keyPerDay
        let time = ManualTime(monotonic: 1000, epoch: start - 1000)
        let rig = DailyCeilingTests.SlowRig(config, time: time, transport: FakeTransport(time: time), sharedDay: shared)
        return (rig, shared)
    }

    /// The file as another process (or a hand) writes it: in place, as the lock needs.
    static func write(_ daily: SavedState.Daily, to shared: SharedDay) throws {
        var state = SavedState(savedAt: 0)
        state.daily = daily
        try writeFile(shared.path, StateFile.encode(state))
    }

    static func read(_ shared: SharedDay) throws -> SavedState.Daily? {
        try StateFile.decode(try readFile(shared.path)).daily
    }

    static func daily(_ rig: DailyCeilingTests.SlowRig) -> DailyBudget {
        rig.poller.withState { _, schedule, _ in schedule.daily }
    }

    static func warnings(_ rig: DailyCeilingTests.SlowRig, _ text: String) -> Int {
        rig.logs.all.count { $0.contains("level=warn") && $0.contains(text) }
    }

    /// With the key's limit at 20, 20 places' first round spends the day. A file rewritten to name a
    /// later day (tomorrow, or 4294967295, the largest the format holds) was taken as today: the 20
    /// forgotten (`openweather_api_requests_today` back at 0, room for 20 more), and after the far day
    /// no 00:00 UTC ever started a day again. Now the 20 stay counted, nothing more goes until
    /// 00:00 UTC, the file gets today's counts back, and one warning a day says why.
    @Test(arguments: [today + 1, 4_294_967_295])
    func aLaterDayInTheFileForgetsNothing(day: Int) throws {
        let (rig, shared) = try Self.rig(places: 20, keyPerDay: 20)
        rig.run(until: 1000 + 600)
        try #require(rig.transport.log.count == 20 && Self.daily(rig).dayTotal == 20)
        try Self.write(SavedState.Daily(day: day, total: 0, counts: []), to: shared)
        rig.run(until: 1000 + 1200)
        let daily = Self.daily(rig)
        #expect(daily.day == Self.today && daily.dayTotal == 20 && daily.count(named: WeatherSource.name) == 20)
        #expect(rig.store.snapshot().daily?.count(named: WeatherSource.name) == 20, "requests_today")
        let written = try #require(try Self.read(shared))
        #expect(written.day == Self.today && written.total == 20, "today's counts written over the later day")
        #expect(Self.warnings(rig, "were not taken") == 1)
        let reason = "it counts UTC day \(day) since 1970, later than this clock's day \(Self.today) (2025-12-01)"
        #expect(rig.logs.all.contains { $0.contains(reason) })

        // Again before 00:00 UTC: nothing more sent, no second warning; the next day starts as ever.
        try Self.write(SavedState.Daily(day: day, total: 0, counts: []), to: shared)
        rig.run(until: 1000 + 86_400 - 3600 - 1)
        #expect(rig.transport.log.count == 20)
        #expect(Self.warnings(rig, "were not taken") == 1)
        rig.run(until: 1000 + 86_400 + 600)
        #expect(Self.daily(rig).day == Self.today + 1 && rig.transport.log.count > 20)
    }

    /// A backfill keeps its own day too: a file of a later day that says the key's 1000 are spent
    /// used to be taken as the backfill's day, which then had no room.
    @Test func aBackfillKeepsItsDayBesideALaterFile() throws {
        let shared = SharedDay(storage: try StateStorage(directory: BackfillTests.temporaryDirectory()))
        let backfillDay = Int(BackfillTests.until / 86_400)
        let later = SavedState.Daily(day: backfillDay + 1, total: 1000, counts: [(OneCallSource.name, 1000)])
        try Self.write(later, to: shared)
        let run = BackfillTests.Run(output: BackfillTests.temporaryDirectory() + "/history.om")
        var backfill = run.backfill([BackfillTests.locations[0]], air: false, keyPerDay: 5)
        backfill.sharedDay = shared
        try backfill.run(since: .seconds(2 * 3600), until: BackfillTests.until)
        #expect(run.transport.log.count == 2)
        #expect(run.lines.withLock { $0 }.count { $0.contains("were not taken") } == 1)
        let written = try #require(try Self.read(shared))
        #expect(written.day == backfillDay && written.total == 2)
    }

    /// Another process holds the file locked (a backfill stopped with SIGSTOP). Every step used to
    /// wait the 2 s bound again (4 requests in 10 s instead of 120). Now: one wait, one warning, this
    /// process's counts alone, and the file tried again a minute later, not at the next step.
    @Test func aHeldLockIsWaitedForOnceAndTriedAgainAMinuteLater() throws {
        let (rig, shared) = try Self.rig()
        let holder = open(shared.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(holder >= 0)
        defer { close(holder) }
        try #require(flock(holder, LOCK_EX) == 0)
        rig.run(until: 1000 + 10)
        #expect(Self.warnings(rig, "cannot share the day's request counts") == 1)
        #expect(rig.logs.all.contains { $0.contains("held it locked for 2 s") && $0.contains("retry_in=60s") })

        // The other process counted 5 and let go: not read before the minute is up.
        try Self.write(SavedState.Daily(day: Self.today, total: 5, counts: [(WeatherSource.name, 5)]), to: shared)
        try #require(flock(holder, LOCK_UN) == 0)
        rig.run(until: 1000 + 50)
        #expect(Self.daily(rig).dayTotal == rig.transport.log.count, "counting alone until the retry")
        rig.run(until: 1000 + 130)
        #expect(Self.daily(rig).dayTotal == rig.transport.log.count + 5, "the others' 5 read at the retry")
        #expect(rig.logs.all.contains { $0.contains("the day's request counts are shared again") })
        #expect(Self.warnings(rig, "cannot share the day's request counts") == 1)
    }

    /// Held for good: the retries do not wait for the lock. Ten minutes of polls (ten retries) used
    /// to cost a 2 s wait a step, 40 s at least; now the first wait and nothing more.
    @Test func aLockHeldForGoodCostsOneWait() throws {
        let (rig, shared) = try Self.rig()
        let holder = open(shared.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(holder >= 0)
        defer { close(holder) }
        try #require(flock(holder, LOCK_EX) == 0)
        let started = monotonicSeconds()
        rig.run(until: 1000 + 600)
        let took = monotonicSeconds() - started
        #expect(rig.transport.log.count >= 10)
        // One wait of 2 s; ten more would be 22 s.
        #expect(took < 12, "took \(took) s")
        #expect(Self.warnings(rig, "cannot share the day's request counts") == 1)
    }

    /// A file of many names (70,000 of 5 characters, 910 KB: under the 1 MiB read limit there was)
    /// cost every step seconds of CPU looking each name up, and grew the budget's names for good;
    /// so did one of long names. Files over 64 KiB are not read, written over with today's counts.
    @Test(arguments: [(70_000, 5), (10, 7_000)])
    func aDayFileOver64KiBIsNotRead(names: Int, length: Int) throws {
        let (rig, shared) = try Self.rig()
        rig.run(until: 1000 + 10)
        let counts = (0..<names).map { (String(repeating: "x", count: length - 5) + String(100_000 + $0).suffix(5), 1) }
        try Self.write(SavedState.Daily(day: Self.today, total: names, counts: counts), to: shared)
        let cpu = threadCPUSeconds()
        rig.run(until: 1000 + 600)
        #expect(threadCPUSeconds() - cpu < 2, "ten minutes of steps")
        let daily = Self.daily(rig)
        #expect(daily.names == [WeatherSource.name] && daily.dayTotal == rig.transport.log.count)
        #expect(try Self.read(shared)?.counts.map(\.name) == [WeatherSource.name])
        #expect(Self.warnings(rig, "were not taken") == 1)
        #expect(rig.logs.all.contains { $0.contains("larger than 64 KiB") })
    }

    /// A small file naming more sources than a day counts (`DailyBudget.maxNames`) is not taken.
    @Test func aDayFileOfMoreThan64NamesIsNotTaken() throws {
        let (rig, shared) = try Self.rig()
        rig.run(until: 1000 + 10)
        let counts = (0..<1000).map { ("s\(1000 + $0)", 1) }
        try Self.write(SavedState.Daily(day: Self.today, total: 1000, counts: counts), to: shared)
        rig.run(until: 1000 + 600)
        let daily = Self.daily(rig)
        #expect(daily.names == [WeatherSource.name] && daily.dayTotal == rig.transport.log.count)
        #expect(try Self.read(shared)?.counts.map(\.name) == [WeatherSource.name])
        let reason = "it names 1000 sources, more than the 64 a day counts"
        #expect(rig.logs.all.contains { $0.contains("were not taken") && $0.contains(reason) })
    }

    /// A saved day (the state file's or a shared one) teaches the budget at most 64 names: new ones
    /// past that are not kept by name, while the day's total still counts them.
    @Test func aSavedDayTeachesAtMost64Names() {
        let day = Self.today
        var budget = DailyBudget(wall: Double(day) * 86_400 + 60)
        budget.configure(sources: ["forecast", "weather"], limits: [nil, nil], keyLimit: 150)
        let counts = (0..<100).map { ("s\(100 + $0)", 1) } + [("weather", 7)]
        budget.absorb(SavedState.Daily(day: day, total: 107, counts: counts))
        #expect(budget.names.count == DailyBudget.maxNames)
        #expect(budget.count(named: "weather") == 7 && budget.count(named: "s100") == 1)
        #expect(budget.count(named: "s199") == 0, "past the 64th name")
        #expect(budget.dayTotal == 107 && !budget.hasRoom(budget.slot(named: "weather"), 44))
        var restored = DailyBudget(wall: Double(day) * 86_400 + 60)
        restored.restore(SavedState.Daily(day: day, total: 107, counts: counts, spent: counts.map(\.0)))
        #expect(restored.names.count == DailyBudget.maxNames && restored.total == 107)
    }

    /// Puts something other than a regular file at the day file's name, as anyone who can write the
    /// directory may: a directory, a FIFO, or a link to a regular file beside it.
    static func plant(_ kind: String, at path: String) throws {
        unlink(path)
        let made =
            switch kind {
            case "directory": mkdir(path, 0o700)
            case "fifo": mkfifo(path, 0o600)
            default: symlink(path + ".target", path)
            }
        try #require(made == 0, "\(kind): \(String(cString: strerror(errno)))")
        if kind == "symlink" { try writeFile(path + ".target", []) }
    }

    /// Issue 49: with the day file a directory, a FIFO or a link, two exporters sharing the directory
    /// each counted alone (59 requests under a key limit of 40). Now the requests a key limit
    /// governs wait, with one error line and `openweather_api_daily_requests_withheld` 1, until the file
    /// is a regular file again; then they go within the retry minute, and the error is not repeated.
    @Test(arguments: ["directory", "fifo", "symlink"])
    func aDayFileThatIsNoRegularFileHoldsTheLimitedRequests(kind: String) throws {
        let (rig, shared) = try Self.rig(keyPerDay: 5000)
        rig.run(until: 1000 + 150)
        let before = rig.transport.log.count
        try #require(before >= 2 && !Self.daily(rig).withheld)
        try Self.plant(kind, at: shared.path)
        rig.run(until: 1000 + 1800)
        #expect(rig.transport.log.count == before, "nothing sent while the day cannot be shared")
        #expect(rig.store.snapshot().daily?.withheld == true, "openweather_api_daily_requests_withheld")
        let errors = rig.logs.all.filter { $0.contains("level=error") && $0.contains("wait until it can") }
        #expect(errors.count == 1)
        let what = ["directory": "a directory", "fifo": "a FIFO", "symlink": "a symbolic link"][kind]!
        #expect(errors.first?.contains("\(shared.path): it is \(what), not a regular file: remove it") == true)

        // Removed: the exporter writes the file afresh at the next try and polls on.
        #expect(unlink(shared.path) == 0 || rmdir(shared.path) == 0)
        rig.run(until: 1000 + 1800 + 130)
        #expect(rig.transport.log.count > before)
        #expect(!Self.daily(rig).withheld && rig.store.snapshot().daily?.withheld == false)
        #expect(rig.logs.all.contains { $0.contains("the day's request counts are shared again") })
        #expect((try Self.read(shared)?.total ?? 0) > before, "the file written afresh with the counts")
    }

    /// A source no daily limit governs (the weather without the key's limit) is not held: the file
    /// only shares the counts that limits are kept by.
    @Test func aSourceWithoutADailyLimitIsNotHeld() throws {
        let (rig, shared) = try Self.rig()
        rig.run(until: 1000 + 150)
        let before = rig.transport.log.count
        try Self.plant("directory", at: shared.path)
        rig.run(until: 1000 + 900)
        #expect(rig.transport.log.count >= before + 10)
        #expect(rig.logs.all.count { $0.contains("level=error") } == 1)
    }

    /// Sharing was asked for (`--storage.path`), so an exporter does not start on a day file that
    /// cannot be the shared count: exit status 2 (a `StateStorageError`), naming the path and what is
    /// there. A link is refused even to a regular file beside it: the lock must be on the name's own file.
    @Test(arguments: ["directory", "fifo", "symlink"])
    func anExporterDoesNotStartOnADayFileThatIsNoRegularFile(kind: String) throws {
        let directory = BackfillTests.temporaryDirectory()
        let path = directory + "/" + SharedDay.fileName
        try Self.plant(kind, at: path)
        let configuration = try load([
            "--location", "A=1,2", "--web.listen-address=127.0.0.1:0", "--storage.path=\(directory)",
        ])
        let what = ["directory": "a directory", "fifo": "a FIFO", "symlink": "a symbolic link"][kind]!
        do {
            _ = try Exporter(configuration: configuration, logger: Logger(level: .error, sink: { _ in }))
            Issue.record("started on \(what)")
        } catch let error as StateStorageError {
            #expect(error.description.contains("\(path): it is \(what), not a regular file: remove it"))
        }
    }
}
