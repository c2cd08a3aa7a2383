import Dispatch
import Locking
import OpenWeather
import Platform
import Synchronization

/// The background loop: one scheduler thread decides, per `PollSchedule`, which job (a source at a
/// location) runs next; requests run on worker threads and report back. A scrape never triggers a
/// request. The poller is the only writer of poll results and of the store's layout, so positions
/// in the store always match the schedule's.
final class Poller: Sendable {
    struct Plan: Sendable {
        var locations: [Location]
        /// In slot order.
        var sources: [any Source]
        /// Per slot.
        var intervals: [Duration]
        /// Per slot, seconds.
        var maxStaleness: [Double]
        var requestsPerMinute: Int
        var language: String
        var transport: any OpenWeatherTransport
        var thresholds: @Sendable (Location) -> TemperatureThresholds

        init(
            locations: [Location], sources: [any Source], intervals: [Duration], maxStaleness: [Double], requestsPerMinute: Int,
            language: String,
            transport: any OpenWeatherTransport, thresholds: @escaping @Sendable (Location) -> TemperatureThresholds
        ) {
            self.locations = locations
            self.sources = sources
            self.intervals = intervals
            self.maxStaleness = maxStaleness
            self.requestsPerMinute = requestsPerMinute
            self.language = language
            self.transport = transport
            self.thresholds = thresholds
        }
    }

    /// Runs a request's work somewhere; the poller passes each request as one closure.
    typealias Executor = @Sendable (@escaping @Sendable () -> Void) -> Void

    private struct Completion {
        var job: Int
        /// Which plan the job's position belongs to; an answer from before a reload is matched by name.
        var epoch: Int
        var location: String
        var source: String
        var result: Result<any Sendable, OpenWeatherError>
        /// The answer's body, for the state file (empty after a failure).
        var body: [UInt8]
        /// Monotonic seconds when the poller sent the request.
        var started: Double
        var duration: Double
    }

    private struct Core {
        var plan: Poller.Plan
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
        /// Sources that said the key cannot use them (One Call without its subscription), with when each
        /// is tried next; kept across reloads, so a reload does not put the next try off.
        var unavailable: [String: Double] = [:]
        var random = SystemRandomNumberGenerator()
    }

    private let store: WeatherStore
    private let logger: Logger
    private let time: any TimeSource
    private let execute: Executor
    private let onChange: @Sendable () -> Void
    private let keepBody: (@Sendable (_ location: Location, _ source: String, _ body: [UInt8]) -> Void)?
    private let wake = DispatchSemaphore(value: 0)
    /// An answer wakes the scheduler thread only when it would otherwise sleep longer than this
    /// (seconds): at hundreds of polls a second it is stored when the thread wakes for the next
    /// launch, a few milliseconds later, rather than with a wake-up of its own.
    static let coalescing = 0.005
    private let core: Locked<Core>
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    /// `onChange` runs on the scheduler thread after results are stored; `keepBody` there too, with
    /// the body of each good answer (for the state file), empty for a reading a stand-in's answer made.
    init(
        plan: Plan, store: WeatherStore, logger: Logger, time: any TimeSource = SystemTime(),
        execute: Executor? = nil,
        keepBody: (@Sendable (_ location: Location, _ source: String, _ body: [UInt8]) -> Void)? = nil,
        onChange: @escaping @Sendable () -> Void
    ) {
        self.keepBody = keepBody
        self.store = store
        self.logger = logger
        self.time = time
        // A thread per request in flight: a request mostly waits (DNS, connect, the answer).
        self.execute = execute ?? ThreadPool(limit: PollSchedule.requestLimit).run
        self.onChange = onChange
        let now = time.monotonic()
        core = Locked(Core(plan: plan, schedule: PollSchedule(specs: [], sourceCount: 1, requestsPerMinute: plan.requestsPerMinute, now: now)))
        core.withLock { adopt(plan, in: &$0, now: now) }
    }

