import Dispatch
import Glibc
import Locking
import OpenWeather
import Platform
import Synchronization

/// Keeps the state file (`--storage.path`) in step with the poller, so a restart comes back where
/// it was: the readings, the places resolved, each job's schedule and backoff, the 429 pause.
///
/// It writes on a thread of its own, never on a poll's or a scrape's: after a change it waits until
/// `spacing` has passed since the last write, so a write costs the same every few seconds whether
/// one location changed or ten thousand. Shutting down writes once more.
final class StateKeeper: Sendable {
    static let spacing = 5.0
    /// An answer still in flight when the state is saved is tried again this soon after it was sent
    /// (or after the job's interval, if shorter): its outcome is lost, but it counted against the plan.
    static let inFlightRetry = 60.0
    /// How long a shutdown waits for the answers in flight before the last write (they take a few
    /// hundred milliseconds from OpenWeather); the rest are saved as in flight.
    static let settleGrace = 0.5

    private struct State {
        /// The last good answer's body, by `Location.identity(_:source:)`.
        var bodies: [String: [UInt8]] = [:]
        var dirty = false
        /// Monotonic time of the last write attempt.
        var lastWrite = -Double.infinity
        var failing = false
        var stopped = false
    }

    private let storage: StateStorage
    private let store: ReadingStore
    private let time: any TimeSource
    private let logger: Logger
    private let onWrite: @Sendable () -> Void
    let spacing: Double
    private let state = Locked(State())
    /// Held for a whole write, so the thread's and the final one never interleave.
    private let writing = Locked(())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    /// `onWrite` runs after every write attempt (the metrics change).
    init(
        storage: StateStorage, store: ReadingStore, logger: Logger, time: any TimeSource,
        spacing: Double = StateKeeper.spacing,
        onWrite: @escaping @Sendable () -> Void
    ) {
        self.storage = storage
        self.store = store
        self.logger = logger
        self.time = time
        self.spacing = spacing
        self.onWrite = onWrite
        store.recordStateWrite(successful: nil, now: time.wall())
        for warning in storage.warnings { logger.warn(warning) }
    }

    /// The poller's hook for each good answer.
    func keep(body: [UInt8], location: Location, source: any Source) {
        state.withLock { $0.bodies[Location.identity(location.identity, source: source.name)] = body }
    }

    /// Something worth saving changed.
    func changed() {
        let wasClean = state.withLock { state in
            defer { state.dirty = true }
            return !state.dirty
        }
        if wasClean { wake.signal() }
    }

    /// Writes when something changed and the last write is `spacing` ago. Returns the monotonic time
    /// to look again, or nil to wait for a change; the thread runs it in a loop, tests call it.
    @discardableResult
    func step(_ poller: Poller) -> Double? {
        let now = time.monotonic()
        let due = state.withLock { state in
            guard state.dirty, now >= state.lastWrite + spacing else { return false }
            state.dirty = false
            state.lastWrite = now
            return true
        }
        if due { write(poller) }
        return state.withLock { $0.dirty ? $0.lastWrite + spacing : nil }
    }

    func start(_ poller: Poller) {
        running.store(true, ordering: .relaxed)
        Threads.spawn(name: "state-writer") { [self] in
            while !state.withLock({ $0.stopped }) {
                let wait = step(poller).map { min(max($0 - time.monotonic(), 0.001), 3600) } ?? 3600
                _ = wake.wait(timeout: .now() + .nanoseconds(Int(wait * 1e9)))
            }
            finished.signal()
        }
    }

    /// Stops the thread, then writes what changed since its last write. Call after the poller stopped.
    func stop(_ poller: Poller) {
        let wasRunning = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard wasRunning else { return }
        if running.load(ordering: .relaxed) {
            wake.signal()
            finished.wait()
        }
        if state.withLock({ state in
            defer { state.dirty = false }
            return state.dirty
        }) {
            write(poller)
        }
    }

    private func write(_ poller: Poller) {
        writing.withLock { _ in
            let saved = capture(poller)
            let result: Result<Void, StateStorageError>
            do throws(StateStorageError) {
                try storage.write(headerCount: StateFile.headerCount) { emit in StateFile.write(saved, emit: emit) }
                result = .success(())
            } catch {
                result = .failure(error)
            }
            let wasFailing = state.withLock { state in
                defer {
                    state.failing = (try? result.get()) == nil
                    if state.failing { state.dirty = true }
                }
                return state.failing
            }
            switch result {
            case .success:
                store.recordStateWrite(successful: true, now: time.wall())
                if wasFailing { logger.info("state file written again", [("path", storage.path)]) }
            case .failure(let error):
                store.recordStateWrite(successful: false, now: time.wall())
                if !wasFailing {
                    logger.warn(
                        "cannot write the state file; serving goes on, a restart will start from an older state",
                        [
                            ("reason", error.description),
                            (
                                "hint",
                                """
                                check the free space and the permissions of --storage.path; retried every \
                                \(Int(spacing))s
                                """
                            ),
                        ])
                }
            }
        }
        onWrite()
    }

