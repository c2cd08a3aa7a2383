/// What the schedule is told and tells (`Outcome`, `Decision`) and what it keeps of a job (`Kind`,
/// `Spec`, `Job`).
extension PollSchedule {
    enum Outcome: Equatable {
        /// Fetched; next time at the job's phase.
        case success
        /// A failure that retrying sooner cannot fix (401, 400, 404, no match): keep the normal interval.
        case steadyFailure
        /// Upstream trouble (5xx, timeout, refused, bad body): back off.
        case transientFailure
        /// 429: pause everything.
        case rateLimited(retryAfter: Double?)
    }

    enum Decision: Equatable {
        case fire(job: Int)
        case wait(until: Double)
        /// Nothing can start until a request in flight finishes.
        case idle
    }

    enum Kind: Equatable {
        /// Nothing to do: a resolver at a place given by coordinates.
        case none
        case resolve
        /// Repeats at the job's interval, once its location has coordinates.
        case poll
    }

    /// What the caller knows of a job.
    struct Spec: Equatable {
        /// Stays the same across reloads for the same source at the same place, so its state is kept.
        var key: String
        var kind: Kind
        var interval: Double
        /// A polling job whose location is not resolved yet.
        var waiting = false
        /// The most requests one run sends (`Source.maxRequestsPerPoll`): the day's room its start holds.
        var cost = 1
    }

    struct Job {
        var spec: Spec
        var phase = 0.0
        var nextDue: Double
        var inFlight = false
        var failures = 0
        /// When its last request was sent.
        var lastStart: Double?
        /// A resolver that succeeded.
        var done = false
        /// Switched off at runtime (`setSlot`): another source stands in for it.
        var off = false
        /// Requests its poll in flight may still send: room the daily budget holds for it (`send`).
        var held = 0

        /// Not waiting, not finished, not off: belongs in the due queue whenever it is not in flight.
        var schedulable: Bool { spec.kind != .none && !done && !spec.waiting && !off }
        /// May send a request now or later (a polling job waiting for its place too): its source takes
        /// a share of the requests in flight.
        var takesShare: Bool { spec.kind != .none && !done && !off }
    }
}