    func start() {
        running.store(true, ordering: .relaxed)
        Threads.spawn(name: "poller") { [self] in
            while true {
                let decision = step()
                var delay = 3600.0
                if case .wait(let until) = decision { delay = min(max(until - time.monotonic(), 0.001), 3600) }
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

    /// What the current plan's requests go through.
    var transport: any OpenWeatherTransport { core.withLock { $0.plan.transport } }

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

    /// Lets the state keeper read the plan, the schedule and the store as one consistent picture.
    func withState<Result>(_ body: (Plan, PollSchedule, WeatherStore.Snapshot) -> Result) -> Result {
        core.withLock { body($0.plan, $0.schedule, store.snapshot()) }
    }

    /// Before `start`: `store` puts an earlier run's readings into the store, then the schedule is laid
    /// out again (a place resolved before is not waited for) and `schedule` restores the jobs' state.
    func restore(store restoreStore: (Plan) -> Void, schedule restoreSchedule: (Plan, inout PollSchedule) -> Void) {
        let now = time.monotonic()
        core.withLock { core in
            restoreStore(core.plan)
            adopt(core.plan, in: &core, now: now)
            restoreSchedule(core.plan, &core.schedule)
        }
    }

    /// Takes effect at once: the store is laid out for the new locations, and new jobs run as soon as
    /// the budget allows.
    func apply(_ plan: Plan) {
        let now = time.monotonic()
        core.withLock { adopt(plan, in: &$0, now: now) }
        onChange()
        wake.signal()
    }

    /// Stores what has come back, then starts every request that is due. Returns what the schedule
    /// waits for next; `start` runs it in a loop, tests call it after moving their clock.
    @discardableResult
    func step() -> PollSchedule.Decision {
        while true {
            let now = time.monotonic()
            let (completions, launches, decision) = core.withLock { core in
                core.sleepsUntil = 0
                let completions = core.completions
                core.completions = []
                for completion in completions { record(completion, in: &core, now: now) }
                var launches: [(job: Int, request: APIRequest, source: any Source, location: Location)] = []
                var states: WeatherStore.LocationStates?
                var decision = core.schedule.next(now: now)
                while case .fire(let job) = decision {
                    let (location, slot) = job.quotientAndRemainder(dividingBy: core.plan.sources.count)
                    let target = core.plan.locations[location]
                    let source = core.plan.sources[slot]
                    if states == nil { states = store.snapshot().locations }
                    let coordinates = states![location].coordinates
                    launches.append((job, source.request(for: target, at: coordinates, language: core.plan.language), source, target))
                    decision = core.schedule.next(now: now)
                }
                return (completions, launches.map { ($0, core.epoch, core.plan.transport) }, decision)
            }
            if !completions.isEmpty { onChange() }
            for (launch, epoch, transport) in launches { fetch(launch, epoch: epoch, transport: transport, at: now) }
            let pending = core.withLock { !$0.completions.isEmpty }
            if !pending { return decision }
        }
    }

    private func adopt(_ plan: Plan, in core: inout Core, now: Double) {
        store.replaceLocations(
            plan.locations, sources: plan.sources, intervals: plan.intervals, maxStaleness: plan.maxStaleness,
            thresholds: plan.thresholds)
        let snapshot = store.snapshot()
        let states = snapshot.locations
        var specs: [PollSchedule.Spec] = []
        specs.reserveCapacity(plan.locations.count * plan.sources.count)
        for (position, location) in plan.locations.enumerated() {
            let key = "\(location.name)\u{0}\(location.place)\u{0}"
            let resolved = states[position].coordinates != nil
            for (slot, source) in plan.sources.enumerated() {
                let kind: PollSchedule.Kind = source.resolves ? (location.query == nil ? .none : .resolve) : .poll
                specs.append(PollSchedule.Spec(
                    key: key + source.name, kind: kind, interval: plan.intervals[slot].seconds, waiting: kind == .poll && !resolved))
            }
        }
        // Polls follow the exposition's order, so the series a second of polls changes sit together
        // and a refresh re-renders a few shards instead of most of them.
        core.schedule.reconfigure(
            specs: specs, sourceCount: plan.sources.count, requestsPerMinute: plan.requestsPerMinute, now: now,
            phaseOrder: snapshot.labelOrder)
        core.plan = plan
        core.epoch += 1
        switchStandIns(in: &core, now: now)
    }

    /// Switches each source's jobs on or off: a source another one stands in for is off while that
    /// one is usable; an unusable stand-in is off but for one job, retried every `Sources.unavailableRetry`.
    private func switchStandIns(in core: inout Core, now: Double) {
        let sources = core.plan.sources
        let working = sources.filter { !$0.standsIn.isEmpty && core.unavailable[$0.name] == nil }
        let replaced = Set(working.flatMap(\.standsIn))
        for (slot, source) in sources.enumerated() {
            let retry = core.unavailable[source.name]
            core.schedule.setSlot(slot, on: !replaced.contains(source.name) && retry == nil, now: now)
            if let retry, let probe = stride(from: slot, to: core.schedule.jobs.count, by: sources.count).first(where: {
                core.schedule.jobs[$0].spec.kind == .poll
            }) {
                core.schedule.setRetry(job: probe, interval: Sources.unavailableRetry.seconds, due: retry)
            }
        }
    }

    /// A stand-in's answer fills the slots of the sources it stands in for, or marks them failed.
    private func recordStandIns(_ completion: Completion, location: Int, slot: Int, in core: inout Core) {
        let source = core.plan.sources[slot]
        guard !source.standsIn.isEmpty else { return }
        let readings = (try? completion.result.get()).map(source.readings(standingIn:)) ?? [:]
        for (other, name) in core.plan.sources.enumerated().map({ ($0, $1.name) }) where source.standsIn.contains(name) {
            let result: Result<any Sendable, OpenWeatherError>
            switch completion.result {
            case .success:
                guard let reading = readings[name] else { continue }
                result = .success(reading)
                // No body of its own: the state file restores it from the stand-in's.
                keepBody?(core.plan.locations[location], name, [])
            case .failure(let error): result = .failure(error)
            }
            store.recordStandIn(location: location, source: other, result: result, duration: completion.duration, now: time.wall())
        }
    }

    private func fetch(
        _ launch: (job: Int, request: APIRequest, source: any Source, location: Location), epoch: Int, transport: any OpenWeatherTransport,
        at sent: Double
    ) {
        execute { [self] in
            let start = time.monotonic()
            let result: Result<any Sendable, OpenWeatherError>
            var body: [UInt8] = []
            do throws(OpenWeatherError) {
                body = try transport.get(launch.request)
                result = .success(try launch.source.decode(body, for: launch.location))
            } catch {
                result = .failure(error)
                body = []
            }
            let completion = Completion(
                job: launch.job, epoch: epoch, location: launch.location.name, source: launch.source.name, result: result,
                body: body, started: sent, duration: time.monotonic() - start)
            let finished = DispatchTime.now().uptimeNanoseconds
            let asleep = core.withLock { core in
                core.completions.append(completion)
                return core.sleepsUntil > finished + UInt64(Self.coalescing * 1e9)
            }
            if asleep { wake.signal() }
        }
    }

    /// Stores the result, logs what a person needs to know, and tells the schedule.
    private func record(_ completion: Completion, in core: inout Core, now: Double) {
        var job = completion.job
        if completion.epoch != core.epoch {
            // A reload moved the jobs: find this one by name, or drop an answer for what is gone.
            guard let location = core.plan.locations.firstIndex(where: { $0.name == completion.location }),
                let slot = core.plan.sources.firstIndex(where: { $0.name == completion.source }),
                core.schedule.jobs[location * core.plan.sources.count + slot].inFlight
            else {
                core.schedule.orphanFinished()
                return
            }
            job = location * core.plan.sources.count + slot
        }
        let (location, slot) = job.quotientAndRemainder(dividingBy: core.plan.sources.count)
        let source = core.plan.sources[slot]
        if case .failure(let error) = completion.result, source.isUnavailable(error) {
            store.recordFailure(location: location, source: slot, code: error.code, reason: error.description, duration: completion.duration)
            core.schedule.finished(job: job, outcome: .steadyFailure, now: now, random: 0)
            let first = core.unavailable[source.name] == nil
            core.unavailable[source.name] = now + Sources.unavailableRetry.seconds
            if first {
                store.recordUnavailable(source: source.name, reason: error.description)
                logger.error(
                    "\(source.name) cannot be used with this key; polling \(source.standsIn.joined(separator: " and ")) from their own endpoints instead",
                    [("source", source.name), ("reason", error.description),
                     ("hint", "\(source.unavailableHint) or drop --collector.\(source.name); retried every \(PrometheusDuration.format(Sources.unavailableRetry))")])
                // The key, not the place, lacks it: every location's try has its answer (and readiness too).
                for other in core.plan.locations.indices where other != location {
                    store.recordStandIn(location: other, source: slot, result: .failure(error), duration: 0, now: time.wall())
                }
                switchStandIns(in: &core, now: now)
            }
            return
        }
        if case .success = completion.result, core.unavailable.removeValue(forKey: source.name) != nil {
            store.recordUnavailable(source: source.name, reason: nil)
            logger.info("\(source.name) works with this key again; it stands in for \(source.standsIn.joined(separator: " and ")) again", [("source", source.name)])
            core.schedule.setRetry(job: job, interval: core.plan.intervals[slot].seconds, due: now)
            switchStandIns(in: &core, now: now)
        }
        recordStandIns(completion, location: location, slot: slot, in: &core)
        let outcome = classify(completion, location: location, slot: slot, in: &core)
        // Drawn only for the retry it spreads: each draw is a getrandom system call.
        var jitter = 0.0
        if case .transientFailure = outcome { jitter = Double.random(in: 0..<1, using: &core.random) }
        core.schedule.finished(job: job, outcome: outcome, now: now, random: jitter)
        if case .success = outcome, core.plan.sources[slot].resolves {
            core.schedule.unblock(location: location, now: now)
        }
        if case .rateLimited = outcome, let pause = core.schedule.pause(now: now) {
            logger.error(
                "OpenWeather rate limit hit (429): pausing all requests",
                [("source", completion.source), ("pause", PrometheusDuration.format(seconds: pause.rounded(.up))),
                 ("hint", "the plan's limit was exceeded; lower --openweather.max-requests-per-minute or raise the collectors' intervals")])
        }
    }

    /// Records what an answer to a request sent at `since` says of the key; true when that is a change.
    /// A request in flight while the key changed (one sent before the last change) does not flip it
    /// back, so each change is logged once even with many locations polled at once.
    private func keyState(rejected: Bool, since: Double, in core: inout Core) -> Bool {
        guard core.keyRejected != rejected, since >= core.keyStateSince else { return false }
        core.keyRejected = rejected
        core.keyStateSince = since
        return true
    }

    private func classify(_ completion: Completion, location: Int, slot: Int, in core: inout Core) -> PollSchedule.Outcome {
        let labels = [("location", completion.location), ("source", completion.source)]
        switch completion.result {
        case .success(let reading):
            store.recordSuccess(location: location, source: slot, reading: reading, duration: completion.duration, now: time.wall())
            keepBody?(core.plan.locations[location], completion.source, completion.body)
            if keyState(rejected: false, since: completion.started, in: &core) {
                logger.info("OpenWeather accepts the API key again; polling resumes normally")
            }
            if let resolved = reading as? ResolvedPlace {
                let place = resolved.place
                logger.info(
                    "place resolved", labels + [
                        ("query", core.plan.locations[location].query?.description ?? ""), ("name", place.name),
                        ("state", place.state ?? ""), ("country", place.country),
                        ("latitude", String(place.latitude)), ("longitude", String(place.longitude)),
                        ("other_matches", String(resolved.others)),
                    ] + (resolved.others > 0
                        ? [("hint", "the first of \(resolved.others + 1) matches was taken; to pin another, give its coordinates as NAME=LAT,LON")]
                        : []))
            }
            logger.debug("polled", labels + [("duration", String(completion.duration))])
            return .success
        case .failure(let error):
            store.recordFailure(location: location, source: slot, code: error.code, reason: error.description, duration: completion.duration)
            if case .http(401, _, _) = error {
                if keyState(rejected: true, since: completion.started, in: &core) {
                    logger.error(
                        "OpenWeather rejects the API key (401); every location is down until it works",
                        [("reason", error.description),
                         ("hint", "a new key takes up to a couple of hours to activate; polling continues at the normal interval")])
                } else {
                    logger.debug("poll failed", labels + [("code", error.code)])
                }
                return .steadyFailure
            }
            logger.warn("poll failed", labels + [("code", error.code), ("reason", error.description)])
            switch error {
            case .http(429, _, let retryAfter): return .rateLimited(retryAfter: retryAfter)
            case .http(400, _, _), .http(404, _, _), .noMatch: return .steadyFailure
            default: return .transientFailure
            }
        }
    }
}
