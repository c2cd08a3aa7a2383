import Exposition
import OpenWeather

/// One Call 4.0 (`/data/4.0/onecall/...`, the "One Call by Call" subscription): 3.0's data, billed per
/// endpoint (a "part") and per page. It stands in for `weather` (its current part) and `forecast`
/// (its 1h and 1day timelines, and 15min when a horizon is not whole hours) and writes 3.0's own
/// families from the same model. A poll asks only for the parts some family reads, each at its own
/// pace: current, 1min and 15min every poll, 1h and 1day every few polls. Pages are placed with
/// `start`, never by the links an answer carries (they hold the key); an alert's text is asked once
/// per ID and kept while it is listed (bounded: `OneCall4.alertsKept`, `alertTextLimit`, `alertMaxAge`).
/// Without the subscription it answers 401 as 3.0 does: the free endpoints then run and it is retried hourly.
struct OneCall4Source: Source {
    static let name = "onecall4"
    static let summary =
        """
        One Call 4.0 (/data/4.0/onecall, needs the \"One Call by Call\" subscription): what One Call 3.0 gives, asked \
        part by part (current, 1min, 15min, 1h, 1day; each a billed call) only for the families in use, with horizons \
        under the hour from its 15-minute timeline.
        """
    static let enabledByDefault = false
    static let defaultInterval = Duration.seconds(600)
    static let demoInterval = Duration.seconds(15)
    /// As 3.0's: alerts and the minute forecast move on with time.
    let timePeriod: Double? = 60
    static let standsIn: [StandIn<OneCall4.Reading>] = [
        .for(ForecastSource.self) { forecast(of: $0) }, .for(WeatherSource.self) { $0.oneCall.current },
    ]

    /// Parts that `--collector.onecall4.exclude` may leave out: current and 1h are what the weather and
    /// the forecast (which it stands in for) read.
    enum Exclusion: String, Sendable, CaseIterable {
        case minute = "1min"
        case day = "1day"
        case alerts
    }

    struct Options: Sendable, Equatable {
        var exclude: [Exclusion] = []
        var hourlyInterval = OneCall4Source.hourlyIntervalSetting.defaultValue
        var dailyInterval = OneCall4Source.dailyIntervalSetting.defaultValue
        /// Requests a UTC day; 0 for no limit.
        var maxRequestsPerDay = OneCall4Source.maxRequestsPerDaySetting.defaultValue
        /// Pages each timeline needs for the forecast's horizons and windows (0: not asked).
        var pages: [OneCall4.Part: Int] = OneCall4Source.pages(
            horizons: ForecastSource.Options().horizons, windows: ForecastSource.Options().windows)
    }

    var options = Options()
    var maxRequestsPerDay: Int? { options.maxRequestsPerDay == 0 ? nil : options.maxRequestsPerDay }

    static let excludeSetting = Setting<[Exclusion]>(
        "collector.onecall4.exclude", key: "collector.onecall4.exclude", kind: .list, placeholder: "PARTS",
        doc:
            """
            Parts of One Call 4.0 not to request, comma-separated: 1min (the next hour's precipitation), 1day (the \
            daily extremes and the forecast after 48h) or alerts (their text, one call per alert); their families are \
            left out. Each part left out is one call less per poll.
            """,
        default: [], shown: ""
    ) { entry throws(ConfigError) in try exclusions(entry) }

    static let hourlyIntervalSetting = Setting<Duration>.duration(
        "collector.onecall4.hourly-interval", key: "collector.onecall4.hourly_interval",
        doc:
            """
            How often the 1h timeline (the forecast's hours, 3 calls for 48 hours) is asked again; at least the \
            collector's interval.
            """,
        default: .seconds(3600), minimum: .seconds(60))

