import Glibc
import OpenWeather
import Platform

/// Where a backfill reads the time and waits: the system's clock, or one a test moves by hand.
protocol BackfillTime: Sendable {
    /// Unix seconds.
    func now() -> Double
    /// Returns at `time` (at once when it has passed).
    func sleep(until time: Double)
}

struct SystemBackfillTime: BackfillTime {
    func now() -> Double { SystemClock.wallSeconds() }

    func sleep(until time: Double) {
        var left = time - now()
        while left > 0 {
            var wait = timespec(tv_sec: Int(left), tv_nsec: Int((left - left.rounded(.down)) * 1e9))
            nanosleep(&wait, nil)
            left = time - now()
        }
    }
}

/// How a backfill's requests leave, by the exporter's rules: paced by its per-minute budget
/// (`RequestBudget`), each counted against the day's allowances (`DailyBudget`) where it leaves, the
/// client's resends included, within the room its location holds.
struct BackfillRequests {
    /// What a backfill's requests are counted as: the source the exporter counts the same endpoint's
    /// requests under (timemachine is billed as One Call). Its raw value is its slot in `daily`.
    enum Counted: Int, CaseIterable {
        case geocoding, oneCall, airPollution

        var name: String {
            switch self {
            case .geocoding: GeocodingSource.name
            case .oneCall: OneCallSource.name
            case .airPollution: AirPollutionSource.name
            }
        }
    }

    var budget: RequestBudget
    var daily: DailyBudget
    /// Room the location under way holds, by `Counted` (`DailyBudget.reserve`).
    var held = [Int](repeating: 0, count: Counted.allCases.count)
    /// 429s in a row: the exporter's pause doubles with them.
    var rateLimitStrikes = 0
    /// A line said the shared day's file was not taken (`Backfill.sharing`): once a run.
    var sharedDayOddReported = false

    init(perMinute: Int, oneCallPerDay: Int?, keyPerDay: Int?, wall: Double) {
        budget = RequestBudget(limitPerMinute: max(perMinute, 1))
        daily = DailyBudget(wall: wall)
        daily.configure(
            sources: Counted.allCases.map(\.name),
            limits: Counted.allCases.map { $0 == .oneCall ? oneCallPerDay : nil }, keyLimit: keyPerDay)
    }

    /// Holds the day's room for a location's requests, by `Counted`.
    mutating func hold(_ requests: [Int]) {
        for (slot, count) in requests.enumerated() where count > 0 {
            daily.reserve(slot, count)
            held[slot] += count
        }
    }

    /// Gives back what the location held and did not send.
    mutating func releaseHeld() {
        for (slot, count) in held.enumerated() { daily.release(slot, count) }
        held = held.map { _ in 0 }
    }

    /// One request counted as `counted` leaves at `now`: counted. False when the day has no room for it.
    mutating func send(_ counted: Counted, now: Double) -> Bool {
        guard daily.take(counted.rawValue, held: &held[counted.rawValue]) else { return false }
        budget.record(start: now)
        return true
    }
}

/// Asks OpenWeather for the past of every location and writes it as OpenMetrics (`HistoryBlock`),
/// one location at a time, each kept (`BackfillParts`) as soon as it is complete.
struct Backfill {
    var locations: [Location]
    var weather: (any Source)?
    var airPollution: (any Source)?
    var language: String
    var perMinute: Int
    /// The day's allowances this run keeps within: One Call's (timemachine is billed as One Call) and
    /// the key's (`--collector.onecall.max-requests-per-day`, `--openweather.max-requests-per-day`).
    var oneCallPerDay: Int? = nil
    var keyPerDay: Int? = nil
    var output: String
    /// Put on every sample (`--label`, by default `job="openweather"`).
    var labels: [BackfillOptions.Label] = BackfillOptions.defaultLabels
    var transport: any OpenWeatherTransport
    var time: any BackfillTime
    /// One line of progress or news (stderr in the command).
    var report: (String) -> Void
    /// The exporter's day (`--storage.path`), shared with it and other backfills; nil counts this run alone.
    var sharedDay: SharedDay? = nil
    /// Tries of one request before the backfill stops (answers that may pass: 429, 5xx, transport).
    var attempts = 3

    /// What a run goes through: the locations in label order, each one's block once it is complete.
    private struct Work {
        var range: BackfillParts.HistoryRange
        var hours: [Double]
        var ordered: [Location]
        var blocks: [HistoryBlock?]
        /// Nil once a key without One Call made the weather be skipped.
        var weather: (any Source)?
        var requests: BackfillRequests
        var airPollution: Bool

        var done: Int { blocks.count { $0 != nil } }

