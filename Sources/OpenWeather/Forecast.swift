/// A forecast for one place: steps at regular times (3 hours apart from `/data/2.5/forecast`),
/// in Prometheus base units; converted once, where the JSON is decoded. Prometheus cannot store
/// future samples, so the exporter reads it at "now + H" and over "the next W": `value(_:at:)`,
/// `step(covering:)` and `window(from:to:)` say what a forecast tells about a time.
public struct Forecast: Sendable, Equatable {
    public struct Step: Sendable, Equatable {
        /// Unix time the step is for (`dt`); its volumes are over its period: from the step before
        /// (`stepSeconds` before, for the first) up to this time.
        public var time: Double
        public var temperatureCelsius: Double
        public var feelsLikeCelsius: Double
        public var humidityRatio: Double
        /// At sea level.
        public var pressurePascals: Double
        public var windSpeedMetersPerSecond: Double
        public var windGustMetersPerSecond: Double?
        public var cloudinessRatio: Double
        /// Probability of precipitation over the step, 0 to 1 (`pop`).
        public var precipitationProbability: Double
        /// Over the step; zero when OpenWeather leaves the object out.
        public var rainMeters: Double
        public var snowMeters: Double
        /// The primary condition (`weather[0].id`).
        public var conditionID: Int
        /// One Call's steps only.
        public var dewPointCelsius: Double?
        public var uvIndex: Double?
        /// A day's extremes, for One Call's daily steps, whose temperature is the day's.
        public var dayMinimumCelsius: Double?
        public var dayMaximumCelsius: Double?

        public init(
            time: Double, temperatureCelsius: Double, feelsLikeCelsius: Double, humidityRatio: Double,
            pressurePascals: Double,
            windSpeedMetersPerSecond: Double, windGustMetersPerSecond: Double?, cloudinessRatio: Double,
            precipitationProbability: Double, rainMeters: Double, snowMeters: Double, conditionID: Int,
            dewPointCelsius: Double? = nil, uvIndex: Double? = nil, dayMinimumCelsius: Double? = nil,
            dayMaximumCelsius: Double? = nil
        ) {
            self.time = time
            self.temperatureCelsius = temperatureCelsius
            self.feelsLikeCelsius = feelsLikeCelsius
            self.humidityRatio = humidityRatio
            self.pressurePascals = pressurePascals
            self.windSpeedMetersPerSecond = windSpeedMetersPerSecond
            self.windGustMetersPerSecond = windGustMetersPerSecond
            self.cloudinessRatio = cloudinessRatio
            self.precipitationProbability = precipitationProbability
            self.rainMeters = rainMeters
            self.snowMeters = snowMeters
            self.conditionID = conditionID
            self.dewPointCelsius = dewPointCelsius
            self.uvIndex = uvIndex
            self.dayMinimumCelsius = dayMinimumCelsius
            self.dayMaximumCelsius = dayMaximumCelsius
        }
    }

    /// In time order: `stepSeconds` apart (One Call: hourly, then daily after the last hour).
    public var steps: [Step]
    public var stepSeconds: Double
    /// When the forecast was made, as far as the answer tells (see the decoder).
    public var issued: Double

    public init(steps: [Step], stepSeconds: Double, issued: Double) {
        self.steps = steps
        self.stepSeconds = stepSeconds
        self.issued = issued
    }

    /// What the next `W` hold, for alerting: the extremes and totals over the steps in it.
    public struct Window: Sendable, Equatable {
        public var temperatureMinCelsius: Double
        public var temperatureMaxCelsius: Double
        public var precipitationProbabilityMax: Double
        /// Each step's volume in proportion to the part of it inside the window.
        public var rainMeters: Double
        public var snowMeters: Double
        /// The strongest gust of the steps in the window; nil when none of them reports one.
        public var windGustMaxMetersPerSecond: Double?
    }

    /// A continuous quantity at `time`: linear between the two steps around it; nil before the
    /// first step, after the last, or where either step lacks it.
    public func value(_ quantity: (Step) -> Double?, at time: Double) -> Double? {
        guard let last = steps.last, let first = steps.first, time >= first.time, time <= last.time else { return nil }
        let after = firstIndex(atOrAfter: time)
        let upper = steps[after]
        guard let high = quantity(upper) else { return nil }
        if upper.time == time || after == 0 { return high }
        let lower = steps[after - 1]
        guard let low = quantity(lower) else { return nil }
        let fraction = (time - lower.time) / (upper.time - lower.time)
        return low + (high - low) * fraction
    }

    /// The step whose period holds `time`; nil outside the forecast.
    public func step(covering time: Double) -> Step? {
        guard let first = steps.first, let last = steps.last, time > first.time - stepSeconds, time <= last.time else {
            return nil
        }
        return steps[firstIndex(atOrAfter: time)]
    }