    static let dailyIntervalSetting = Setting<Duration>.duration(
        "collector.onecall4.daily-interval", key: "collector.onecall4.daily_interval",
        doc:
            """
            How often the 1day timeline (the next days' extremes, the forecast past 48 hours) is asked again; at least \
            the collector's interval.
            """,
        default: .seconds(6 * 3600), minimum: .seconds(60))

    /// Billed per call like 3.0, with the first 1,000 calls of each UTC day free.
    static let maxRequestsPerDaySetting = Setting<Int>.integer(
        "collector.onecall4.max-requests-per-day", key: "collector.onecall4.max_requests_per_day",
        doc:
            """
            One Call 4.0 calls a day (from 00:00 UTC), every part and page counted; the interval stretches to fit, and \
            4.0 pauses until 00:00 UTC when they are spent (the weather and forecast then poll their own endpoints). 0 \
            for no limit.
            """,
        default: 1000, in: 0...100_000_000, shown: "1000 (the free calls a day; 100000 with --demo); 0 for none")

    static let settings = SourceSettings<Options>(
        flags: [
            excludeSetting.flag, hourlyIntervalSetting.flag, dailyIntervalSetting.flag, maxRequestsPerDaySetting.flag,
        ]
    ) { given, options throws(ConfigError) in
        options.exclude = try given.resolved(excludeSetting)
        options.hourlyInterval = try given.resolved(hourlyIntervalSetting)
        options.dailyInterval = try given.resolved(dailyIntervalSetting)
        let demo = try given.resolved(Settings.demo)
        options.maxRequestsPerDay =
            try given.value(maxRequestsPerDaySetting)
            ?? (demo ? OneCallSource.demoMaxRequestsPerDay : maxRequestsPerDaySetting.defaultValue)
        // It stands in for the forecast: its timelines reach as far as the forecast is read.
        var pages = pages(
            horizons: try given.resolved(ForecastSource.horizonsSetting),
            windows: try given.resolved(ForecastSource.windowsSetting))
        if options.exclude.contains(.minute) { pages[.minute] = 0 }
        if options.exclude.contains(.day) { pages[.day] = 0 }
        options.pages = pages
    }

    static func exclusions(_ entry: RawSettings.Entry) throws(ConfigError) -> [Exclusion] {
        var parts: Set<Exclusion> = []
        for word in entry.text.split(separator: ",").map({ String($0).trimmed }) where !word.isEmpty {
            guard let part = Exclusion(rawValue: word) else {
                let reason =
                    word == "current" || word == "1h"
                    ? """
                    cannot be left out: One Call 4.0 stands in for the weather and the forecast, which read current \
                    and 1h (use --no-collector.onecall4 for the free endpoints)
                    """
                    : word == "15min"
                        ? "is asked only when a forecast horizon is not whole hours (--collector.forecast.horizons)"
                        : "is not a part of One Call 4.0"
                throw ConfigError("\(entry.origin) \"\(entry.text)\": \"\(word)\" \(reason); use 1min, 1day or alerts")
            }
            parts.insert(part)
        }
        return Exclusion.allCases.filter(parts.contains)
    }

    /// How far ahead the 15min and 1h timelines reach.
    static let timelineReach = 48 * 3600.0

    /// Pages each part needs so that the forecast can be read at every horizon and over every window
    /// from now: a timeline starts with the step under way, and reading at `now + H` takes the step
    /// after it too. 15min only for horizons that are not whole hours (the rest read the hours);
    /// 1day at least today and 7 days more, as 3.0's `daily` (days_ahead 0 to 7).
    static func pages(horizons: [Duration], windows: [Duration]) -> [OneCall4.Part: Int] {
        func count(_ part: OneCall4.Part, reaching seconds: Double) -> Int {
            let records = seconds / OneCall4.stepSeconds(part) + 2
            return Int((records / Double(OneCall4.recordsPerPage(part))).rounded(.up))
        }
        let reach = (horizons + windows).map(\.seconds).max() ?? 0
        let subHour = horizons.map(\.seconds).filter { $0.truncatingRemainder(dividingBy: 3600) != 0 }.max()
        return [
            .current: 1, .minute: 1,
            .quarterHour: subHour.map { count(.quarterHour, reaching: min($0, timelineReach)) } ?? 0,
            .hour: count(.hour, reaching: min(reach, timelineReach)),
            .day: count(.day, reaching: max(reach, 6 * 86_400)),
        ]
    }

