/// A forecast for one place: steps at regular times (3 hours apart from `/data/2.5/forecast`),
/// in Prometheus base units; converted once, where the JSON is decoded. Prometheus cannot store
/// future samples, so the exporter reads it at "now + H" and over "the next W": `value(_:at:)`,
/// `step(covering:)` and `window(from:to:)` say what a forecast tells about a time.
public struct Forecast: Sendable, Equatable {
    /// One step as the answer gives it; nil where its entry had no usable value (see the decoders' field
    /// policies): a quantity a step lacks is not shown where that step would be read.
    public struct Step: Sendable, Equatable {
        /// Unix time the step is for (`dt`).
        public var time: Double
        /// How long a span the step covers, ending at `time` (and never before the step before it): 3
        /// hours from `/data/2.5/forecast`, an hour (or 15 minutes) from One Call's steps, a day from its
        /// days. Its rain and snow fall over that span, except a One Call day's (see `falls`). A time
        /// between a step and the start of the next one's span is covered by no step: an entry was
        /// skipped there.
        public var seconds: Double
        public var temperatureCelsius: Double
        public var feelsLikeCelsius: Double?
        public var humidityRatio: Double?
        /// At sea level.
        public var pressurePascals: Double?
        public var windSpeedMetersPerSecond: Double?
        public var windGustMetersPerSecond: Double?
        /// Where the wind comes from, meteorological degrees.
        public var windDirectionDegrees: Double?
        public var cloudinessRatio: Double?
        public var visibilityMeters: Double?
        /// Probability of precipitation over the step, 0 to 1 (`pop`).
        public var precipitationProbability: Double?
        /// Over the step's span; zero when OpenWeather leaves the object out.
        public var rainMeters: Double?
        public var snowMeters: Double?
        /// The primary condition (`weather[0].id`).
        public var conditionID: Int?
        /// One Call's steps only.
        public var dewPointCelsius: Double?
        public var uvIndex: Double?
        /// A day's extremes, for One Call's daily steps, whose temperature is the day's.
        public var dayMinimumCelsius: Double?
        public var dayMaximumCelsius: Double?

