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
    }

    /// An official warning from a national weather service.
    public struct Alert: Sendable, Equatable {
        public var sender: String
        public var event: String
        public var start: Double
        public var end: Double
    }

    /// Without `main.temp_min`/`temp_max`, city name and country, which One Call does not report.
    public var current: CurrentWeather
    public var dewPointCelsius: Double
    public var uvIndex: Double
    /// The minute forecast (about the next hour), one step a minute; empty when the answer has none.
    public var minutely: [Minute]
    /// The hourly steps, then the days after the last hour (issued at `current.observationTime`).
    public var hourly: Forecast
    public var daily: [Day]
    /// As sent, possibly several of one event and sender.
    public var alerts: [Alert]

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
public enum OneCallDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> OneCall {
        try Fields.decode(body, convert)
    }

    static func conditionID(_ entry: Fields) throws(FieldError) -> Int {
        guard let primary = try entry.list("weather").first else {
            throw FieldError(reason: "`\(entry.path).weather` is empty: no condition reported")
        }
        return Int(try primary.number("id", -1_000_000...1_000_000))
    }

    /// An hourly step; its `rain.1h`/`snow.1h` is over `hours` at that rate (3.0 gives the hour's
    /// amount, which is the rate over one hour; 4.0's 15-minute records give the rate).
    static func hour(_ entry: Fields, hours: Double = 1) throws(FieldError) -> Forecast.Step {
        Forecast.Step(
            time: try entry.number("dt", 1...1e11),
            temperatureCelsius: try entry.number("temp", -100...70),
            feelsLikeCelsius: try entry.number("feels_like", -120...90),
            humidityRatio: WeatherDecoder.shift(try entry.number("humidity", 0...100), by: -2),
            pressurePascals: WeatherDecoder.shift(try entry.number("pressure", 800...1100), by: 2),
            windSpeedMetersPerSecond: try entry.optionalNumber("wind_speed", 0...150) ?? 0,
            windGustMetersPerSecond: try entry.optionalNumber("wind_gust", 0...200),
            cloudinessRatio: WeatherDecoder.shift(try entry.optionalNumber("clouds", 0...100) ?? 0, by: -2),
            precipitationProbability: try entry.optionalNumber("pop", 0...1) ?? 0,
            rainMeters: WeatherDecoder.shift(
                (try entry.optionalObject("rain")?.optionalNumber("1h", 0...500) ?? 0) * hours, by: -3),
            snowMeters: WeatherDecoder.shift(
                (try entry.optionalObject("snow")?.optionalNumber("1h", 0...500) ?? 0) * hours, by: -3),
            conditionID: try conditionID(entry),
            dewPointCelsius: try entry.optionalNumber("dew_point", -100...70),
            uvIndex: try entry.optionalNumber("uvi", 0...30))
    }

    /// Hourly steps (`hour`), each after the one before it.
    static func hours(_ entries: [Fields], hours: Double = 1) throws(FieldError) -> [Forecast.Step] {
        var steps: [Forecast.Step] = []
        for entry in entries {
            let step = try hour(entry, hours: hours)
            if let previous = steps.last, step.time <= previous.time {
                throw FieldError(reason: "`\(entry.path).dt` = \(Int(step.time)) is not after the step before it")
            }
            steps.append(step)
        }
        return steps
    }

    /// The minute forecast's steps, at least a minute apart.
    static func minutes(_ entries: [Fields]) throws(FieldError) -> [OneCall.Minute] {
        var minutely: [OneCall.Minute] = []
        for entry in entries {
            // 2000 mm/h: above the heaviest minute ever measured (31 mm, Unionville 1956).
            let minute = OneCall.Minute(
                time: try entry.number("dt", 1...1e11),
                precipitationMetersPerSecond: try entry.number("precipitation", 0...2000) / 3_600_000)
            if let previous = minutely.last, minute.time < previous.time + OneCall.minuteSeconds {
                throw FieldError(
                    reason: "`\(entry.path).dt` = \(Int(minute.time)) is less than a minute after the step before it")
            }
            minutely.append(minute)
        }
        return minutely
    }

    static func day(_ day: Fields) throws(FieldError) -> OneCall.Day {
        let temperature = try day.object("temp")
        return OneCall.Day(
            time: try day.number("dt", 1...1e11),
            temperatureMinCelsius: try temperature.number("min", -100...70),
            temperatureMaxCelsius: try temperature.number("max", -100...70))
    }

    /// A day as a forecast step (for the days after the hours). `millimeters` reads its `rain` or
    /// `snow` total, whose shape differs between 3.0 and 4.0.
    static func dayStep(
        _ day: Fields, _ entry: OneCall.Day, millimeters: (Fields, String) throws(FieldError) -> Double
    ) throws(FieldError) -> Forecast.Step {
        let dayTemperature = try day.object("temp").number("day", -100...70)
        let feelsLike = try day.optionalObject("feels_like")?.optionalNumber("day", -120...90)
        return Forecast.Step(
            time: entry.time,
            temperatureCelsius: dayTemperature,
            feelsLikeCelsius: feelsLike ?? dayTemperature,
            humidityRatio: WeatherDecoder.shift(try day.number("humidity", 0...100), by: -2),
            pressurePascals: WeatherDecoder.shift(try day.number("pressure", 800...1100), by: 2),
            windSpeedMetersPerSecond: try day.optionalNumber("wind_speed", 0...150) ?? 0,
            windGustMetersPerSecond: try day.optionalNumber("wind_gust", 0...200),
            cloudinessRatio: WeatherDecoder.shift(try day.optionalNumber("clouds", 0...100) ?? 0, by: -2),
            precipitationProbability: try day.optionalNumber("pop", 0...1) ?? 0,
            rainMeters: WeatherDecoder.shift(try millimeters(day, "rain"), by: -3),
            snowMeters: WeatherDecoder.shift(try millimeters(day, "snow"), by: -3),
            conditionID: try conditionID(day),
            dewPointCelsius: try day.optionalNumber("dew_point", -100...70),
            uvIndex: try day.optionalNumber("uvi", 0...30),
            dayMinimumCelsius: entry.temperatureMinCelsius,
            dayMaximumCelsius: entry.temperatureMaxCelsius)
    }

    /// A 3.0 daily `rain`/`snow`: the day's millimetres, a plain number.
    static func dailyMillimeters(_ day: Fields, _ key: String) throws(FieldError) -> Double {
        try day.optionalNumber(key, 0...2000) ?? 0
    }

    static func alert(_ alert: Fields) throws(FieldError) -> OneCall.Alert {
        OneCall.Alert(
            sender: try alert.optionalString("sender_name") ?? "",
            event: try alert.string("event"),
            start: try alert.number("start", 0...1e11),
            end: try alert.number("end", 0...1e11))
    }

    /// `dew_point` and `uvi` of a `current` record, which `CurrentWeather` does not hold.
    static func dewPointAndUV(_ current: Fields) throws(FieldError) -> (dewPointCelsius: Double, uvIndex: Double) {
        (try current.number("dew_point", -100...70), try current.optionalNumber("uvi", 0...30) ?? 0)
    }

    /// One moment's weather as One Call writes it (`current`, and each record of `timemachine`'s
    /// `data`), with the place's fields from `root`.
    static func weather(_ current: Fields, in root: Fields) throws(FieldError) -> CurrentWeather {
        let conditions = try current.list("weather").map { (condition: Fields) throws(FieldError) in
            CurrentWeather.Condition(
                id: Int(try condition.number("id", -1_000_000...1_000_000)),
                main: try condition.optionalString("main") ?? "",
                description: try condition.optionalString("description") ?? "",
                icon: try condition.optionalString("icon") ?? "")
        }
        guard !conditions.isEmpty else {
            throw FieldError(reason: "`\(current.path).weather` is empty: no condition reported")
        }
        let observation = try current.number("dt", 1...1e11)
        return CurrentWeather(
            temperatureCelsius: try current.number("temp", -100...70),
            feelsLikeCelsius: try current.number("feels_like", -120...90),
            temperatureMinCelsius: nil,
            temperatureMaxCelsius: nil,
            humidityRatio: WeatherDecoder.shift(try current.number("humidity", 0...100), by: -2),
            pressurePascals: WeatherDecoder.shift(try current.number("pressure", 800...1100), by: 2),
            groundLevelPressurePascals: nil,
            windSpeedMetersPerSecond: try current.optionalNumber("wind_speed", 0...150) ?? 0,
            windGustMetersPerSecond: try current.optionalNumber("wind_gust", 0...200),
            windDirectionDegrees: try current.optionalNumber("wind_deg", 0...360) ?? 0,
            cloudinessRatio: WeatherDecoder.shift(try current.optionalNumber("clouds", 0...100) ?? 0, by: -2),
            visibilityMeters: try current.optionalNumber("visibility", 0...100_000),
            rain1hMeters: WeatherDecoder.shift(
                try current.optionalObject("rain")?.optionalNumber("1h", 0...500) ?? 0, by: -3),
            snow1hMeters: WeatherDecoder.shift(
                try current.optionalObject("snow")?.optionalNumber("1h", 0...500) ?? 0, by: -3),
            sunrise: try current.optionalNumber("sunrise", 0...1e11).flatMap { $0 > 0 ? $0 : nil },
            sunset: try current.optionalNumber("sunset", 0...1e11).flatMap { $0 > 0 ? $0 : nil },
            observationTime: observation,
            timezoneOffsetSeconds: try root.optionalNumber("timezone_offset", -50_400...50_400) ?? 0,
            conditions: conditions,
            cityName: "",
            country: nil,
            latitude: try root.optionalNumber("lat", -90...90) ?? 0,
            longitude: try root.optionalNumber("lon", -180...180) ?? 0)
    }

    private static func convert(_ root: Fields) throws(FieldError) -> OneCall {
        let current = try root.requireObject().object("current")
        let weather = try weather(current, in: root)
        let observation = weather.observationTime
        let minutely = try minutes(try root.optionalList("minutely") ?? [])
        var hourly = try hours(try root.optionalList("hourly") ?? [])
        var daily: [OneCall.Day] = []
        for day in try root.optionalList("daily") ?? [] {
            let entry = try Self.day(day)
            daily.append(entry)
            // The days beyond the hours extend the forecast (a 72-hour window, horizons past 48 hours).
            guard let last = hourly.last, entry.time > last.time else { continue }
            hourly.append(try dayStep(day, entry, millimeters: dailyMillimeters))
        }
        let alerts = try (root.optionalList("alerts") ?? []).map { (alert: Fields) throws(FieldError) in
            try Self.alert(alert)
        }
        let extras = try dewPointAndUV(current)
        return OneCall(
            current: weather, dewPointCelsius: extras.dewPointCelsius, uvIndex: extras.uvIndex,
            minutely: minutely, hourly: Forecast(steps: hourly, stepSeconds: 3600, issued: observation), daily: daily,
            alerts: alerts)
    }
}
