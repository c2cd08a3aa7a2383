import Exposition
import OpenWeather

/// One Call 3.0 (`/data/3.0/onecall`): one request gives what `weather` and `forecast` need, so it
/// stands in for both (their slots are filled from its reading and their jobs are not scheduled),
/// plus the UV index, the dew point, the next days' extremes, official weather alerts and the rain
/// of the next hour, minute by minute. A key without the subscription gets 401: then the free
/// endpoints run and One Call is retried hourly.
struct OneCallSource: Source {
    static let name = "onecall"
    static let summary =
        """
        One Call 3.0 (/data/3.0/onecall, needs the \"One Call by Call\" subscription): current weather and forecast in \
        one request instead of two, plus UV index, dew point, daily extremes, official alerts and the next hour's \
        precipitation by the minute.
        """
    static let enabledByDefault = false
    static let defaultInterval = Duration.seconds(600)
    static let demoInterval = Duration.seconds(15)
    /// Alerts come and go, and the minute forecast moves on, with time. Its steps start on the
    /// minute, so a render each minute (when `floor(now / 60)` moves) shows each step from its start
    /// (within the renders' pacing, under a second): the next start does not lag, and the amount
    /// left of the current minute is at most a minute old, as a scrape's would be anyway.
    let timePeriod: Double? = 60
    static let standsIn: [StandIn<OneCall>] = [
        .for(ForecastSource.self) { $0.hourly }, .for(WeatherSource.self) { $0.current },
    ]

    /// What is asked of One Call.
    struct Options: Sendable, Equatable {
        /// Parts of the answer not requested (`exclude=`); the families read from them are left out.
        var exclude: [OneCall.Part] = []
        /// Requests a UTC day; 0 for no limit.
        var maxRequestsPerDay = OneCallSource.maxRequestsPerDaySetting.defaultValue
    }

    var maxRequestsPerDay: Int? { options.maxRequestsPerDay == 0 ? nil : options.maxRequestsPerDay }

    var options = Options()

    /// The parts `--collector.onecall.exclude` may name: `current` and `hourly` are what the
    /// weather and forecast families (which One Call stands in for) are read from.
    static let excludable: [OneCall.Part] = [.minutely, .daily, .alerts]

    static let excludeSetting = Setting<[OneCall.Part]>(
        "collector.onecall.exclude", key: "collector.onecall.exclude", kind: .list, placeholder: "PARTS",
        doc:
            """
            Parts of the One Call answer not to request (exclude=), comma-separated: minutely (the next hour's \
            precipitation), daily (the daily extremes and the forecast after 48h) or alerts; their families are left \
            out. The default requests every part.
            """,
        default: [], shown: ""
    ) { entry throws(ConfigError) in try parts(entry) }

    static let demoMaxRequestsPerDay = 100_000

    /// One Call is billed per call, and the first 1,000 calls of each UTC day are free.
    static let maxRequestsPerDaySetting = Setting<Int>.integer(
        "collector.onecall.max-requests-per-day", key: "collector.onecall.max_requests_per_day",
        doc:
            """
            One Call requests a day (from 00:00 UTC, when OpenWeather's day starts); the interval stretches to fit, \
            and One Call pauses until 00:00 UTC when they are spent (the weather and forecast then poll their own \
            endpoints). 0 for no limit.
            """,
        default: 1000, in: 0...100_000_000, shown: "1000 (the free calls a day; 100000 with --demo); 0 for none")

    static let settings = SourceSettings<Options>(flags: [excludeSetting.flag, maxRequestsPerDaySetting.flag]) {
        given, options throws(ConfigError) in
        options.exclude = try given.resolved(excludeSetting)
        // The demo's simulator bills nothing, and its short intervals are there to show every family
        // soon: its default is a limit far above its pace (4 places every 15 s is 23,040 a day), so
        // the limit's series and the requests-today gauge show without stretching anything.
        let demo = try given.resolved(Settings.demo)
        options.maxRequestsPerDay =
            try given.value(maxRequestsPerDaySetting)
            ?? (demo ? Self.demoMaxRequestsPerDay : maxRequestsPerDaySetting.defaultValue)
    }

