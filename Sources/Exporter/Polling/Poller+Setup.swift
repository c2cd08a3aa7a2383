import OpenWeather

/// What the poller runs, and a setup taking effect: at startup and after a restore the schedule is
/// laid out for it (the store was made for it), on a reload the store and the schedule together; an
/// answer to a request sent under an older setup is matched to its job in the new one.
extension Poller {
    /// What the poller runs: the layout (locations, sources, their intervals and staleness), the
    /// budget, and the client (or a fake in tests).
    struct Setup: Sendable {
        var layout: Layout
        var requestsPerMinute: Int
        /// The key's limit of requests a UTC day, all sources together.
        var requestsPerDay: Int?
        var language: String
        var transport: any OpenWeatherTransport

        /// Per slot: `intervals` as planned, `configured` as given, each source's own daily limit.
        init(
            locations: [Location], sources: [any Source], intervals: [Duration], configured: [Duration],
            maxStaleness: [Double],
            requestsPerMinute: Int, dailyLimits: [Int?], requestsPerDay: Int?, language: String,
            transport: any OpenWeatherTransport, thresholds: @escaping @Sendable (Location) -> AlertThresholds
        ) {
            self.layout = Layout(
                locations: locations,
                planned: PlannedSource.plan(
                    sources: sources, intervals: intervals, configured: configured, maxStaleness: maxStaleness,
                    dailyLimits: dailyLimits),
                thresholds: thresholds)
            self.requestsPerMinute = requestsPerMinute
            self.requestsPerDay = requestsPerDay
            self.language = language
            self.transport = transport
        }
    }

    /// Before `start`: `store` puts an earlier run's readings into the store, then the schedule is laid
    /// out again (a place resolved before is not waited for) and `schedule` restores the jobs' state.
    func restore(store restoreStore: (Setup) -> Void, schedule restoreSchedule: (Setup, inout PollSchedule) -> Void) {
        let now = time.monotonic()
        core.withLock { core in
            restoreStore(core.setup)
            schedule(core.setup, in: &core, now: now)
            restoreSchedule(core.setup, &core.schedule)
            _ = showDaily(in: &core)
        }
    }

    /// Takes effect at once: the store is laid out for the new locations, and new jobs run as soon as
    /// the budget allows.
    func apply(_ setup: Setup) {
        let now = time.monotonic()
        core.withLock { core in
            store.replaceLocations(setup.layout)
            schedule(setup, in: &core, now: now)
        }
        onChange()
        wake.signal()
    }

    /// Lays the schedule out for `setup`, whose layout the store has: a location whose place is
    /// known (given, resolved, or restored) is polled at once, the others wait for their resolver.
    func schedule(_ setup: Setup, in core: inout Core, now: Double) {
        let states = store.snapshot().locations
        var specs: [PollSchedule.Spec] = []
        specs.reserveCapacity(setup.layout.locations.count * setup.layout.sources.count)
        for (position, location) in setup.layout.locations.enumerated() {
            let identity = location.identity
            let resolved = states[position].coordinates != nil
            for (slot, source) in setup.layout.sources.enumerated() {
                let kind: PollSchedule.Kind = source.resolves ? (location.query == nil ? .none : .resolve) : .poll
                specs.append(
                    PollSchedule.Spec(
                        key: Location.identity(identity, source: source.name), kind: kind,
                        interval: setup.layout.intervals[slot].seconds,
                        waiting: kind == .poll && !resolved, cost: source.maxRequestsPerPoll))
            }
        }
        // Polls follow the exposition's order, so the series a second of polls changes sit together
        // and a refresh re-renders a few shards instead of most of them.
        core.schedule.reconfigure(
            specs: specs, sourceCount: setup.layout.sources.count, requestsPerMinute: setup.requestsPerMinute, now: now,
            phaseOrder: setup.layout.labelOrder)
        core.schedule.daily.configure(
            sources: setup.layout.sourceNames, limits: setup.layout.planned.map(\.dailyLimit),
            keyLimit: setup.requestsPerDay)
        core.schedule.daily.advance(to: time.wall())
        // What the poller keeps by slot moves with its source.
        let moved = setup.layout.slots(from: core.setup.layout)
        core.unavailable = moved.moved(core.unavailable)
        core.spentForDay = moved.moved(core.spentForDay)
        core.gapsLogged = moved.moved(core.gapsLogged)
        core.setup = setup
        core.epoch += 1
        switchStandIns(in: &core, now: now)
    }

    /// The job `completion` answers: its own position when no reload came between, else the same job
    /// found by its location's identity and its source's name in the new setup; nil (and the request
    /// let go of) for a job the reload removed, or moved: an answer for the old place is not the new one's.
    func job(answering completion: Completion, in core: inout Core) -> Int? {
        guard completion.epoch != core.epoch else { return completion.job }
        // Names are unique: the name finds the location, its identity says whether it is still the same place.
        guard let location = core.setup.layout.locations.firstIndex(where: { $0.name == completion.location.name }),
            core.setup.layout.locations[location].identity == completion.location.identity,
            let slot = core.setup.layout.sources.firstIndex(where: { $0.name == completion.source.name }),
            case let index = core.schedule.index(of: JobID(location: location, slot: slot)),
            core.schedule.jobs[index].inFlight
        else {
            core.schedule.orphanFinished()
            return nil
        }
        return index
    }
}