        /// The calls `location` costs, by what each is counted as (`BackfillRequests.Counted`).
        func calls(_ location: Location) -> [Int] {
            BackfillRequests.Counted.allCases.map { counted in
                switch counted {
                case .geocoding: location.query != nil ? 1 : 0
                case .oneCall: weather != nil ? hours.count : 0
                case .airPollution: airPollution ? 1 : 0
                }
            }
        }

        func callsLeft() -> Int {
            ordered.indices.filter { blocks[$0] == nil }.reduce(0) { $0 + calls(ordered[$1]).reduce(0, +) }
        }
    }

    /// The range `since` back from `until` (now when nil); an earlier interrupted run's range wins.
    func run(since: Duration, until: Double?) throws(BackfillError) {
        let parts = BackfillParts(output: output)
        var work = try start(since: since, until: until, parts: parts)
        for position in work.ordered.indices where work.blocks[position] == nil {
            let location = work.ordered[position]
            try holdRoom(for: location, in: &work)
            let block = try history(of: location, in: &work)
            try sharing(&work.requests) { $0.releaseHeld() }
            guard let block else { continue }
            try parts.keep(block, of: location)
            work.blocks[position] = block
            progress(work, at: nil)
        }
        try finish(work, parts: parts)
    }

    /// The range (an interrupted run's, else a new one, kept for a resumed run), the day's counts so
    /// far, and one line saying what is to be done.
    private func start(since: Duration, until: Double?, parts: BackfillParts) throws(BackfillError) -> Work {
        try parts.checkOutput()
        // Whole seconds, as the range is kept for a resumed run.
        let now = time.now()
        let end = (until ?? now).rounded(.down)
        var range = BackfillParts.HistoryRange(
            from: (end - since.seconds).rounded(.down), until: end, weather: weather != nil,
            airPollution: airPollution != nil)
        // Before anything is sized by it: --since=31000y once made an array of 2.2 GB of hours.
        if let problem = range.problem(now: now) {
            throw BackfillError.configuration(
                "--since and --until give a range OpenWeather has no history for: \(problem); "
                    + "--since may reach back to 1979-01-01, --until at most four days ahead")
        }
        if let earlier = try parts.existingRange(now: now) {
            guard earlier.weather == range.weather, earlier.airPollution == range.airPollution else {
                throw BackfillError.configuration(
                    "\(parts.directory) holds an interrupted backfill of other collectors (weather \(earlier.weather), air pollution \(earlier.airPollution)): run with the same collectors to finish it, or remove the directory to start afresh"
                )
            }
            if earlier != range {
                report(
                    "resuming \(parts.directory): the range is the first run's, \(Clock.rfc3339(earlier.from)) to \(Clock.rfc3339(earlier.until))"
                )
            }
            range = earlier
        } else {
            try parts.start(range)
        }
        let ordered = Location.labelOrder(locations).map { locations[$0] }
        var requests = BackfillRequests(
            perMinute: perMinute, oneCallPerDay: oneCallPerDay, keyPerDay: keyPerDay, wall: time.now())
        try sharing(&requests) { _ in }
        let work = Work(
            range: range, hours: Self.hours(from: range.from, until: range.until), ordered: ordered,
            blocks: ordered.map { parts.block(of: $0) },
            weather: weather, requests: requests, airPollution: airPollution != nil)
        let counted =
            sharedDay.map {
                "the day's counts shared with the exporter in \($0.path): \(requests.daily.dayTotal) sent today"
            }
            ?? "the day's allowances counted for this run alone (give the exporter's --storage.path to share its counts)"
        report(
            "backfill \(Clock.rfc3339(range.from)) to \(Clock.rfc3339(range.until)): \(ordered.count) locations (\(work.done) done before), "
                + "\(work.callsLeft()) calls at \(perMinute) a minute; \(counted)")
        return work
    }

    /// A location is asked whole or not at all: one that would go past a day's allowance waits for the
    /// next day's run, which goes on from here. Its calls are held from the day's room until it is done.
    private func holdRoom(for location: Location, in work: inout Work) throws(BackfillError) {
        let calls = work.calls(location)
        let done = "\(work.done) of \(work.ordered.count) locations done"
        let now = time.now()
        let refused: BackfillError? = try sharing(&work.requests) { requests in
            requests.daily.advance(to: now)
            let daily = requests.daily
            for (limit, spent, needed, flag) in [
                (
                    oneCallPerDay, daily.count(of: BackfillRequests.Counted.oneCall.rawValue),
                    calls[BackfillRequests.Counted.oneCall.rawValue],
                    "--collector.onecall.max-requests-per-day"
                ),
                (keyPerDay, daily.dayTotal, calls.reduce(0, +), "--openweather.max-requests-per-day"),
            ] {
                guard let limit, spent + needed > limit else { continue }
                let hint =
                    needed > limit
                    ? "one location's range alone needs \(needed): backfill shorter ranges, one a day (--until)"
                    : "what is done is kept: run the same command after 00:00 UTC to go on"
                let message =
                    "\(done); \(location.name) needs \(needed) more calls, past the day's \(limit) "
                    + "(\(flag), \(spent) sent today): \(hint)"
                // More than a whole day's allowance: no day fits it, so the range given is the mistake.
                return needed > limit ? BackfillError.configuration(message) : BackfillError(message)
            }
            requests.hold(calls)
            return nil
        }
        if let refused { throw refused }
    }