    /// A comma-separated list of parts, in the answer's order without repeats; empty text for none.
    static func parts(_ entry: RawSettings.Entry) throws(ConfigError) -> [OneCall.Part] {
        var parts: Set<OneCall.Part> = []
        for word in entry.text.split(separator: ",").map({ String($0).trimmed }) where !word.isEmpty {
            guard let part = OneCall.Part(rawValue: word), excludable.contains(part) else {
                let reason =
                    word == "current" || word == "hourly"
                    ? """
                    cannot be left out: One Call stands in for the weather and the forecast, which are read from \
                    current and hourly (use --no-collector.onecall for the free endpoints)
                    """
                    : "is not a part of the One Call answer"
                throw ConfigError(
                    "\(entry.origin) \"\(entry.text)\": \"\(word)\" \(reason); use minutely, daily or alerts")
            }
            parts.insert(part)
        }
        return OneCall.Part.allCases.filter(parts.contains)
    }

    func request(for poll: PollFacts) -> APIRequest {
        OneCall.request(
            latitude: poll.latitude, longitude: poll.longitude,
            language: poll.language,
            exclude: options.exclude)
    }

    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> OneCall {
        try OneCallDecoder.decode(body)
    }

    func gaps(of reading: OneCall) -> AnswerGaps { reading.gaps }

    func unavailableHint(for error: OpenWeatherError) -> String? {
        OneCall.needsSubscription(error) ? "subscribe to One Call by Call (https://openweathermap.org/price)" : nil
    }

    /// Several alerts of one event and sender become one series; more than this many per location are left out.
    static let maxAlerts = 16

    /// One gauge per field of the current conditions, first in `families`.
    static let gauges: [Gauge<OneCall>] = [
        .init(name: "openweather_uv_index", help: "UV index now (current.uvi), when reported.") { $0.uvIndex },
        .init(name: "openweather_dew_point_celsius", help: "Dew point now (current.dew_point), when reported.") {
            $0.dewPointCelsius
        },
    ]

    /// One gauge per field of each day, labelled `days_ahead`, after `gauges` in `families`.
    static let dailyGauges: [Gauge<OneCall.Day>] = [
        .init(
            name: "openweather_forecast_daily_temperature_min_celsius",
            help: "Forecast lowest temperature of the day days_ahead from today (daily.temp.min; 0 is today)."
        ) { $0.temperatureMinCelsius },
        .init(
            name: "openweather_forecast_daily_temperature_max_celsius",
            help: "Forecast highest temperature of the day days_ahead from today (daily.temp.max; 0 is today)."
        ) { $0.temperatureMaxCelsius },
    ]

    /// One gauge per figure of the minute forecast read at the render's now, after `dailyGauges`
    /// in `families`.
    static let nowcastGauges: [Gauge<Nowcast>] = [
        .init(
            name: "openweather_precipitation_next_start_timestamp_seconds",
            help:
                """
                Start of the first minute with precipitation in the minute forecast (minutely), from the minute \
                covering now (so that minute's start while it rains), Unix time; absent when none is forecast.
                """
        ) { $0.nextStart },
        .init(
            name: "openweather_precipitation_next_hour_meters",
            help:
                """
                Precipitation forecast from now to the end of the minute forecast, about an hour \
                (minutely[].precipitation in mm/h, each minute for its part after now).
                """
        ) { $0.amountMeters },
    ]

    private static let gaugeNames = gauges.map { Array($0.name.utf8) }
    private static let dailyGaugeNames = dailyGauges.map { Array($0.name.utf8) }
    private static let nowcastGaugeNames = nowcastGauges.map { Array($0.name.utf8) }
    private static let alertInfo: StaticString = "openweather_weather_alert_info"
    private static let alertEnd: StaticString = "openweather_weather_alert_end_timestamp_seconds"

    /// Positions in `families`, where each family's buffer is in the lines a shard is written to.
    private enum Family: FamilyPosition, Equatable {
        case gauge(Int)
        case dailyGauge(Int)
        case nowcastGauge(Int)
        case alertInfo, alertEnd

        var position: Int {
            let daily = OneCallSource.gauges.count
            let nowcast = daily + OneCallSource.dailyGauges.count
            let others = nowcast + OneCallSource.nowcastGauges.count
            return switch self {
            case .gauge(let index): index
            case .dailyGauge(let index): daily + index
            case .nowcastGauge(let index): nowcast + index
            case .alertInfo: others
            case .alertEnd: others + 1
            }
        }
    }

    var families: [MetricFamily] { Self.families }