    /// The polls between two requests of `part` (1: every poll) when polled every `interval`: a part
    /// due after `P` is asked at the poll nearest `P` after its last, never one early by more than half
    /// an interval, so a small jitter does not put it off a whole poll.
    func every(_ part: OneCall4.Part, polledEvery interval: Double) -> Int {
        let pace: Duration
        switch part {
        case .hour: pace = options.hourlyInterval
        case .day: pace = options.dailyInterval
        default: return 1
        }
        return max(1, Int((pace.seconds / interval - 0.5).rounded(.up)))
    }

    func requestsPerPoll(every interval: Duration) -> [(part: String, requests: Double)] {
        OneCall4.Part.allCases.compactMap { part in
            let pages = options.pages[part] ?? 0
            return pages > 0 ? (part.rawValue, Double(pages) / Double(every(part, polledEvery: interval.seconds))) : nil
        }
    }

    /// Every page at once, and as many alerts' text as a poll asks at most.
    var maxRequestsPerPoll: Int {
        options.pages.values.reduce(0, +) + (options.exclude.contains(.alerts) ? 0 : OneCallSource.maxAlerts)
    }

    func request(for poll: PollFacts) -> APIRequest {
        OneCall4.request(
            .current, latitude: poll.latitude, longitude: poll.longitude,
            language: poll.language)
    }

    /// The document `fetch` keeps (every part's answers as they came).
    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> OneCall4.Reading {
        try OneCall4Decoder.decode(document: body)
    }

    func gaps(of reading: OneCall4.Reading) -> AnswerGaps { reading.oneCall.gaps }

    func fetch(
        _ poll: Poll<OneCall4.Reading>, get: (APIRequest) throws(OpenWeatherError) -> [UInt8]
    ) throws(OpenWeatherError) -> Fetched<OneCall4.Reading> {
        let latitude = poll.facts.latitude
        let longitude = poll.facts.longitude
        let previous = poll.previous?.answers
        var answers = OneCall4.Answers()
        for part in OneCall4.Part.allCases {
            let pages = options.pages[part] ?? 0
            guard pages > 0 else { continue }
            if let previous, let fetched = previous.fetched[part], let kept = previous.pages[part], kept.count == pages,
                poll.facts.now - fetched < (Double(every(part, polledEvery: poll.configured)) - 0.5) * poll.interval
            {
                answers.pages[part] = kept
                answers.fetched[part] = fetched
                continue
            }
            var bodies: [[UInt8]] = []
            var first: Double?
            for page in 0..<pages {
                // A page after the first starts where the one before it ends, counted from the first's
                // first record (as the API's own links are), not from a link in the answer.
                let start =
                    page == 0
                    ? nil : first.map { $0 + Double(page * OneCall4.recordsPerPage(part)) * OneCall4.stepSeconds(part) }
                if page > 0 && start == nil { break }
                let body = try get(
                    OneCall4.request(
                        part, latitude: latitude, longitude: longitude, language: poll.facts.language, start: start))
                // Each answer is checked as it comes: a broken one fails the poll, naming the part.
                let time = try Self.firstRecordTime(of: part, in: body, page: page)
                if page == 0 { first = time }
                bodies.append(body)
            }
            answers.pages[part] = bodies
            answers.fetched[part] = poll.facts.now
        }
        let withoutAlerts = answers.document()
        let listed = try OneCall4Decoder.decode(document: withoutAlerts)
        guard !options.exclude.contains(.alerts), !(listed.alertIDs.isEmpty && (previous?.alerts.isEmpty ?? true))
        else {
            return Fetched(reading: listed, body: withoutAlerts)
        }
        // An alert's text is kept while the place lists it, among the first `alertsKept` it lists, for
        // at most `alertMaxAge` (an upstream may list an alert forever, with an `end` far away), so what
        // a place keeps is bounded whatever the upstream sends; it is asked when a new ID comes, and one
        // whose call failed is asked again with each new 1h page, not at every poll.
        let listedIDs = Array(listed.alertIDs.prefix(OneCall4.alertsKept))
        let listedSet = Set(listedIDs)
        var known = Set<String>()
        for body in previous?.alerts ?? [] {
            guard var detail = try? OneCall4Decoder.alert(body), listedSet.contains(detail.id),
                known.count < OneCall4.alertsKept
            else { continue }
            let fetched = detail.fetched ?? poll.facts.now
            guard poll.facts.now - fetched < OneCall4.alertMaxAge, known.insert(detail.id).inserted else { continue }
            detail.fetched = fetched
            answers.alerts.append(detail.kept())
        }
        let hoursRenewed = answers.fetched[.hour] == poll.facts.now
        let listedBefore = Set(poll.previous?.alertIDs ?? [])
        var asked = 0
        for id in listedIDs
        where !known.contains(id) && (hoursRenewed || !listedBefore.contains(id)) && asked < OneCallSource.maxAlerts {
            guard let request = OneCall4.alertRequest(id: id) else { continue }
            asked += 1
            guard let body = try? get(request), var detail = try? OneCall4Decoder.alert(body) else { continue }
            known.insert(id)
            detail.fetched = poll.facts.now
            answers.alerts.append(detail.kept())
        }
        let document = answers.document()
        return Fetched(reading: try OneCall4Decoder.decode(document: document), body: document)
    }

