import Dispatch
import OpenWeather
import Synchronization

/// Anything that answers "what is the weather here": the OpenWeather client, or a fake in tests.
public protocol WeatherFetching: Sendable {
    func currentWeather(latitude: Double, longitude: Double) throws(OpenWeatherError) -> CurrentWeather
}

extension OpenWeatherClient: WeatherFetching {}

/// The background loop: one scheduler thread decides, per `PollSchedule`, which
/// location to fetch next; fetches run on worker threads and report back. A
/// scrape never triggers a request.
public final class Poller: Sendable {
    public struct Plan: Sendable {
        public var locations: [Location]
        public var interval: Duration
        public var requestsPerMinute: Int
        public var fetcher: any WeatherFetching

        public init(locations: [Location], interval: Duration, requestsPerMinute: Int, fetcher: any WeatherFetching) {
            self.locations = locations
            self.interval = interval
            self.requestsPerMinute = requestsPerMinute
            self.fetcher = fetcher
        }
    }

    private struct Completion {
        var name: String
        var result: Result<CurrentWeather, OpenWeatherError>
        /// Monotonic seconds when the request was sent.
        var started: Double
        var duration: Double
    }

    private struct Shared {
        var completions: [Completion] = []
        var newPlan: Plan?
        var stopped = false
        var keyRejected = false
        /// When the request that set `keyRejected` was sent: an answer to an older request is old
        /// news (sent before the key changed) and changes nothing.
        var keyStateSince = -Double.infinity
    }

    private let store: WeatherStore
    private let logger: Logger
    private let onChange: @Sendable () -> Void
    private let wake = DispatchSemaphore(value: 0)
    private let shared = Mutex(Shared())
    private let initialPlan: Plan
    private let finished = DispatchSemaphore(value: 0)

    /// `onChange` runs on the scheduler thread after each reading or failure is stored.
    public init(plan: Plan, store: WeatherStore, logger: Logger, onChange: @escaping @Sendable () -> Void) {
        self.initialPlan = plan
        self.store = store
        self.logger = logger
        self.onChange = onChange
    }

    public func start() {
        Threads.spawn(name: "poller") { [self] in
            run()
            finished.signal()
        }
    }

    /// Returns once the scheduler has stopped; fetches in flight are abandoned.
    public func stop() {
        let wasRunning = shared.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard wasRunning else { return }
        wake.signal()
        finished.wait()
    }

    /// Takes effect at once: new locations are fetched as soon as the budget allows.
    public func apply(_ plan: Plan) {
        shared.withLock { $0.newPlan = plan }
        wake.signal()
    }

    private func run() {
        var plan = initialPlan
        var schedule = PollSchedule(
            names: plan.locations.map(\.name), interval: plan.interval.seconds,
            requestsPerMinute: plan.requestsPerMinute, now: Clock.monotonicSeconds())
        var generator = SystemRandomNumberGenerator()
        while true {
            let (completions, newPlan, stopped) = shared.withLock { state in
                defer { state.completions = []; state.newPlan = nil }
                return (state.completions, state.newPlan, state.stopped)
            }
            if stopped { return }
            if let newPlan {
                plan = newPlan
                schedule.reconfigure(
                    names: plan.locations.map(\.name), interval: plan.interval.seconds,
                    requestsPerMinute: plan.requestsPerMinute, now: Clock.monotonicSeconds())
            }
            for completion in completions {
                let outcome = record(completion)
                schedule.finished(
                    name: completion.name, outcome: outcome, now: Clock.monotonicSeconds(),
                    random: Double.random(in: 0..<1, using: &generator))
                if case .rateLimited = outcome, let pause = schedule.pause(now: Clock.monotonicSeconds()) {
                    logger.error(
                        "OpenWeather rate limit hit (429): pausing all requests",
                        [("pause", PrometheusDuration.format(.seconds(pause.rounded(.up)))),
                         ("hint", "the plan's limit was exceeded; lower --openweather.max-requests-per-minute or raise --poll.interval")])
                }
            }
            if !completions.isEmpty { onChange() }

            let now = Clock.monotonicSeconds()
            switch schedule.next(now: now) {
            case .fire(let name):
                // The schedule's slots are in the plan's order.
                if let position = schedule.position(of: name) {
                    fetch(plan.locations[position], with: plan.fetcher)
                }
            case .wait(let until):
                _ = wake.wait(timeout: .now() + .nanoseconds(Int(min(max(until - now, 0.001), 3600) * 1e9)))
            case .idle:
                _ = wake.wait(timeout: .now() + .seconds(3600))
            }
        }
    }

    private func fetch(_ location: Location, with fetcher: any WeatherFetching) {
        DispatchQueue.global().async { [self] in
            let start = Clock.monotonicSeconds()
            let result: Result<CurrentWeather, OpenWeatherError>
            do throws(OpenWeatherError) {
                result = .success(try fetcher.currentWeather(latitude: location.latitude, longitude: location.longitude))
            } catch {
                result = .failure(error)
            }
            let completion = Completion(name: location.name, result: result, started: start, duration: Clock.monotonicSeconds() - start)
            shared.withLock { $0.completions.append(completion) }
            wake.signal()
        }
    }

    /// Records what an answer to a request sent at `since` says of the key; true when that is a change.
    /// A request in flight while the key changed (one sent before the last change) does not flip it
    /// back, so each change is logged once even with many locations polled at once.
    private func keyState(rejected: Bool, since: Double) -> Bool {
        shared.withLock { state in
            guard state.keyRejected != rejected, since >= state.keyStateSince else { return false }
            state.keyRejected = rejected
            state.keyStateSince = since
            return true
        }
    }

    /// Stores the result, logs what a person needs to know, and classifies it for the schedule.
    private func record(_ completion: Completion) -> PollSchedule.Outcome {
        switch completion.result {
        case .success(let reading):
            store.recordSuccess(completion.name, reading: reading, duration: completion.duration, now: Clock.wallSeconds())
            if keyState(rejected: false, since: completion.started) {
                logger.info("OpenWeather accepts the API key again; polling resumes normally")
            }
            logger.debug("polled", [("location", completion.name), ("duration", String(completion.duration))])
            return .success
        case .failure(let error):
            store.recordFailure(completion.name, code: error.code, reason: error.description, duration: completion.duration)
            if case .http(401, _, _) = error {
                if keyState(rejected: true, since: completion.started) {
                    logger.error(
                        "OpenWeather rejects the API key (401); every location is down until it works",
                        [("reason", error.description),
                         ("hint", "a new key takes up to a couple of hours to activate; polling continues at the normal interval")])
                } else {
                    logger.debug("poll failed", [("location", completion.name), ("code", error.code)])
                }
                return .steadyFailure
            }
            logger.warn("poll failed", [("location", completion.name), ("code", error.code), ("reason", error.description)])
            switch error {
            case .http(429, _, let retryAfter): return .rateLimited(retryAfter: retryAfter)
            case .http(400, _, _), .http(404, _, _): return .steadyFailure
            default: return .transientFailure
            }
        }
    }
}
