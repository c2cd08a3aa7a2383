import Glibc
import OpenWeather

/// Where a backfill reads the time and waits: the system's clock, or one a test moves by hand.
protocol BackfillTime: Sendable {
    /// Unix seconds.
    func now() -> Double
    /// Returns at `time` (at once when it has passed).
    func sleep(until time: Double)
}

struct SystemBackfillTime: BackfillTime {
    func now() -> Double { Clock.wallSeconds() }

    func sleep(until time: Double) {
        var left = time - now()
        while left > 0 {
            var wait = timespec(tv_sec: Int(left), tv_nsec: Int((left - left.rounded(.down)) * 1e9))
            nanosleep(&wait, nil)
            left = time - now()
        }
    }
}

/// The per-minute budget as an even pace: one request every `60 / perMinute` seconds, so no minute
/// ever holds more than the budget, whatever the answers' speed.
struct BackfillPace: Equatable {
    let spacing: Double
    private var next: Double?
    /// Requests counted so far.
    private(set) var taken = 0

    init(perMinute: Int) { spacing = 60 / Double(max(perMinute, 1)) }

    /// When the next request may go, asked at `now`; it is then counted as sent at that time.
    mutating func take(now: Double) -> Double {
        let start = max(now, next ?? now)
        next = start + spacing
        taken += 1
        return start
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
    /// Tries of one request before the backfill stops (answers that may pass: 429, 5xx, transport).
    var attempts = 3

    /// The range `since` back from `until` (now when nil); an earlier interrupted run's range wins.
    func run(since: Duration, until: Double?) throws(BackfillError) {
        let parts = BackfillParts(output: output)
        try parts.checkOutput()
        // Whole seconds, as the range is kept for a resumed run.
        let now = time.now()
        let end = (until ?? now).rounded(.down)
        var plan = BackfillParts.Plan(from: (end - since.seconds).rounded(.down), until: end, weather: weather != nil, airPollution: airPollution != nil)
        // Before anything is sized by it: --since=31000y once made an array of 2.2 GB of hours.
        if let problem = plan.problem(now: now) {
            throw BackfillError("--since and --until give a range OpenWeather has no history for: \(problem); --since may reach back to 1979-01-01, --until at most four days ahead")
        }
        if let earlier = try parts.existingPlan(now: now) {
            guard earlier.weather == plan.weather, earlier.airPollution == plan.airPollution else {
                throw BackfillError(
                    "\(parts.directory) holds an interrupted backfill of other collectors (weather \(earlier.weather), air pollution \(earlier.airPollution)): run with the same collectors to finish it, or remove the directory to start afresh")
            }
            if earlier != plan {
                report("resuming \(parts.directory): the range is the first run's, \(Clock.rfc3339(earlier.from)) to \(Clock.rfc3339(earlier.until))")
            }
            plan = earlier
        } else {
            try parts.start(plan)
        }
        let hours = Self.hours(from: plan.from, until: plan.until)
        let ordered = Location.labelOrder(locations).map { locations[$0] }
        var blocks = ordered.map { parts.block(of: $0) }
        var weatherSource = weather
        var pace = BackfillPace(perMinute: perMinute)
        func calls(_ location: Location) -> Int {
            (location.query != nil ? 1 : 0) + (weatherSource != nil ? hours.count : 0) + (airPollution != nil ? 1 : 0)
        }
        let done = blocks.filter { $0 != nil }.count
        report("backfill \(Clock.rfc3339(plan.from)) to \(Clock.rfc3339(plan.until)): \(ordered.count) locations (\(done) done before), "
            + "\(ordered.indices.filter { blocks[$0] == nil }.reduce(0) { $0 + calls(ordered[$1]) }) calls at \(perMinute) a minute")

        var oneCallSpent = 0
        for (position, location) in ordered.enumerated() where blocks[position] == nil {
            // A location is asked whole or not at all: one that would go past a day's allowance waits for
            // the next day's run, which goes on from here.
            let oneCallNeeded = weatherSource != nil ? hours.count : 0
            for (limit, spent, needed, flag) in [
                (oneCallPerDay, oneCallSpent, oneCallNeeded, "--collector.onecall.max-requests-per-day"),
                (keyPerDay, pace.taken, calls(location), "--openweather.max-requests-per-day"),
            ] {
                guard let limit, spent + needed > limit else { continue }
                let done = blocks.filter { $0 != nil }.count
                let hint = needed > limit
                    ? "one location's range alone needs \(needed): backfill shorter ranges, one a day (--until)"
                    : "what is done is kept: run the same command after 00:00 UTC to go on"
                throw BackfillError(
                    "\(done) of \(ordered.count) locations done; \(location.name) needs \(needed) more calls, past the day's \(limit) (\(flag)): \(hint)")
            }
            var block = HistoryBlock()
            let takenBefore = pace.taken
            var coordinates = location.coordinates
            var resolved: ResolvedPlace?
            if location.query != nil {
                let geocoding = GeocodingSource()
                let body = try fetch(geocoding.request(for: location, at: nil, language: language), &pace, what: "geocoding \(location.name)")
                do throws(OpenWeatherError) {
                    guard let body else { throw .noMatch("the geocoder does not know it") }
                    resolved = try geocoding.decode(body, for: location)
                } catch .noMatch(let reason) {
                    // As the exporter shows nothing for it: the others are still worth their history.
                    report("\(location.name) skipped: \(reason)")
                    continue
                } catch {
                    throw BackfillError("\(location.name): \(error)")
                }
                coordinates = resolved.map { Coordinates(latitude: $0.place.latitude, longitude: $0.place.longitude) }
            }
            guard let coordinates else { continue }
            if let source = weatherSource {
                var readings: [(time: Double, reading: any Sendable)] = []
                for hour in hours {
                    let request = History.weatherRequest(latitude: coordinates.latitude, longitude: coordinates.longitude, at: hour, language: language)
                    let body: [UInt8]?
                    do {
                        body = try fetch(request, &pace, what: "\(location.name)'s weather at \(Clock.rfc3339(hour))")
                    } catch where error.subscriptionMissing {
                        guard airPollution != nil else {
                            throw BackfillError("\(error.description); nothing else to backfill: add --collector.air_pollution for the free air pollution history")
                        }
                        report("weather skipped: \(error.description); the air pollution history is free and goes on")
                        weatherSource = nil
                        readings = []
                        break
                    }
                    guard let body else { continue }
                    do {
                        readings.append((hour, try TimemachineDecoder.decode(body)))
                    } catch {
                        throw BackfillError("\(location.name)'s weather at \(Clock.rfc3339(hour)): \(error)")
                    }
                    if readings.count % 60 == 0 { progress(ordered, blocks, calls, pace, at: location, since: takenBefore) }
                }
                block.add(source, readings: readings, location: location, resolved: resolved)
                oneCallSpent += oneCallNeeded
            }
            if let source = airPollution {
                let request = History.airPollutionRequest(
                    latitude: coordinates.latitude, longitude: coordinates.longitude, from: plan.from, to: plan.until)
                if let body = try fetch(request, &pace, what: "\(location.name)'s air pollution") {
                    let hours: [AirPollution]
                    do {
                        hours = try AirPollutionHistoryDecoder.decode(body)
                    } catch {
                        throw BackfillError("\(location.name)'s air pollution: \(error)")
                    }
                    let readings = hours.filter { $0.observationTime >= plan.from && $0.observationTime < plan.until }
                        .map { (time: $0.observationTime, reading: $0 as any Sendable) }
                    block.add(source, readings: readings, location: location, resolved: resolved)
                }
            }
            try parts.keep(block, of: location)
            blocks[position] = block
            progress(ordered, blocks, calls, pace, at: nil, since: pace.taken)
        }

        var families = (weather?.families ?? []) + (airPollution?.families ?? [])
        families.removeAll { HistoryBlock.leftOut.contains($0.name) }
        let written = blocks.compactMap { $0 }
        try BackfillParts.write(HistoryBlock.merge(written, families: families, labels: labels), to: output)
        parts.remove()
        report("wrote \(output): \(written.count) of \(ordered.count) locations; import it with promtool tsdb create-blocks-from openmetrics \(output) DIR")
    }

    /// Every whole hour in `from..<until`: the moments of the weather's history.
    static func hours(from: Double, until: Double) -> [Double] {
        Array(stride(from: (from / 3600).rounded(.up) * 3600, to: until, by: 3600))
    }

    /// The body of a 200, paced; nil for a 404 (no data there: OpenWeather says not to ask again).
    /// Answers that may pass (429, 5xx, transport) are tried `attempts` times, waiting as asked.
    private func fetch(_ request: APIRequest, _ pace: inout BackfillPace, what: String) throws(BackfillError) -> [UInt8]? {
        var attempt = 0
        while true {
            attempt += 1
            time.sleep(until: pace.take(now: time.now()))
            do {
                return try transport.get(request)
            } catch {
                if OneCall.needsSubscription(error) {
                    throw BackfillError(
                        "the key has no One Call by Call subscription, which the weather's history (timemachine) needs", subscriptionMissing: true)
                }
                var wait = 2.0 * Double(attempt)
                switch error {
                case .http(404, _, _): return nil
                case .http(let status, _, let retryAfter) where status == 429 || status >= 500: wait = retryAfter ?? wait
                case .transport: break
                default: throw BackfillError("\(what): \(error)")
                }
                guard attempt < attempts else {
                    throw BackfillError("\(what): \(error), \(attempts) times; what is done is kept: run the same command again to go on")
                }
                report("\(what): \(error); trying again in \(Int(wait.rounded(.up))) s")
                time.sleep(until: time.now() + wait)
            }
        }
    }

    /// `location`: the one under way, which has sent the requests counted since `since`.
    private func progress(
        _ ordered: [Location], _ blocks: [HistoryBlock?], _ calls: (Location) -> Int, _ pace: BackfillPace, at location: Location?, since: Int
    ) {
        let done = blocks.filter { $0 != nil }.count
        let left = max(0, ordered.indices.filter { blocks[$0] == nil }.reduce(0) { $0 + calls(ordered[$1]) } - (pace.taken - since))
        let doing = location.map { ", now at \($0.name)" } ?? ""
        report("\(done)/\(ordered.count) locations done\(doing), \(left) calls left, about \(PrometheusDuration.format(.seconds(Int64((Double(left) * pace.spacing).rounded(.up))))) left")
    }
}

/// `openweather-exporter backfill`, for `main`.
public enum BackfillCommand {
    /// Runs it against `configuration`'s API (the simulator's with `--demo`); the exit status.
    public static func run(_ configuration: Configuration, _ options: BackfillOptions) -> Int32 {
        func enabled(_ name: String) -> (any Source)? {
            guard let index = configuration.sources.firstIndex(where: { $0.name == name }), configuration.collectors[index].enabled else { return nil }
            return configuration.sources[index]
        }
        // One Call (3.0 or 4.0, one subscription) stands in for the weather: its past is timemachine's.
        let weather = enabled(WeatherSource.name) ?? (enabled(OneCallSource.name) ?? enabled(OneCall4Source.name)).flatMap { _ in
            configuration.sources.first { $0.name == WeatherSource.name }
        }
        let report = { (line: String) in
            let text = Array("backfill: \(line)\n".utf8)
            _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        guard weather != nil || enabled(AirPollutionSource.name) != nil else {
            report("nothing to backfill: enable --collector.weather (or --collector.onecall) for the weather, --collector.air_pollution for air quality")
            return 2
        }
        let client: OpenWeatherClient
        do {
            client = try configuration.openWeatherClient()
        } catch {
            report(error.description)
            return 2
        }
        let backfill = Backfill(
            locations: configuration.locations, weather: weather, airPollution: enabled(AirPollutionSource.name),
            language: configuration.language, perMinute: configuration.maxRequestsPerMinute,
            oneCallPerDay: configuration.sources.first { $0.name == OneCallSource.name }?.maxRequestsPerDay,
            keyPerDay: configuration.maxRequestsPerDay, output: options.output, labels: options.labels,
            transport: client, time: SystemBackfillTime(), report: report)
        do {
            try backfill.run(since: options.since, until: options.until)
            return 0
        } catch {
            report(error.description)
            return 1
        }
    }
}
