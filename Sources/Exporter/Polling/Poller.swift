import Dispatch
import Locking
import OpenWeather
import Platform
import Synchronization

/// The background loop: one scheduler thread decides, per `PollSchedule`, which job (a source at a
/// location) runs next; requests run on worker threads and report back. A scrape never triggers a
/// request. The store is made for the poller's first setup, and the poller is the only writer of poll
/// results and of the store's layout after that, so positions in the store always match the schedule's.
///
/// This file runs the loop: it records what came back and starts what is due. The others, by what
/// happens there:
/// - `Poller+Requests`: a poll runs on a worker thread, and each request is counted as it leaves.
/// - `Poller+Setup`: a setup (startup, restore, reload) takes effect.
/// - `Poller+Answers`: an answer is stored, logged and handed to the schedule.
/// - `Poller+Key`: answers accept or reject the API key.
/// - `Poller+Availability`: a source the key cannot use pauses.
/// - `Poller+StandIns`: One Call stands in for the weather and forecast, or hands them back.
/// - `Poller+SharedDay`: the day's counts are shared with backfills.
final class Poller: Sendable {
    /// Runs a request's work somewhere; the poller passes each request as one closure.
    typealias Executor = @Sendable (@escaping @Sendable () -> Void) -> Void

    struct Completion {
        var job: Int
        /// Which setup the job's position belongs to; an answer from before a reload is matched by identity.
        var epoch: Int
        var location: Location
        /// The polled source itself; its name is read only to find its slot after a reload, for logs and the
        /// state file.
        var source: any Source
        /// Its slot when the job started (in `epoch`'s setup).
        var slot: Int
        var result: Result<any Sendable, OpenWeatherError>
        /// The answer's body, for the state file (empty after a failure).
        var body: [UInt8]
        /// Requests the poll sent (a source asking in parts sends several), each counted as it was sent.
        var requests: Int
        /// Room the poll held under the daily budgets and did not use, given back now.
        var held: Int
        /// Monotonic seconds when the poller sent the request.
        var started: Double
        var duration: Double
    }

    struct Core {
        var setup: Poller.Setup
        var schedule: PollSchedule
        var epoch = 0
        var completions: [Completion] = []
        /// While the scheduler thread sleeps: when it wakes on its own (`DispatchTime` nanoseconds); 0 while it runs.
        var sleepsUntil: UInt64 = 0
        var stopped = false
        var keyRejected = false
        /// When the request that set `keyRejected` was sent: an answer to an older request is old
        /// news (sent before the key changed) and changes nothing.
        var keyStateSince = -Double.infinity
        /// By slot: for a source that said the key cannot use it (One Call without its subscription),
        /// when it is tried next; a reload moves it with its source, so the next try is not put off.
        var unavailable: [Double?] = []
        /// Slots of sources that stand in for others and may send nothing more today (their daily limit,
        /// or a 429 for the day): the sources they stand in for poll their own endpoints until 00:00 UTC.
        var spentForDay: Set<Int> = []
        /// The `daily.revision` the store was last told of.
        var dailyShown = -1
        /// How the shared day's file worked at the last try (logged once each time it changes).
        var sharedDayState = Poller.SharedDayState.shared
        /// While it fails: when it is tried again (monotonic seconds); until then this process counts alone.
        var sharedDayRetry = -Double.infinity
        /// The UTC day (this process's) on which the file's contents were last warned of as not taken
        /// (odd, or a later day): one warning a day however often they come back.
        var sharedDayOddWarned: Int?
        /// By slot: the fields (and lists) an answer lacked that are already logged; each is logged once.
        /// A reload moves them with their source.
        var gapsLogged: [Set<String>?] = []
        var random = SystemRandomNumberGenerator()
    }

    let store: ReadingStore
    let logger: Logger
    let time: any TimeSource
    let execute: Executor
    let onChange: @Sendable () -> Void
    let keepBody: (@Sendable (_ location: Location, _ source: any Source, _ body: [UInt8]) -> Void)?
    /// The day's counts shared with backfills using the same state directory; nil: this process's alone.
    let sharedDay: SharedDay?
    let wake = DispatchSemaphore(value: 0)
    /// An answer wakes the scheduler thread only when it would otherwise sleep longer than this
    /// (seconds): at hundreds of polls a second it is stored when the thread wakes for the next
    /// launch, a few milliseconds later, rather than with a wake-up of its own.
    static let coalescing = 0.005
    let core: Locked<Core>
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    /// `store` is made for `setup` (`ReadingStore(layout: setup.layout, now:)`).
    /// `onChange` runs on the scheduler thread after results are stored; `keepBody` there too, with
    /// the body of each good answer (for the state file), empty for a reading a stand-in's answer made.
    init(
        setup: Setup, store: ReadingStore, logger: Logger, time: any TimeSource = SystemTime(),
        execute: Executor? = nil, sharedDay: SharedDay? = nil,
        keepBody: (@Sendable (_ location: Location, _ source: any Source, _ body: [UInt8]) -> Void)? = nil,
        onChange: @escaping @Sendable () -> Void
    ) {
        self.keepBody = keepBody
        self.sharedDay = sharedDay
        self.store = store
        self.logger = logger
        self.time = time
        // A thread per request in flight: a request mostly waits (DNS, connect, the answer).
        self.execute = execute ?? ThreadPool(limit: PollSchedule.requestLimit).run
        self.onChange = onChange
        let now = time.monotonic()
        core = Locked(
            Core(
                setup: setup,
                schedule: PollSchedule(specs: [], sourceCount: 1, requestsPerMinute: setup.requestsPerMinute, now: now),
                unavailable: setup.layout.sources.map { _ in nil }, gapsLogged: setup.layout.sources.map { _ in nil }))
        core.withLock { schedule(setup, in: &$0, now: now) }
    }