    /// An answer of `part` decoded: the time of its first record (where the next page is placed from;
    /// nil for none), or the decode error with the part and page it came from.
    private static func firstRecordTime(
        of part: OneCall4.Part, in body: [UInt8], page: Int
    ) throws(OpenWeatherError) -> Double? {
        do {
            switch part {
            case .current: return try OneCall4Decoder.current(body).records.first?.weather.observationTime
            case .minute: return try OneCall4Decoder.minutes(body).records.first?.time
            case .quarterHour, .hour: return try OneCall4Decoder.steps(body, part: part).records.first?.time
            case .day: return try OneCall4Decoder.days(body).records.first?.day.time
            }
        } catch .decode(let reason) {
            throw .decode("\(part.rawValue) page \(page + 1): \(reason)")
        }
    }

    /// The forecast the stand-in gives: the 15min timeline where it was asked, up to its last whole
    /// hour (so each hour after it covers a whole hour of rain), then the hours and the days.
    static func forecast(of reading: OneCall4.Reading) -> Forecast {
        let hourly = reading.oneCall.hourly
        guard let last = reading.quarterHours.last else { return hourly }
        let seam = (last.time / 3600).rounded(.down) * 3600
        let quarters = reading.quarterHours.filter { $0.time <= seam }
        guard !quarters.isEmpty else { return hourly }
        return Forecast(
            steps: quarters + hourly.steps.filter { $0.time >= seam + 3600 }, issued: hourly.issued, gaps: hourly.gaps,
            falls: Forecast.falls(of: quarters) + hourly.falls.filter { $0.begins >= seam })
    }

    func unavailableHint(for error: OpenWeatherError) -> String? {
        OneCall.needsSubscription(error) ? "subscribe to One Call by Call (https://openweathermap.org/price)" : nil
    }

    var families: [MetricFamily] { OneCallSource.families }

    func appendSeries(of shard: ShardSeries, readings: ShardReadings<OneCall4.Reading>, to lines: CollectorLines) {
        OneCallSource.appendSeries(
            of: shard, shown: readings.shown.map { ($0.position, $0.reading.oneCall) }, to: lines)
    }
}
