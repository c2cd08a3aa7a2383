import OpenWeather

/// How a backfill's requests leave: fetched with the exporter's waits and retries, each counted
/// where it leaves, on the day shared with the exporter (`SharedDay`) when there is one.
extension Backfill {
    /// Runs `body` on the day as every process sharing it (`SharedDay`) has counted it, under its lock,
    /// and writes back what this run holds; without a shared day, on this run's counts alone. The day is
    /// this run's by its clock, as the exporter's is; a file it does not take is said once a run.
    func sharing<Result>(
        _ requests: inout BackfillRequests, _ body: (inout BackfillRequests) -> Result
    ) throws(BackfillError) -> Result {
        guard let sharedDay else { return body(&requests) }
        var updated = requests
        let result: Result
        var odd: String?
        do throws(SharedDay.Failure) {
            result = try sharedDay.update { contents in
                updated.daily.advance(to: time.now())
                let taken = updated.daily.absorb(contents.day)
                let today = updated.daily.day
                odd = contents.odd ?? (taken ? nil : contents.day.map { SharedDay.laterDay($0.day, than: today) })
                let result = body(&updated)
                return (result, updated.daily.shared())
            }
        } catch {
            throw BackfillError("\(error.description); give another --storage.path, or none to count this run alone")
        }
        if let odd, !updated.sharedDayOddReported {
            updated.sharedDayOddReported = true
            report(
                "the day's counts shared in \(sharedDay.path) were not taken (\(odd)); "
                    + "this run's own are kept and written over them")
        }
        requests = updated
        return result
    }

    /// One request counted as `counted` leaves now, if the day has room: from the room its location
    /// holds, or past that (a resend) only with room in the day as every process sharing it counted it.
    private func send(
        _ counted: BackfillRequests.Counted, _ requests: inout BackfillRequests
    ) throws(BackfillError) -> Bool {
        let now = time.now()
        if requests.held[counted.rawValue] > 0 { return requests.send(counted, now: now) }
        return try sharing(&requests) { $0.send(counted, now: now) }
    }

    /// The body of a 200; nil for a 404 (no data there: OpenWeather says not to ask again). Paced and
    /// counted as `counted`, as the exporter's requests of that endpoint are; answers that may pass (429, 5xx,
    /// transport) are tried `attempts` times, after the exporter's waits (a Retry-After held to
    /// [1 min, 1 h], transient failures backing off from a minute).
    func fetch(
        _ request: APIRequest, as counted: BackfillRequests.Counted, _ requests: inout BackfillRequests, what: String
    ) throws(BackfillError) -> [UInt8]? {
        var attempt = 0
        while true {
            attempt += 1
            time.sleep(until: max(time.now(), requests.budget.nextAllowed()))
            guard try send(counted, &requests) else {
                throw BackfillError(
                    """
                    \(what): the day's allowance has no room left; what is done is kept: run the same command after \
                    00:00 UTC to go on
                    """
                )
            }
            let wait: Double
            do {
                // The client's resend after a kept connection closed leaves too: counted, and only with room.
                let body = try transport.get(request, resend: { (try? send(counted, &requests)) ?? false })
                requests.rateLimitStrikes = 0
                return body
            } catch {
                if OneCall.needsSubscription(error) {
                    throw BackfillError(
                        "the key has no One Call by Call subscription, which the weather's history (timemachine) needs",
                        subscriptionMissing: true)
                }
                switch error {
                case .http(404, _, _): return nil
                case .http(429, _, let retryAfter):
                    requests.rateLimitStrikes += 1
                    wait = PollSchedule.rateLimitPause(
                        retryAfter: retryAfter,
                        backoff: PollSchedule.rateLimitBackoff(strikes: requests.rateLimitStrikes))
                case .http(let status, _, _) where status >= 500:
                    wait = PollSchedule.backoff(
                        failures: attempt, first: PollSchedule.firstResolverRetry, cap: PollSchedule.maxRateLimitPause,
                        random: .random(in: 0..<1))
                case .transport:
                    wait = PollSchedule.backoff(
                        failures: attempt, first: PollSchedule.firstResolverRetry, cap: PollSchedule.maxRateLimitPause,
                        random: .random(in: 0..<1))
                default: throw BackfillError("\(what): \(error)")
                }
                guard attempt < attempts else {
                    throw BackfillError(
                        """
                        \(what): \(error), \(attempts) times; what is done is kept: run the same command again to go on
                        """
                    )
                }
                report("\(what): \(error); trying again in \(PrometheusDuration.format(seconds: wait.rounded(.up)))")
            }
            time.sleep(until: time.now() + wait)
        }
    }
}
