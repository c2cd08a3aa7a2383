import Dispatch
import OpenWeather

/// A request's life: a job's poll runs on a worker thread, every further request it sends is counted
/// as it leaves, and its answer goes back to the scheduler thread as a `Completion`.
extension Poller {
    /// A job started: what its poll starts from.
    struct Launch {
        var job: Int
        var slot: Int
        var source: any Source
        /// Everything the poll starts from.
        var poll: Poll<any Sendable>
        /// Room the schedule holds for the poll's requests after the first (`PollSchedule.send`).
        var held: Int
    }

    func fetch(_ launch: Launch, epoch: Int, transport: any OpenWeatherTransport, at sent: Double) {
        execute { [self] in
            let start = time.monotonic()
            let result: Result<any Sendable, OpenWeatherError>
            var body: [UInt8] = []
            var requests = 0
            var held = launch.held
            // Every request is counted where it leaves: the first when the job started, each other one
            // (a part, the client's resend) right before it goes, within the room the poll holds.
            func sending() -> Bool {
                requests += 1
                guard requests > 1 else { return true }
                // Past the room the poll holds (already written to the shared day), the day as shared decides.
                if held > 0 {
                    return core.withLock {
                        $0.send(launch.slot, of: launch.source, since: epoch, held: &held, now: time.monotonic())
                    }
                }
                return withSharedDay {
                    $0.send(launch.slot, of: launch.source, since: epoch, held: &held, now: time.monotonic())
                }
            }
            func get(_ request: APIRequest) throws(OpenWeatherError) -> [UInt8] {
                guard sending() else { throw Self.noRoomToday(launch.source) }
                return try transport.get(request, resend: sending)
            }
            do throws(OpenWeatherError) {
                let fetched = try launch.source.fetch(erased: launch.poll, get: get)
                result = .success(fetched.reading)
                body = fetched.body
            } catch {
                result = .failure(error)
                body = []
            }
            let completion = Completion(
                job: launch.job, epoch: epoch, location: launch.poll.facts.location, source: launch.source,
                slot: launch.slot,
                result: result,
                body: body, requests: requests, held: held, started: sent, duration: time.monotonic() - start)
            let finished = DispatchTime.now().uptimeNanoseconds
            let asleep = core.withLock { core in
                core.completions.append(completion)
                return core.sleepsUntil > finished + UInt64(Self.coalescing * 1e9)
            }
            if asleep { wake.signal() }
        }
    }

    /// A poll that would pass a daily limit with one more request: it sends nothing more. The poll's
    /// start held room for its most (`Source.maxRequestsPerPoll`), so only a resend past that meets this.
    static func noRoomToday(_ source: any Source) -> OpenWeatherError {
        .dailyLimit("\(source.name)'s or the key's daily limit has no room left today")
    }
}

extension Poller.Core {
    /// The daily budget's slot for a poll that started in `slot` under the setup of `epoch`: the same
    /// one, or after a reload the one its source's counts moved to (a reload matches sources by name).
    mutating func dailySlot(_ slot: Int, of source: any Source, since epoch: Int) -> Int {
        epoch == self.epoch ? slot : schedule.daily.slot(named: source.name)
    }

    /// A poll in flight is about to send another request: `PollSchedule.send` in its daily slot.
    mutating func send(_ slot: Int, of source: any Source, since epoch: Int, held: inout Int, now: Double) -> Bool {
        schedule.send(slot: dailySlot(slot, of: source, since: epoch), held: &held, now: now)
    }
}
