/// One Call 3.0 (`/data/3.0/onecall`, a subscription of its own): the current weather, the next
/// hour minute by minute, 48 hourly steps, 8 days and official alerts in one answer, in Prometheus
/// base units.
public struct OneCall: Sendable, Equatable {
    /// The parts of the answer that `exclude=` can leave out, by their names in the answer.
    public enum Part: String, Sendable, CaseIterable {
        case current, minutely, hourly, daily, alerts
    }

    /// One step of the minute forecast: the precipitation rate over the minute from `time`.
    public struct Minute: Sendable, Equatable {
        /// Unix time of the minute's start (`dt`).
        public var time: Double
        /// `precipitation` (mm/h) in m/s.
        public var precipitationMetersPerSecond: Double

        public init(time: Double, precipitationMetersPerSecond: Double) {
            self.time = time
            self.precipitationMetersPerSecond = precipitationMetersPerSecond
        }
    }

    /// Each `minutely` step covers the minute from its `dt`.
    public static let minuteSeconds = 60.0

    public struct Day: Sendable, Equatable {
        /// Unix time of the day's midday step (`dt`).
        public var time: Double
        public var temperatureMinCelsius: Double
        public var temperatureMaxCelsius: Double
        /// Its place among the answer's days, 0 today (`days_ahead`): kept as sent when a day before
        /// it was skipped, so no day is shown as another.
        public var position = 0
    }

    /// An official warning from a national weather service.
    public struct Alert: Sendable, Equatable {
        public var sender: String
        public var event: String
        public var start: Double
        public var end: Double
        /// The alert's kinds (`Flood`, `Wind`), as sent, for routing; empty when none (4.0 sends none).
        public var tags: [String] = []
    }

    /// Without `main.temp_min`/`temp_max`, city name and country, which One Call does not report.
    public var current: CurrentWeather
    public var dewPointCelsius: Double?
    public var uvIndex: Double?
    /// The minute forecast (about the next hour), one step a minute; empty when the answer has none.
    public var minutely: [Minute]
    /// The hourly steps, then the days after the last hour (issued at `current.observationTime`).
    public var hourly: Forecast
    public var daily: [Day]
    /// As sent, possibly several of one event and sender.
    public var alerts: [Alert]
    /// What the answer lacked.
    public var gaps = AnswerGaps()

    /// `/data/3.0/onecall` for one place, in metric units, without the parts in `exclude` (no
    /// `exclude=` when none: the whole answer). One Call is billed per call, whatever it holds.
    public static func request(
        latitude: Double, longitude: Double, language: String, exclude: [Part] = []
    ) -> APIRequest {
        var query: [APIRequest.Item] = [
            .init("lat", String(latitude)), .init("lon", String(longitude)), .init("units", "metric"),
            .init("lang", language),
        ]
        if !exclude.isEmpty { query.append(.init("exclude", exclude.map(\.rawValue).joined(separator: ","))) }
        return APIRequest(path: "/data/3.0/onecall", query: query)
    }

    /// One Call answers 401 with this in its message for a key without the subscription.
    public static func needsSubscription(_ error: OpenWeatherError) -> Bool {
        guard case .http(401, let message, _) = error else { return false }
        return message.contains("subscription")
    }
}

/// The minute forecast read at one moment.
public struct Nowcast: Sendable, Equatable {
    /// The start of the first minute with precipitation, from the minute covering now on (so the
    /// current minute's start while it is raining); nil when none is forecast.
    public var nextStart: Double?
    /// The precipitation forecast from now to the end of the minute forecast.
    public var amountMeters: Double

    public init(nextStart: Double?, amountMeters: Double) {
        self.nextStart = nextStart
        self.amountMeters = amountMeters
    }
}

