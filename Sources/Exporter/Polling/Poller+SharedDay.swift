/// The day's request counts shared with backfills (`SharedDay`) around each decision on the day's
/// room, and the store told of the counts.
extension Poller {
    /// Runs `body` on the core with the day's counts as every process sharing them has them (`SharedDay`),
    /// under the shared file's lock, then writes back what this process holds: a decision on the day's
    /// room and the room it takes are one step for all of them. A lock another process holds leaves the
    /// decision to this process's counts, with one warning; a file that cannot be the shared count holds
    /// the requests a daily limit governs, with one error. Either is tried again `SharedDay.retrySeconds`
    /// later (not on every step, which would wait for a held lock each time).
    // Not optimized: Swift 6.0.3's ClosureSpecializer aborts on it ("Can't demangle"), and it is glue.
    @_optimize(none)
    func withSharedDay<Result: Sendable>(_ body: (inout sending Core) -> sending Result) -> Result {
        guard let sharedDay else { return core.withLock(body) }
        let (due, failing) = core.withLock { (time.monotonic() >= $0.sharedDayRetry, $0.sharedDayState != .shared) }
        guard due else { return core.withLock(body) }
        var decided: Result?
        var odd: String?
        let failure: SharedDay.Failure?
        do throws(SharedDay.Failure) {
            try sharedDay.update(waitMilliseconds: failing ? 0 : SharedDay.lockWaitMilliseconds) { contents in
                core.withLock { core in
                    // The clock is read under the lock: on one host no process writes a day another has not reached.
                    core.schedule.daily.advance(to: time.wall())
                    let taken = core.schedule.daily.absorb(contents.day)
                    let today = core.schedule.daily.day
                    let later = taken ? nil : contents.day.map { SharedDay.laterDay($0.day, than: today) }
                    if let reason = contents.odd ?? later, core.sharedDayOddWarned != today {
                        core.sharedDayOddWarned = today
                        odd = reason
                    }
                    core.schedule.daily.withhold(until: nil)
                    decided = body(&core)
                    return ((), core.schedule.daily.shared())
                }
            }
            failure = nil
        } catch {
            failure = error
        }
        // A held lock leaves the decision to this process's counts; a file that cannot be the shared count
        // (not a regular file, not openable) holds every request a daily limit governs until it can.
        let state: SharedDayState = failure.map { $0.locked ? .counted : .withheld } ?? .shared
        let before = core.withLock { core in
            let before = core.sharedDayState
            core.sharedDayState = state
            core.sharedDayRetry = failure == nil ? -.infinity : time.monotonic() + SharedDay.retrySeconds
            core.schedule.daily.withhold(until: state == .withheld ? core.sharedDayRetry : nil)
            return before
        }
        if before != state, let failure {
            if state == .withheld {
                logger.error(
                    """
                    cannot share the day's request counts with backfills; requests under a daily limit wait until \
                    it can
                    """,
                    [
                        ("reason", failure.description), ("retry_in", "\(Int(SharedDay.retrySeconds))s"),
                        ("hint", "a daily limit shared by --storage.path is kept only with a regular file there"),
                    ])
            } else {
                logger.warn(
                    "cannot share the day's request counts with backfills; counting this process's alone",
                    [
                        ("reason", failure.description), ("retry_in", "\(Int(SharedDay.retrySeconds))s"),
                        (
                            "hint",
                            "a backfill run meanwhile may pass a daily limit with the exporter; check --storage.path"
                        ),
                    ])
            }
        } else if before != state {
            logger.info("the day's request counts are shared again", [("path", sharedDay.path)])
        }
        if let odd {
            logger.warn(
                "the day's shared request counts were not taken; this process's own are kept and written over them",
                [
                    ("path", sharedDay.path), ("reason", odd),
                    ("hint", "warned once a day at most; is another process's clock ahead, or was the file edited?"),
                ])
        }
        if let decided { return decided }
        return core.withLock(body)
    }

    /// How the shared day worked at the last try.
    enum SharedDayState {
        case shared
        /// Another process held its lock: this process counts alone.
        case counted
        /// It cannot be the shared count: requests under a daily limit wait (`DailyBudget.withheld`).
        case withheld
    }

    /// Tells the store of the day's counts when they changed since it was last told; true then.
    func showDaily(in core: inout Core) -> Bool {
        guard core.schedule.daily.revision != core.dailyShown else { return false }
        store.recordDaily(core.schedule.daily)
        core.dailyShown = core.schedule.daily.revision
        return true
    }
}