    /// Also One Call 4.0's (`OneCall4Source`), which writes them from the same model.
    static var families: [MetricFamily] {
        gauges.map(\.family) + dailyGauges.map(\.family) + nowcastGauges.map(\.family) + [
            MetricFamily(
                name: Self.alertInfo.description,
                help: "An official weather alert in force (between its start and end), by event and sender, with its "
                    + "tags (alerts[].tags, comma-separated, for routing; \"\" when none); always 1."),
            MetricFamily(
                name: Self.alertEnd.description,
                help: "When the official weather alert ends, Unix time; the latest of several alike."),
        ]
    }

    /// The alerts in force at `now`, one per event and sender with the latest end and every tag of
    /// those alike (sorted, once each), in label order.
    static func inForce(_ alerts: [OneCall.Alert], at now: Double) -> [OneCall.Alert] {
        var latest: [String: OneCall.Alert] = [:]
        var tags: [String: Set<String>] = [:]
        for alert in alerts where alert.start <= now && now < alert.end {
            let key = alert.event + "\u{0}" + alert.sender
            tags[key, default: []].formUnion(alert.tags)
            if let kept = latest[key], kept.end >= alert.end { continue }
            latest[key] = alert
        }
        for (key, found) in tags { latest[key]?.tags = found.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
        let sorted = latest.values.sorted {
            $0.event != $1.event
                ? $0.event.utf8.lexicographicallyPrecedes($1.event.utf8)
                : $0.sender.utf8.lexicographicallyPrecedes($1.sender.utf8)
        }
        return Array(sorted.prefix(maxAlerts))
    }

    func appendSeries(of shard: ShardSeries, readings: ShardReadings<OneCall>, to lines: CollectorLines) {
        Self.appendSeries(of: shard, shown: readings.shown, to: lines)
    }

    /// `families`' lines from each shown location's One Call reading (3.0's, or the one 4.0's parts make).
    static func appendSeries(
        of shard: ShardSeries, shown: [(position: Int, reading: OneCall)], to lines: CollectorLines
    ) {
        guard !shown.isEmpty else { return }
        let now = shard.now
        shard.withOpenings { openings in
            for (index, gauge) in Self.gauges.enumerated() {
                guard let buffer = lines[family: Family.gauge(index)] else { continue }
                for (position, reading) in shown {
                    guard let value = gauge.value(reading) else { continue }
                    buffer.append(Self.gaugeNames[index])
                    buffer.append(openings[position])
                    buffer.appendClosing(value)
                }
            }
            for (index, gauge) in Self.dailyGauges.enumerated() {
                guard let buffer = lines[family: Family.dailyGauge(index)] else { continue }
                for (position, reading) in shown {
                    // Label order: "0" to "7" sort as numbers do while there are fewer than ten days. A day
                    // skipped as unusable leaves its place empty: the next is not shown as it.
                    for day in reading.daily where day.position < 10 {
                        guard let value = gauge.value(day) else { continue }
                        buffer.append(Self.dailyGaugeNames[index])
                        buffer.append(openings[position])
                        buffer.appendLabel("days_ahead", String(day.position))
                        buffer.appendClosing(value)
                    }
                }
            }
            // A location whose minute forecast has ended (or was not asked) shows neither gauge.
            let nowcasts = shown.compactMap { position, reading in reading.nowcast(at: now).map { (position, $0) } }
            for (index, gauge) in Self.nowcastGauges.enumerated() {
                guard let buffer = lines[family: Family.nowcastGauge(index)] else { continue }
                for (position, nowcast) in nowcasts {
                    guard let value = gauge.value(nowcast) else { continue }
                    buffer.append(Self.nowcastGaugeNames[index])
                    buffer.append(openings[position])
                    buffer.appendClosing(value)
                }
            }
            let alerts = shown.map { Self.inForce($0.1.alerts, at: now) }
            for (family, number) in [(Self.alertEnd, Family.alertEnd), (Self.alertInfo, Family.alertInfo)] {
                guard let buffer = lines[family: number] else { continue }
                for ((position, _), inForce) in zip(shown, alerts) {
                    for alert in inForce {
                        buffer.append(family)
                        buffer.append(openings[position])
                        buffer.appendLabel("event", alert.event)
                        buffer.appendLabel("sender", alert.sender)
                        if number == .alertInfo { buffer.appendLabel("tags", alert.tags.joined(separator: ",")) }
                        buffer.appendClosing(number == .alertEnd ? alert.end : 1)
                    }
                }
            }
        }
    }
}