    /// One location's history, nil when there is none to ask for (a place the geocoder does not know).
    private func history(of location: Location, in work: inout Work) throws(BackfillError) -> HistoryBlock? {
        var block = HistoryBlock()
        let sentBefore = work.requests.daily.total
        var coordinates = location.coordinates
        var resolved: ResolvedPlace?
        if location.query != nil {
            let geocoding = GeocodingSource()
            let body = try fetch(
                geocoding.request(for: location, at: nil, language: language), as: .geocoding, &work.requests,
                what: "geocoding \(location.name)")
            do throws(OpenWeatherError) {
                guard let body else { throw .noMatch("the geocoder does not know it") }
                resolved = try geocoding.decode(body, for: location)
            } catch .noMatch(let reason) {
                // As the exporter shows nothing for it: the others are still worth their history.
                report("\(location.name) skipped: \(reason)")
                return nil
            } catch {
                throw BackfillError("\(location.name): \(error)")
            }
            coordinates = resolved.map { Coordinates(latitude: $0.place.latitude, longitude: $0.place.longitude) }
        }
        guard let coordinates else { return nil }
        if let source = work.weather {
            var readings: [(time: Double, reading: any Sendable)] = []
            for hour in work.hours {
                let request = History.weatherRequest(
                    latitude: coordinates.latitude, longitude: coordinates.longitude, at: hour, language: language)
                let body: [UInt8]?
                do {
                    body = try fetch(
                        request, as: .oneCall, &work.requests,
                        what: "\(location.name)'s weather at \(Clock.rfc3339(hour))")
                } catch  where error.subscriptionMissing {
                    guard airPollution != nil else {
                        throw BackfillError(
                            "\(error.description); nothing else to backfill: add --collector.air_pollution for the free air pollution history"
                        )
                    }
                    report("weather skipped: \(error.description); the air pollution history is free and goes on")
                    work.weather = nil
                    readings = []
                    break
                }
                guard let body else { continue }
                do {
                    readings.append((hour, try TimemachineDecoder.decode(body)))
                } catch {
                    throw BackfillError("\(location.name)'s weather at \(Clock.rfc3339(hour)): \(error)")
                }
                if readings.count % 60 == 0 { progress(work, at: (location, work.requests.daily.total - sentBefore)) }
            }
            if work.weather != nil { block.add(source, readings: readings, location: location, resolved: resolved) }
        }
        if let source = airPollution {
            let request = History.airPollutionRequest(
                latitude: coordinates.latitude, longitude: coordinates.longitude, from: work.range.from,
                to: work.range.until)
            if let body = try fetch(
                request, as: .airPollution, &work.requests, what: "\(location.name)'s air pollution")
            {
                let hours: [AirPollution]
                do {
                    hours = try AirPollutionHistoryDecoder.decode(body)
                } catch {
                    throw BackfillError("\(location.name)'s air pollution: \(error)")
                }
                let readings = hours.filter {
                    $0.observationTime >= work.range.from && $0.observationTime < work.range.until
                }
                .map { (time: $0.observationTime, reading: $0 as any Sendable) }
                block.add(source, readings: readings, location: location, resolved: resolved)
            }
        }
        return block
    }

