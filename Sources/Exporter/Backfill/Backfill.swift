import Glibc
import OpenWeather
import Platform

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
                    """
                    \(parts.directory) holds an interrupted backfill of other collectors (weather \(earlier.weather), \
                    air pollution \(earlier.airPollution)): run with the same collectors to finish it, or remove the \
                    directory to start afresh
                    """
                )
            }
            if earlier != range {
                report(
                    """
                    resuming \(parts.directory): the range is the first run's, \(Clock.rfc3339(earlier.from)) to \
                    \(Clock.rfc3339(earlier.until))
                    """
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
                ?? """
                the day's allowances counted for this run alone (give the exporter's --storage.path to share its counts)
                """
        report(
            """
            backfill \(Clock.rfc3339(range.from)) to \(Clock.rfc3339(range.until)): \(ordered.count) locations \
            (\(work.done) done before), \(work.callsLeft()) calls at \(perMinute) a minute; \(counted)
            """)
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
        var resolved: ResolvedPlace?
        if location.query != nil {
            guard let place = try resolve(location, &work.requests) else { return nil }
            resolved = place
        }
        let found = resolved.map { Coordinates(latitude: $0.place.latitude, longitude: $0.place.longitude) }
        guard let coordinates = found ?? location.coordinates else { return nil }
        if let source = work.weather,
            let readings = try weatherHours(at: coordinates, of: location, sentBefore: sentBefore, in: &work)
        {
            block.add(source, readings: readings, location: location, resolved: resolved)
        }
        if let source = airPollution,
            let readings = try airPollutionHours(at: coordinates, of: location, in: &work)
        {
            block.add(source, readings: readings, location: location, resolved: resolved)
        }
        return block
    }

    /// A location named by a query, found by the geocoder; nil when it does not know it.
    private func resolve(
        _ location: Location, _ requests: inout BackfillRequests
    ) throws(BackfillError) -> ResolvedPlace? {
        let geocoding = GeocodingSource()
        let body = try fetch(
            geocoding.request(
                for: PollFacts(location: location, coordinates: nil, language: language, now: time.now())),
            as: .geocoding, &requests,
            what: "geocoding \(location.name)")
        do throws(OpenWeatherError) {
            guard let body else { throw .noMatch("the geocoder does not know it") }
            return try geocoding.decode(body, for: location)
        } catch .noMatch(let reason) {
            // As the exporter shows nothing for it: the others are still worth their history.
            report("\(location.name) skipped: \(reason)")
            return nil
        } catch {
            throw BackfillError("\(location.name): \(error)")
        }
    }

    /// The weather of each hour from One Call's timemachine; nil once the key proves to lack the
    /// subscription, and the weather is then left out for every location.
    private func weatherHours(
        at coordinates: Coordinates, of location: Location, sentBefore: Int, in work: inout Work
    ) throws(BackfillError) -> [(time: Double, reading: any Sendable)]? {
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
                        """
                        \(error.description); nothing else to backfill: add --collector.air_pollution for the free \
                        air pollution history
                        """
                    )
                }
                report("weather skipped: \(error.description); the air pollution history is free and goes on")
                work.weather = nil
                return nil
            }
            guard let body else { continue }
            do {
                readings.append((hour, try TimemachineDecoder.decode(body)))
            } catch {
                throw BackfillError("\(location.name)'s weather at \(Clock.rfc3339(hour)): \(error)")
            }
            if readings.count % 60 == 0 { progress(work, at: (location, work.requests.daily.total - sentBefore)) }
        }
        return readings
    }

    /// The air pollution of each hour in the range, in one request; nil when there is no answer to use.
    private func airPollutionHours(
        at coordinates: Coordinates, of location: Location, in work: inout Work
    ) throws(BackfillError) -> [(time: Double, reading: any Sendable)]? {
        let request = History.airPollutionRequest(
            latitude: coordinates.latitude, longitude: coordinates.longitude, from: work.range.from,
            to: work.range.until)
        guard let body = try fetch(request, as: .airPollution, &work.requests, what: "\(location.name)'s air pollution")
        else { return nil }
        let hours: [AirPollution]
        do {
            hours = try AirPollutionHistoryDecoder.decode(body)
        } catch {
            throw BackfillError("\(location.name)'s air pollution: \(error)")
        }
        return hours.filter { $0.observationTime >= work.range.from && $0.observationTime < work.range.until }
            .map { (time: $0.observationTime, reading: $0 as any Sendable) }
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
                """
                wrote \(samples) samples (\(locations)) to standard output; save it as FILE and import it with \
                promtool tsdb create-blocks-from openmetrics FILE DIR
                """
            )
        } else {
            report(
                """
                wrote \(output): \(locations); import it with promtool tsdb create-blocks-from openmetrics \(output) DIR
                """
            )
        }
    }

    /// Every whole hour in `from..<until`: the moments of the weather's history.
    static func hours(from: Double, until: Double) -> [Double] {
        Array(stride(from: (from / 3600).rounded(.up) * 3600, to: until, by: 3600))
    }

    /// `location`: the one under way, with the requests it has sent so far.
    private func progress(_ work: Work, at location: (Location, sent: Int)?) {
        let left = max(0, work.callsLeft() - (location?.sent ?? 0))
        let doing = location.map { ", now at \($0.0.name)" } ?? ""
        report(
            """
            \(work.done)/\(work.ordered.count) locations done\(doing), \(left) calls left, about \
            \(PrometheusDuration.format(.seconds(Int64((Double(left) * work.requests.budget.spacing).rounded(.up))))) \
            left
            """
        )
    }
}