    /// From `start` to `end`; nil unless the forecast reaches `end`. The temperature extremes take
    /// the steps inside (a daily step's own minimum and maximum) and the interpolated values at both
    /// ends, so they move smoothly with time.
    public func window(from start: Double, to end: Double) -> Window? {
        guard end > start, let last = steps.last, last.time >= end else { return nil }
        var temperatures: [Double] = []
        if let atStart = value({ $0.temperatureCelsius }, at: start) { temperatures.append(atStart) }
        if let atEnd = value({ $0.temperatureCelsius }, at: end) { temperatures.append(atEnd) }
        var probability = 0.0
        var rain = 0.0
        var snow = 0.0
        var gust: Double?
        for (index, step) in steps.enumerated() {
            let begins = index == 0 ? step.time - stepSeconds : steps[index - 1].time
            guard step.time > start && begins < end else { continue }
            if step.time < end {
                temperatures.append(step.dayMinimumCelsius ?? step.temperatureCelsius)
                temperatures.append(step.dayMaximumCelsius ?? step.temperatureCelsius)
            }
            probability = max(probability, step.precipitationProbability)
            if let stepGust = step.windGustMetersPerSecond { gust = max(gust ?? stepGust, stepGust) }
            let inside = (min(step.time, end) - max(begins, start)) / (step.time - begins)
            rain += step.rainMeters * inside
            snow += step.snowMeters * inside
        }
        guard let low = temperatures.min(), let high = temperatures.max() else { return nil }
        // To the micrometre, so a sum of millimetres reads 0.0024, not 0.0024000000000000002.
        return Window(
            temperatureMinCelsius: low, temperatureMaxCelsius: high, precipitationProbabilityMax: probability,
            rainMeters: (rain * 1e9).rounded() / 1e9, snowMeters: (snow * 1e9).rounded() / 1e9,
            windGustMaxMetersPerSecond: gust)
    }

    /// The first step at or after `time`, which must not be after the last step.
    private func firstIndex(atOrAfter time: Double) -> Int {
        var low = 0
        var high = steps.count - 1
        while low < high {
            let middle = (low + high) / 2
            if steps[middle].time < time { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// `/data/2.5/forecast` for one place, in metric units: every step (5 days).
    public static func request(latitude: Double, longitude: Double, language: String) -> APIRequest {
        APIRequest(
            path: "/data/2.5/forecast",
            query: [
                .init("lat", String(latitude)), .init("lon", String(longitude)), .init("units", "metric"),
                .init("lang", language),
            ])
    }
}

/// Decodes a `/data/2.5/forecast` body (requested with `units=metric`), checking every number
/// as the current weather's are; steps out of time order are a `decode` failure.
public enum ForecastDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> Forecast {
        try Fields.decode(body, convert)
    }

    static let stepSeconds = 10_800.0

    private static func convert(_ root: Fields) throws(FieldError) -> Forecast {
        let list = try root.requireObject().list("list")
        guard !list.isEmpty else { throw FieldError(reason: "`list` is empty: no forecast step") }
        var steps: [Forecast.Step] = []
        for entry in list {
            let main = try entry.object("main")
            let wind = try entry.optionalObject("wind")
            let conditions = try entry.list("weather")
            guard let primary = conditions.first else {
                throw FieldError(reason: "`\(entry.path).weather` is empty: no condition reported")
            }
            let step = Forecast.Step(
                time: try entry.number("dt", 1...1e11),
                temperatureCelsius: try main.number("temp", -100...70),
                feelsLikeCelsius: try main.number("feels_like", -120...90),
                humidityRatio: WeatherDecoder.shift(try main.number("humidity", 0...100), by: -2),
                pressurePascals: WeatherDecoder.shift(try main.number("pressure", 800...1100), by: 2),
                windSpeedMetersPerSecond: try wind?.optionalNumber("speed", 0...150) ?? 0,
                windGustMetersPerSecond: try wind?.optionalNumber("gust", 0...200),
                cloudinessRatio: WeatherDecoder.shift(
                    try entry.optionalObject("clouds")?.optionalNumber("all", 0...100) ?? 0, by: -2),
                precipitationProbability: try entry.optionalNumber("pop", 0...1) ?? 0,
                rainMeters: WeatherDecoder.shift(
                    try entry.optionalObject("rain")?.optionalNumber("3h", 0...1000) ?? 0, by: -3),
                snowMeters: WeatherDecoder.shift(
                    try entry.optionalObject("snow")?.optionalNumber("3h", 0...1000) ?? 0, by: -3),
                conditionID: Int(try primary.number("id", -1_000_000...1_000_000)))
            if let previous = steps.last, step.time <= previous.time {
                throw FieldError(reason: "`\(entry.path).dt` = \(Int(step.time)) is not after the step before it")
            }
            steps.append(step)
        }
        // The answer carries no issue time. OpenWeather's first step is the first 3-hour mark after
        // it computed the forecast, so the forecast was made in the 3 hours before it.
        return Forecast(steps: steps, stepSeconds: stepSeconds, issued: steps[0].time - stepSeconds)
    }
}