extension OneCall {
    /// The minute forecast from `now` on: the minutes that ended by `now` are left out, the one
    /// covering it counts for what is left of it. Nil when no minute ends after `now` (no minute
    /// forecast in the answer, or one that time has passed).
    public func nowcast(at now: Double) -> Nowcast? {
        var nextStart: Double?
        var amount = 0.0
        var reaches = false
        for minute in minutely {
            let end = minute.time + Self.minuteSeconds
            guard end > now else { continue }
            reaches = true
            amount += minute.precipitationMetersPerSecond * (end - max(minute.time, now))
            if nextStart == nil, minute.precipitationMetersPerSecond > 0 { nextStart = minute.time }
        }
        return reaches ? Nowcast(nextStart: nextStart, amountMeters: amount) : nil
    }
}

/// Decodes a `/data/3.0/onecall` body (`units=metric`): flat field names (`temp`, not
/// `main.temp`), checked as the 2.5 endpoints' are.
///
/// Field policy. Required: the body an object with `current.dt` and `current.temp`. Optional in
/// `current`, each its own series, left out when absent, null, of another type or out of range (noted
/// in `gaps`): `feels_like`, `humidity`, `pressure`, `dew_point`, `uvi`, `clouds`, `visibility`,
/// `wind_speed`, `wind_deg`, `wind_gust`, `rain.1h`, `snow.1h` (the object left out when none falls:
/// 0), `sunrise`, `sunset` (absent or 0 in polar day and night), `weather[].id`; `timezone_offset` at
/// the top. The parts `minutely`, `hourly`, `daily` and `alerts` may each be absent (`exclude=`, no
/// alert: not a gap); in each, an entry without what it needs is skipped and noted, the rest used:
/// a minute needs `dt` (a minute after the one before) and `precipitation`; an hour `dt` (after the one
/// before) and `temp`, its other fields optional as `current`'s, plus `pop`; a day `dt`, `temp.min` and
/// `temp.max` (its step after the hours also `temp.day`, else the day adds no step, noted), its
/// `rain`/`snow` totals (absent: 0), `feels_like.day`, `humidity`, `pressure`, `dew_point`, `uvi`,
/// `clouds`, `wind_*`, `pop` and `weather[0].id` optional; an alert `event`, `start` and `end`, with
/// `sender_name` (`""` when absent) and `tags` (strings; none when absent) as texts.
public enum OneCallDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> OneCall {
        try Fields.decode(body, convert)
    }

    /// An hourly step; its `rain.1h`/`snow.1h` is over `hours` at that rate (3.0 gives the hour's
    /// amount, which is the rate over one hour; 4.0's 15-minute records give the rate).
    static func hour(_ entry: Fields, hours: Double = 1) throws(FieldError) -> Forecast.Step {
        func over(_ key: String) -> Double? {
            WeatherDecoder.fallenMillimeters(entry, key, "1h", 0...500).map { WeatherDecoder.shift($0 * hours, by: -3) }
        }
        return Forecast.Step(
            time: try entry.number("dt", 1...1e11),
            seconds: 3600 * hours,
            temperatureCelsius: try entry.number("temp", -100...70),
            feelsLikeCelsius: entry.optional("feels_like", -120...90),
            humidityRatio: entry.optional("humidity", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            pressurePascals: entry.optional("pressure", 800...1100).map { WeatherDecoder.shift($0, by: 2) },
            windSpeedMetersPerSecond: entry.optional("wind_speed", 0...150),
            windGustMetersPerSecond: entry.optional("wind_gust", 0...200),
            windDirectionDegrees: entry.optional("wind_deg", 0...360),
            cloudinessRatio: entry.optional("clouds", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            visibilityMeters: entry.optional("visibility", 0...100_000),
            precipitationProbability: entry.optional("pop", 0...1),
            rainMeters: over("rain"),
            snowMeters: over("snow"),
            conditionID: WeatherDecoder.conditions(entry).primary?.id,
            dewPointCelsius: entry.optional("dew_point", -100...70),
            uvIndex: entry.optional("uvi", 0...30))
    }

    /// Steps rise strictly in time; one that does not is skipped.
    static func rising(_ previous: Forecast.Step, _ step: Forecast.Step, _ path: String) -> String? {
        ForecastDecoder.rising(previous, step, path)
    }

    /// A minute step; the minute forecast's steps are at least a minute apart.
    static func minute(_ entry: Fields) throws(FieldError) -> OneCall.Minute {
        // 2000 mm/h: above the heaviest minute ever measured (31 mm, Unionville 1956).
        OneCall.Minute(
            time: try entry.number("dt", 1...1e11),
            precipitationMetersPerSecond: try entry.number("precipitation", 0...2000) / 3_600_000)
    }

    static func minuteApart(_ previous: OneCall.Minute, _ minute: OneCall.Minute, _ path: String) -> String? {
        minute.time >= previous.time + OneCall.minuteSeconds
            ? nil : "`\(path).dt` = \(Int(minute.time)) is less than a minute after the step before it"
    }

    /// A day, at its place in its list (`position` from the entry's, plus `offset`: a 4.0 page's first).
    static func day(_ day: Fields, offset: Int = 0) throws(FieldError) -> OneCall.Day {
        let temperature = try day.object("temp")
        return OneCall.Day(
            time: try day.number("dt", 1...1e11),
            temperatureMinCelsius: try temperature.number("min", -100...70),
            temperatureMaxCelsius: try temperature.number("max", -100...70),
            position: offset + (day.position ?? 0))
    }

    static func dayApart(_ previous: OneCall.Day, _ day: OneCall.Day, _ path: String) -> String? {
        day.time > previous.time ? nil : "`\(path).dt` = \(Int(day.time)) is not after the day before it"
    }

    /// A day as a forecast step (for the days after the hours); nil, noted, without `temp.day`.
    /// `millimeters` reads its `rain` or `snow` total, whose shape differs between 3.0 and 4.0.
    static func dayStep(_ day: Fields, _ entry: OneCall.Day, millimeters: (Fields, String) -> Double?) -> Forecast.Step?
    {
        guard let dayTemperature = day.part("temp").optional("day", -100...70) else { return nil }
        return Forecast.Step(
            time: entry.time,
            seconds: 86_400,
            temperatureCelsius: dayTemperature,
            feelsLikeCelsius: day.part("feels_like").optional("day", -120...90),
            humidityRatio: day.optional("humidity", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            pressurePascals: day.optional("pressure", 800...1100).map { WeatherDecoder.shift($0, by: 2) },
            windSpeedMetersPerSecond: day.optional("wind_speed", 0...150),
            windGustMetersPerSecond: day.optional("wind_gust", 0...200),
            windDirectionDegrees: day.optional("wind_deg", 0...360),
            cloudinessRatio: day.optional("clouds", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            precipitationProbability: day.optional("pop", 0...1),
            rainMeters: millimeters(day, "rain").map { WeatherDecoder.shift($0, by: -3) },
            snowMeters: millimeters(day, "snow").map { WeatherDecoder.shift($0, by: -3) },
            conditionID: WeatherDecoder.conditions(day).primary?.id,
            dewPointCelsius: day.optional("dew_point", -100...70),
            uvIndex: day.optional("uvi", 0...30),
            dayMinimumCelsius: entry.temperatureMinCelsius,
            dayMaximumCelsius: entry.temperatureMaxCelsius)
    }

    /// A 3.0 daily `rain`/`snow`: the day's millimetres, a plain number; left out when none falls.
    static func dailyMillimeters(_ day: Fields, _ key: String) -> Double? {
        day.has(key) ? day.optional(key, 0...2000) : 0
    }

    static func alert(_ alert: Fields) throws(FieldError) -> OneCall.Alert {
        var tags: [String] = []
        if case .array(let items)? = alert.value["tags"] {
            for case .string(let tag) in items where !tag.isEmpty { tags.append(Fields.label(tag)) }
        }
        return OneCall.Alert(
            sender: alert.optionalText("sender_name") ?? "",
            event: try alert.string("event"),
            start: try alert.number("start", 0...1e11),
            end: try alert.number("end", 0...1e11),
            tags: tags)
    }

    /// One moment's weather as One Call writes it (`current`, and each record of `timemachine`'s
    /// `data`), with the place's fields from `root`.
    static func weather(_ current: Fields, in root: Fields) throws(FieldError) -> CurrentWeather {
        let (primary, secondary) = WeatherDecoder.conditions(current)
        return CurrentWeather(
            temperatureCelsius: try current.number("temp", -100...70),
            feelsLikeCelsius: current.optional("feels_like", -120...90),
            temperatureMinCelsius: nil,
            temperatureMaxCelsius: nil,
            humidityRatio: current.optional("humidity", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            pressurePascals: current.optional("pressure", 800...1100).map { WeatherDecoder.shift($0, by: 2) },
            groundLevelPressurePascals: nil,
            windSpeedMetersPerSecond: current.optional("wind_speed", 0...150),
            windGustMetersPerSecond: current.optional("wind_gust", 0...200),
            windDirectionDegrees: current.optional("wind_deg", 0...360),
            cloudinessRatio: current.optional("clouds", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            visibilityMeters: current.optional("visibility", 0...100_000),
            rain1hMeters: WeatherDecoder.fallen(current, "rain", "1h", 0...500),
            rain3hMeters: nil,
            snow1hMeters: WeatherDecoder.fallen(current, "snow", "1h", 0...500),
            snow3hMeters: nil,
            sunrise: WeatherDecoder.sunTime(current, "sunrise"),
            sunset: WeatherDecoder.sunTime(current, "sunset"),
            observationTime: try current.number("dt", 1...1e11),
            timezoneOffsetSeconds: root.optional("timezone_offset", -50_400...50_400),
            primaryCondition: primary,
            secondaryConditions: secondary,
            cityName: "",
            country: nil,
            latitude: root.peek("lat", -90...90),
            longitude: root.peek("lon", -180...180))
    }

    /// `dew_point` and `uvi` of a `current` record, which `CurrentWeather` does not hold.
    static func dewPointAndUV(_ current: Fields) -> (dewPointCelsius: Double?, uvIndex: Double?) {
        (current.optional("dew_point", -100...70), current.optional("uvi", 0...30))
    }

    private static func convert(_ root: Fields) throws(FieldError) -> OneCall {
        let current = try root.requireObject().object("current")
        let weather = try weather(current, in: root)
        let extras = dewPointAndUV(current)
        let minutely = root.entries("minutely", follows: minuteApart) { (entry: Fields) throws(FieldError) in
            try minute(entry)
        }
        let hourly =
            root.entries("hourly", follows: rising) { (entry: Fields) throws(FieldError) in try hour(entry) } ?? []
        let days =
            root.entries(
                "daily", follows: { dayApart($0.0, $1.0, $2) },
                { (entry: Fields) throws(FieldError) in (try day(entry), entry) }) ?? []
        // The days beyond the hours extend the forecast (a 72-hour window, horizons past 48 hours). The
        // days whose noon is under 36 h before the last hour are read as steps too (and noted when they
        // cannot be): the one that ends after it, and the one before, where their days meet.
        let last = hourly.last?.time ?? .infinity
        let daySteps = days.filter { $0.0.time + 3 * Forecast.dayHalf > last }.compactMap {
            dayStep($0.1, $0.0, millimeters: dailyMillimeters)
        }
        let alerts = root.entries("alerts") { (alert: Fields) throws(FieldError) in try Self.alert(alert) } ?? []
        var oneCall = OneCall(
            current: weather, dewPointCelsius: extras.dewPointCelsius, uvIndex: extras.uvIndex,
            minutely: minutely ?? [],
            hourly: Forecast(hours: hourly, days: daySteps, issued: weather.observationTime), daily: days.map(\.0),
            alerts: alerts)
        oneCall.gaps = root.gaps
        return oneCall
    }
}