    /// The poller's state as a file holds it: monotonic times become wall times.
    func capture(_ poller: Poller) -> SavedState {
        let bodies = state.withLock { $0.bodies }
        let wallNow = time.wall()
        let now = time.monotonic()
        func wall(_ monotonic: Double) -> Double { wallNow + (monotonic - now) }
        /// Every location and source of the layout, so bodies of ones a reload removed can go.
        var kept = Set<String>()
        let saved = poller.withState { setup, schedule, snapshot in
            var saved = SavedState(savedAt: wallNow)
            saved.pausedUntil = schedule.pause(now: now).map { wallNow + $0 }
            saved.rateLimitStrikes = schedule.rateLimitStrikes
            saved.recentStarts = schedule.budget.recentStarts.map(wall)
            // What polls in flight may still send is saved as sent: a restart cannot tell.
            saved.daily = schedule.daily.savedDay
            saved.locations.reserveCapacity(snapshot.locations.count)
            let count = snapshot.layout.sourceNames.count
            for (position, location) in snapshot.locations.enumerated() {
                let identity = location.location.identity
                var entry = SavedState.LocationEntry(identity: identity, sources: [])
                for (slot, slotState) in location.slots.enumerated() where slotState.applies && slot < count {
                    let name = snapshot.layout.sourceNames[slot]
                    var saved = SavedState.SourceEntry(
                        name: name, up: slotState.up, lastSuccess: slotState.lastSuccess,
                        lastPollDuration: slotState.lastPollDuration,
                        lastError: slotState.lastError)
                    let index = schedule.index(of: JobID(location: position, slot: slot))
                    if schedule.jobs.indices.contains(index) {
                        let job = schedule.jobs[index]
                        saved.lastAttempt = job.lastStart.map(wall)
                        saved.failures = job.failures
                        if job.inFlight, let start = job.lastStart {
                            saved.nextDue = wall(start + min(Self.inFlightRetry, job.spec.interval))
                        } else if job.nextDue.isFinite {
                            saved.nextDue = wall(job.nextDue)
                        }
                    }
                    let key = Location.identity(identity, source: name)
                    kept.insert(key)
                    if slotState.reading != nil, let body = bodies[key] { saved.body = body }
                    entry.sources.append(saved)
                }
                saved.locations.append(entry)
            }
            return saved
        }
        // Bodies of locations a reload removed.
        if bodies.count > kept.count {
            state.withLock { state in state.bodies = state.bodies.filter { kept.contains($0.key) } }
        }
        return saved
    }
}

extension StateKeeper {
    /// Reads the state file into a poller that has not started. A file that cannot be used is one
    /// warning, and the exporter starts clean.
    func load(into poller: Poller) {
        let contents: StateStorage.Contents?
        do throws(Files.ReadError) {
            contents = try storage.read()
        } catch {
            logger.warn(
                "cannot read the state file; starting clean", [("path", storage.path), ("reason", error.description)])
            return
        }
        guard let contents else {
            logger.info("no state file yet; it is written once there is something to keep", [("path", storage.path)])
            return
        }
        if contents.owner != geteuid() {
            logger.warn(
                "the state file belongs to another user; reading it anyway",
                [
                    ("path", storage.path), ("owner_uid", String(contents.owner)), ("exporter_uid", String(geteuid())),
                    (
                        "hint",
                        "someone else may have written it: check it, or remove it and let the exporter write its own"
                    ),
                ])
        }
        let bytes = contents.bytes
        let saved: SavedState
        do throws(StateFile.DecodeError) {
            saved = try StateFile.decode(bytes).renamingSources(Sources.formerNames)
        } catch {
            logger.warn(
                "the state file cannot be used; starting clean (it is replaced at the next write)",
                [("path", storage.path), ("reason", error.description)])
            return
        }
        let summary = StateRestore.apply(saved, to: poller, store: store, wallNow: time.wall(), now: time.monotonic())
        state.withLock { $0.bodies.merge(summary.bodies) { new, _ in new } }
        logger.info(
            "state restored",
            [
                ("path", storage.path), ("saved", Clock.rfc3339(saved.savedAt)), ("readings", String(summary.readings)),
                ("places", String(summary.places)),
            ]
                + (summary.pause.map { [("rate_limit_pause", PrometheusDuration.format(seconds: $0.rounded(.up)))] }
                    ?? []))
    }
}