        public init(
            time: Double, seconds: Double, temperatureCelsius: Double, feelsLikeCelsius: Double? = nil,
            humidityRatio: Double? = nil, pressurePascals: Double? = nil, windSpeedMetersPerSecond: Double? = nil,
            windGustMetersPerSecond: Double? = nil, windDirectionDegrees: Double? = nil, cloudinessRatio: Double? = nil,
            visibilityMeters: Double? = nil, precipitationProbability: Double? = nil, rainMeters: Double? = nil,
            snowMeters: Double? = nil, conditionID: Int? = nil, dewPointCelsius: Double? = nil, uvIndex: Double? = nil,
            dayMinimumCelsius: Double? = nil, dayMaximumCelsius: Double? = nil
        ) {
            self.time = time
            self.seconds = seconds
            self.temperatureCelsius = temperatureCelsius
            self.feelsLikeCelsius = feelsLikeCelsius
            self.humidityRatio = humidityRatio
            self.pressurePascals = pressurePascals
            self.windSpeedMetersPerSecond = windSpeedMetersPerSecond
            self.windGustMetersPerSecond = windGustMetersPerSecond
            self.windDirectionDegrees = windDirectionDegrees
            self.cloudinessRatio = cloudinessRatio
            self.visibilityMeters = visibilityMeters
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

    /// In time order (One Call: hourly, then daily after the last hour).
    public let steps: [Step]
    /// Per step, its heat and cold indices, worked out once: a render reads every step of a window each
    /// minute. A One Call day's are of its `temp.day`, humidity and wind.
    public let thermal: [ThermalIndex.Values]
    /// The rain and snow the steps forecast, where they fall, in time order: what the window totals add.
    public let falls: [Fall]
    /// When the forecast was made, as far as the answer tells (see the decoder).
    public var issued: Double
    /// What the answer lacked.
    public var gaps: AnswerGaps

    /// Rain and snow over a span of time, spread evenly over it.
    public struct Fall: Sendable, Equatable {
        public var begins: Double
        public var ends: Double
        public var rainMeters: Double?
        public var snowMeters: Double?
    }

    /// `falls` nil: each step's amounts over its span.
    public init(steps: [Step], issued: Double, gaps: AnswerGaps = AnswerGaps(), falls: [Fall]? = nil) {
        self.steps = steps
        self.issued = issued
        self.gaps = gaps
        self.falls = falls ?? Self.falls(of: steps)
        thermal = steps.map {
            ThermalIndex.Values(
                temperature: $0.temperatureCelsius, humidityRatio: $0.humidityRatio,
                windSpeed: $0.windSpeedMetersPerSecond)
        }
    }

    /// One Call's: the hours, then the days after the last hour. A day's `rain` (`snow`) is its local
    /// calendar day's total and its `dt` that day's local noon. So a day's amount is spread over the
    /// 24 h around its `dt` (to the midpoints between it and the days beside it, for 23- and 25-hour
    /// days), and only the part after the last hour is counted: the hours hold the rest.
    /// `days` in time order; those whose span ends by the last hour are not used.
    public init(hours: [Step], days: [Step], issued: Double, gaps: AnswerGaps = AnswerGaps()) {
        guard let last = hours.last else {
            self.init(steps: hours, issued: issued, gaps: gaps)
            return
        }
        var falls = Self.falls(of: hours)
        for (index, day) in days.enumerated() {
            // Days next to each other share the midpoint between their noons; alone, a day is 24 h.
            func bound(_ other: Int) -> Double {
                guard days.indices.contains(other), abs(days[other].time - day.time) <= Self.adjacentDays else {
                    return day.time + (other > index ? 1 : -1) * Self.dayHalf
                }
                return (day.time + days[other].time) / 2
            }
            let begins = bound(index - 1)
            let ends = bound(index + 1)
            guard ends > last.time else { continue }
            let part = (ends - max(begins, last.time)) / (ends - begins)
            falls.append(
                Fall(
                    begins: max(begins, last.time), ends: ends, rainMeters: day.rainMeters.map { $0 * part },
                    snowMeters: day.snowMeters.map { $0 * part }))
        }
        // A day's step covers the time since the day before it, 25 h where clocks go back.
        var steps = hours
        for (index, day) in days.enumerated() where day.time > last.time {
            var day = day
            if index > 0, day.time - days[index - 1].time <= Self.adjacentDays {
                day.seconds = day.time - days[index - 1].time
            }
            steps.append(day)
        }
        self.init(steps: steps, issued: issued, gaps: gaps, falls: falls)
    }

    /// Half of a day around its noon.
    public static let dayHalf = 43_200.0
    /// Two days' noons at most this far apart are next to each other (25 h where clocks go back).
    static let adjacentDays = 90_000.0

    /// Each step's amounts over its span.
    public static func falls(of steps: [Step]) -> [Fall] {
        steps.indices.map {
            Fall(
                begins: begins($0, in: steps), ends: steps[$0].time, rainMeters: steps[$0].rainMeters,
                snowMeters: steps[$0].snowMeters)
        }
    }

    /// What the next `W` hold, for alerting: the extremes and totals over the steps in it. A quantity
    /// that a step in the window lacks is nil: a total or an extreme of fewer steps would mislead.
    public struct Window: Sendable, Equatable {
        public var temperatureMinCelsius: Double
        public var temperatureMaxCelsius: Double
        public var precipitationProbabilityMax: Double?
        /// Each fall's amount in proportion to the part of its span inside the window (see `falls`).
        public var rainMeters: Double?
        public var snowMeters: Double?
        /// The strongest gust of the steps in the window; nil when none of them reports one (a gust is
        /// only sent when there is one).
        public var windGustMaxMetersPerSecond: Double?
        /// The extremes of the steps' indices inside and at both ends, as the temperature's; nil when a
        /// step inside has none (its humidity or wind missing, or outside the formula's domain).
        public var heatIndexMaxCelsius: Double?
        public var wetBulbMaxCelsius: Double?
        public var windChillMinCelsius: Double?
    }

    /// Where the span of the step at `index` begins: its `seconds` before it, but not before the step
    /// before it.
    public func begins(_ index: Int) -> Double { Self.begins(index, in: steps) }

    static func begins(_ index: Int, in steps: [Step]) -> Double {
        let step = steps[index]
        return index == 0 ? step.time - step.seconds : max(steps[index - 1].time, step.time - step.seconds)
    }

    /// Whether an entry is missing before the step at `index`: its span does not reach the step before.
    private func gap(before index: Int) -> Bool {
        index > 0 && steps[index].time - steps[index].seconds > steps[index - 1].time
    }

    /// A continuous quantity at `time`: linear between the two steps around it; nil before the first
    /// step, after the last, between two steps with an entry missing between them, or where either
    /// step lacks it.
    public func value(_ quantity: (Step) -> Double?, at time: Double) -> Double? {
        value(at: time) { quantity(steps[$0]) }
    }

    /// The same, of a quantity read by the step's index (`thermal`'s).
    private func value(at time: Double, _ quantity: (Int) -> Double?) -> Double? {
        guard let last = steps.last, let first = steps.first, time >= first.time, time <= last.time else { return nil }
        let after = firstIndex(atOrAfter: time)
        let upper = steps[after]
        guard let high = quantity(after) else { return nil }
        if upper.time == time || after == 0 { return high }
        guard !gap(before: after) else { return nil }
        let lower = steps[after - 1]
        guard let low = quantity(after - 1) else { return nil }
        let fraction = (time - lower.time) / (upper.time - lower.time)
        return low + (high - low) * fraction
    }

    /// The step whose span holds `time`; nil outside the forecast or where an entry is missing.
    public func step(covering time: Double) -> Step? {
        guard let first = steps.first, let last = steps.last, time > first.time - first.seconds, time <= last.time
        else {
            return nil
        }
        let index = firstIndex(atOrAfter: time)
        return time > begins(index) ? steps[index] : nil
    }

    /// From `start` to `end`; nil unless the forecast reaches `end`, or when an entry is missing in
    /// between. The temperature extremes take the steps inside (a daily step's own minimum and
    /// maximum) and the interpolated values at both ends, so they move smoothly with time.
    public func window(from start: Double, to end: Double) -> Window? {
        guard end > start, let last = steps.last, last.time >= end else { return nil }
        var temperatures: [Double] = []
        if let atStart = value({ $0.temperatureCelsius }, at: start) { temperatures.append(atStart) }
        if let atEnd = value({ $0.temperatureCelsius }, at: end) { temperatures.append(atEnd) }
        var probability: Double? = 0
        var rain: Double? = 0
        var snow: Double? = 0
        var gust: Double?
        // Each index at the ends (where the steps around them have it), then at the steps inside.
        var heatIndex = Extreme(highest: true)
        var wetBulb = Extreme(highest: true)
        var windChill = Extreme(highest: false)
        for time in [start, end] {
            heatIndex.include(value(at: time) { thermal[$0].heatIndex })
            wetBulb.include(value(at: time) { thermal[$0].wetBulb })
            windChill.include(value(at: time) { thermal[$0].windChill })
        }
        for (index, step) in steps.enumerated() {
            let begins = begins(index)
            guard step.time > start && begins < end else { continue }
            // An entry missing inside the window: no total or extreme of it is whole.
            if index > 0 && begins > max(steps[index - 1].time, start) { return nil }
            if step.time < end {
                temperatures.append(step.dayMinimumCelsius ?? step.temperatureCelsius)
                temperatures.append(step.dayMaximumCelsius ?? step.temperatureCelsius)
                heatIndex.require(thermal[index].heatIndex)
                wetBulb.require(thermal[index].wetBulb)
                windChill.require(thermal[index].windChill)
            }
            probability = step.precipitationProbability.flatMap { pop in probability.map { max($0, pop) } }
            if let stepGust = step.windGustMetersPerSecond { gust = max(gust ?? stepGust, stepGust) }
        }
        for (index, fall) in falls.enumerated() where fall.ends > start && fall.begins < end {
            if index > 0 && fall.begins > max(falls[index - 1].ends, start) { return nil }
            let inside = (min(fall.ends, end) - max(fall.begins, start)) / (fall.ends - fall.begins)
            rain = fall.rainMeters.flatMap { amount in rain.map { $0 + amount * inside } }
            snow = fall.snowMeters.flatMap { amount in snow.map { $0 + amount * inside } }
        }
        // Falls that stop short of the end (a day's total missing) make no total.
        if (falls.last?.ends ?? start) < end { (rain, snow) = (nil, nil) }
        guard let low = temperatures.min(), let high = temperatures.max() else { return nil }
        // To the micrometre, so a sum of millimetres reads 0.0024, not 0.0024000000000000002.
        func rounded(_ meters: Double) -> Double { (meters * 1e9).rounded() / 1e9 }
        return Window(
            temperatureMinCelsius: low, temperatureMaxCelsius: high, precipitationProbabilityMax: probability,
            rainMeters: rain.map(rounded), snowMeters: snow.map(rounded), windGustMaxMetersPerSecond: gust,
            heatIndexMaxCelsius: heatIndex.value, wetBulbMaxCelsius: wetBulb.value, windChillMinCelsius: windChill.value
        )
    }

    /// The highest or lowest of an index over a window; nil once a step inside lacks it.
    private struct Extreme {
        let highest: Bool
        private var found: Double?
        private var lacking = false

        init(highest: Bool) { self.highest = highest }

        var value: Double? { lacking ? nil : found }

        /// A value at an end of the window: left out where the steps around it have none.
        mutating func include(_ value: Double?) {
            guard let value else { return }
            found = found.map { highest ? max($0, value) : min($0, value) } ?? value
        }

        /// A step's value inside the window: without it, the window has no extreme.
        mutating func require(_ value: Double?) {
            if value == nil { lacking = true }
            include(value)
        }
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

/// Decodes a `/data/2.5/forecast` body (requested with `units=metric`), checking every number as
/// the current weather's are.
///
/// Field policy. Required: the body an object with a `list` of at least one usable entry. An entry
/// needs `dt` (after the entry kept before it) and `main.temp`; one without is skipped and noted in
/// `gaps`, and the others are used (a time where it would have been is covered by no step: see
/// `Forecast`). Optional in each entry, left out of that step alone when absent, null, of another type
/// or out of range (noted): `main.feels_like`, `.humidity`, the sea-level pressure (`main.sea_level`,
/// else `main.pressure`), `wind.speed`, `.deg`, `.gust`, `clouds.all`, `visibility`, `pop`, `rain.3h`,
/// `snow.3h` (the object left out when none falls: 0) and `weather[0].id`. Not read: `main.temp_min`,
/// `.temp_max`, `.grnd_level`, `.temp_kf`, `sys`, `dt_txt`, `city`.
public enum ForecastDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> Forecast {
        try Fields.decode(body, convert)
    }

    static let stepSeconds = 10_800.0

    private static func convert(_ root: Fields) throws(FieldError) -> Forecast {
        let root = try root.requireObject()
        try root.requireList("list")
        let steps =
            root.entries("list", follows: rising) { (entry: Fields) throws(FieldError) in try step(entry) } ?? []
        guard let first = steps.first else { throw FieldError(reason: noUsableEntry(root, "list", "forecast step")) }
        // The answer carries no issue time. OpenWeather's first step is the first 3-hour mark after
        // it computed the forecast, so the forecast was made in the 3 hours before it.
        return Forecast(steps: steps, issued: first.time - stepSeconds, gaps: root.gaps)
    }

    private static func step(_ entry: Fields) throws(FieldError) -> Forecast.Step {
        let main = try entry.object("main")
        let wind = entry.part("wind")
        return Forecast.Step(
            time: try entry.number("dt", 1...1e11),
            seconds: stepSeconds,
            temperatureCelsius: try main.number("temp", -100...70),
            feelsLikeCelsius: main.optional("feels_like", -120...90),
            humidityRatio: main.optional("humidity", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            pressurePascals: WeatherDecoder.seaLevelPressure(main),
            windSpeedMetersPerSecond: wind.optional("speed", 0...150),
            windGustMetersPerSecond: wind.optional("gust", 0...200),
            windDirectionDegrees: wind.optional("deg", 0...360),
            cloudinessRatio: entry.part("clouds").optional("all", 0...100).map { WeatherDecoder.shift($0, by: -2) },
            visibilityMeters: entry.optional("visibility", 0...100_000),
            precipitationProbability: entry.optional("pop", 0...1),
            rainMeters: WeatherDecoder.fallen(entry, "rain", "3h", 0...1000),
            snowMeters: WeatherDecoder.fallen(entry, "snow", "3h", 0...1000),
            conditionID: WeatherDecoder.conditions(entry).primary?.id)
    }

    /// Steps rise strictly in time; one that does not is skipped.
    static func rising(_ previous: Forecast.Step, _ step: Forecast.Step, _ path: String) -> String? {
        step.time > previous.time ? nil : "`\(path).dt` = \(Int(step.time)) is not after the step before it"
    }

    /// Why a required list gave nothing: empty, or every entry skipped (the first one's reason).
    static func noUsableEntry(_ root: Fields, _ list: String, _ what: String) -> String {
        guard let skipped = root.gaps.skipped.first(where: { $0.field == list }) else {
            return "`\(list)` is empty: no \(what)"
        }
        return "`\(list)` holds no usable \(what): \(skipped.count) skipped, the first because \(skipped.reason)"
    }
}