    /// Runs `body` on the day as every process sharing it (`SharedDay`) has counted it, under its lock,
    /// and writes back what this run holds; without a shared day, on this run's counts alone. The day is
    /// this run's by its clock, as the exporter's is; a file it does not take is said once a run.
    private func sharing<Result>(
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

    /// Every family in name order over every block, then the work is removed.
    private func finish(_ work: Work, parts: BackfillParts) throws(BackfillError) {
        var families = (weather?.families ?? []) + (airPollution?.families ?? [])
        families.removeAll { HistoryBlock.leftOut.contains($0.name) }
        let written = work.blocks.compactMap { $0 }
        let file = try HistoryBlock.merge(written, families: families, labels: labels)
        try BackfillParts.write(file, to: output)
        parts.remove()
        let locations = "\(written.count) of \(work.ordered.count) locations"
        if output == BackfillParts.standardOutput {
            // Standard output has no name to import, and the data is all that went there: say what it held.
            let samples = file.split(separator: UInt8(ascii: "\n")).count { $0.first != UInt8(ascii: "#") }
            report(
                "wrote \(samples) samples (\(locations)) to standard output; save it as FILE and import it with promtool tsdb create-blocks-from openmetrics FILE DIR"
            )
        } else {
            report(
                "wrote \(output): \(locations); import it with promtool tsdb create-blocks-from openmetrics \(output) DIR"
            )
        }
    }

    /// Every whole hour in `from..<until`: the moments of the weather's history.
    static func hours(from: Double, until: Double) -> [Double] {
        Array(stride(from: (from / 3600).rounded(.up) * 3600, to: until, by: 3600))
    }

    /// The body of a 200; nil for a 404 (no data there: OpenWeather says not to ask again). Paced and
    /// counted as `counted`, as the exporter's requests of that endpoint are; answers that may pass (429, 5xx,
    /// transport) are tried `attempts` times, after the exporter's waits (a Retry-After held to
    /// [1 min, 1 h], transient failures backing off from a minute).
    private func fetch(
        _ request: APIRequest, as counted: BackfillRequests.Counted, _ requests: inout BackfillRequests, what: String
    ) throws(BackfillError) -> [UInt8]? {
        var attempt = 0
        while true {
            attempt += 1
            time.sleep(until: max(time.now(), requests.budget.nextAllowed()))
            guard try send(counted, &requests) else {
                throw BackfillError(
                    "\(what): the day's allowance has no room left; what is done is kept: run the same command after 00:00 UTC to go on"
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
                        "\(what): \(error), \(attempts) times; what is done is kept: run the same command again to go on"
                    )
                }
                report("\(what): \(error); trying again in \(PrometheusDuration.format(seconds: wait.rounded(.up)))")
            }
            time.sleep(until: time.now() + wait)
        }
    }

    /// `location`: the one under way, with the requests it has sent so far.
    private func progress(_ work: Work, at location: (Location, sent: Int)?) {
        let left = max(0, work.callsLeft() - (location?.sent ?? 0))
        let doing = location.map { ", now at \($0.0.name)" } ?? ""
        report(
            "\(work.done)/\(work.ordered.count) locations done\(doing), \(left) calls left, about \(PrometheusDuration.format(.seconds(Int64((Double(left) * work.requests.budget.spacing).rounded(.up))))) left"
        )
    }
}

/// `openweather-exporter backfill`, for `main`.
public enum BackfillCommand {
    /// Runs it against `configuration`'s API (the simulator's with `--demo`); the exit status.
    public static func run(_ configuration: Configuration, _ options: BackfillOptions) -> Int32 {
        func enabled(_ name: String) -> (any Source)? {
            configuration.collectors.first { $0.name == name && $0.enabled }?.source
        }
        // One Call (3.0 or 4.0, one subscription) stands in for the weather: its past is timemachine's.
        let weather =
            enabled(WeatherSource.name)
            ?? (enabled(OneCallSource.name) ?? enabled(OneCall4Source.name)).flatMap { _ in
                configuration.sources.first { $0.name == WeatherSource.name }
            }
        let report = { (line: String) in
            let text = Array("backfill: \(line)\n".utf8)
            _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        guard weather != nil || enabled(AirPollutionSource.name) != nil else {
            report(
                "nothing to backfill: enable --collector.weather (or --collector.onecall) for the weather, --collector.air_pollution for air quality"
            )
            return 2
        }
        let client: OpenWeatherClient
        do {
            client = try configuration.openWeatherClient()
        } catch {
            report(error.description)
            return 2
        }
        // The exporter's state directory as the exporter uses it: the day's counts are its counts.
        var sharedDay: SharedDay?
        if let path = configuration.storagePath {
            do throws(StateStorageError) {
                sharedDay = SharedDay(storage: try StateStorage(directory: path))
            } catch {
                report(error.description)
                return 2
            }
        }
        let backfill = Backfill(
            locations: configuration.locations, weather: weather, airPollution: enabled(AirPollutionSource.name),
            language: configuration.language, perMinute: configuration.maxRequestsPerMinute,
            oneCallPerDay: configuration.sources.first { $0.name == OneCallSource.name }?.maxRequestsPerDay,
            keyPerDay: configuration.maxRequestsPerDay, output: options.output, labels: options.labels,
            transport: client, time: SystemBackfillTime(), report: report, sharedDay: sharedDay)
        do {
            try backfill.run(since: options.since, until: options.until)
            return 0
        } catch {
            report(error.description)
            return error.status
        }
    }
}