    func start() {
        running.store(true, ordering: .relaxed)
        Threads.spawn(name: "poller") { [self] in
            while true {
                let decision = step()
                // At 00:00 UTC the day's counts start again, and the metrics must say so.
                let wall = time.wall()
                var delay = min(DailyBudget.nextMidnight(after: wall) - wall + 0.001, 3600)
                if case .wait(let until) = decision { delay = min(max(until - time.monotonic(), 0.001), delay) }
                let deadline = DispatchTime.now() + .nanoseconds(Int(delay * 1e9))
                let (stopped, answered) = core.withLock { core in
                    if core.completions.isEmpty { core.sleepsUntil = deadline.uptimeNanoseconds }
                    return (core.stopped, !core.completions.isEmpty)
                }
                if stopped { break }
                if !answered { _ = wake.wait(timeout: deadline) }
            }
            finished.signal()
        }
    }

    /// Returns once the scheduler has stopped; requests in flight are abandoned.
    func stop() {
        let wasRunning = core.withLock { core in
            defer { core.stopped = true }
            return !core.stopped
        }
        guard wasRunning, running.load(ordering: .relaxed) else { return }
        wake.signal()
        finished.wait()
    }

    /// What the current setup's requests go through.
    var transport: any OpenWeatherTransport { core.withLock { $0.setup.transport } }

    /// After `stop`: waits up to `grace` seconds for the requests in flight and stores their answers,
    /// so the state saved next has them and the next run does not ask again.
    func settle(grace: Double) {
        let deadline = time.monotonic() + grace
        while true {
            let now = time.monotonic()
            let (recorded, waiting) = core.withLock { core in
                let completions = core.completions
                core.completions = []
                for completion in completions { record(completion, in: &core, now: now) }
                return (!completions.isEmpty, core.schedule.inFlightCount > 0)
            }
            if recorded { onChange() }
            guard waiting, now < deadline else { return }
            _ = wake.wait(timeout: .now() + .milliseconds(10))
        }
    }

    /// Lets the state keeper read the setup, the schedule and the store as one consistent picture.
    func withState<Result>(_ body: (Setup, PollSchedule, ReadingStore.Snapshot) -> Result) -> Result {
        core.withLock { body($0.setup, $0.schedule, store.snapshot()) }
    }

    /// Stores what has come back, then starts every request that is due. Returns what the schedule
    /// waits for next; `start` runs it in a loop, tests call it after moving their clock.
    @discardableResult
    func step() -> PollSchedule.Decision {
        while true {
            let now = time.monotonic()
            let wall = time.wall()
            let (completions, launches, decision, dailyChanged) = withSharedDay { core in
                core.sleepsUntil = 0
                let completions = core.completions
                core.completions = []
                for completion in completions { record(completion, in: &core, now: now) }
                core.schedule.daily.advance(to: wall)
                switchForDay(in: &core, now: now)
                var launches: [Launch] = []
                var states: ReadingStore.LocationStates?
                var decision = core.schedule.next(now: now, wall: wall)
                while case .fire(let job) = decision {
                    let id = core.schedule.id(of: job)
                    let (location, slot) = (id.location, id.slot)
                    if states == nil { states = store.snapshot().locations }
                    let state = states![location]
                    let planned = core.setup.layout.planned[slot]
                    launches.append(
                        Launch(
                            job: job, slot: slot, source: planned.source,
                            poll: Poll(
                                facts: PollFacts(
                                    location: core.setup.layout.locations[location], coordinates: state.coordinates,
                                    language: core.setup.language, now: wall),
                                previous: state.slots[slot].reading, interval: planned.interval.seconds,
                                configured: planned.configured.seconds),
                            held: core.schedule.jobs[job].held))
                    decision = core.schedule.next(now: now, wall: wall)
                }
                let dailyChanged = showDaily(in: &core)
                return (completions, launches.map { ($0, core.epoch, core.setup.transport) }, decision, dailyChanged)
            }
            if !completions.isEmpty || dailyChanged { onChange() }
            for (launch, epoch, transport) in launches { fetch(launch, epoch: epoch, transport: transport, at: now) }
            let pending = core.withLock { !$0.completions.isEmpty }
            if !pending { return decision }
        }
    }
}
