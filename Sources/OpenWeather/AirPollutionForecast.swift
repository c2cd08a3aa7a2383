/// The hourly air-quality forecast at one place (`/data/2.5/air_pollution/forecast`, 4 days ahead):
/// each step is an hour as the current answer has it, for the hour starting at its `observationTime`.
/// Read, like the weather forecast, at "now + H" and over "the next W".
public struct AirPollutionForecast: Sendable, Equatable {
    /// In time order, one an hour.
    public let steps: [AirPollution]
    /// Per step, the index in each of `AirQualityScale.allCases`, worked out once: a render reads
    /// every step of a window each minute.
    public let scaleIndices: [[Double?]]

    public static let stepSeconds = 3600.0

    public init(steps: [AirPollution]) {
        self.steps = steps
        scaleIndices = steps.map { step in AirQualityScale.allCases.map { $0.index(step.gramsPerCubicMeter) } }
    }

    /// The step whose hour holds `time`; nil before the first hour or after the last.
    public func step(covering time: Double) -> Int? {
        guard let first = steps.first, let last = steps.last, time >= first.observationTime,
            time < last.observationTime + Self.stepSeconds
        else { return nil }
        return lastIndex(atOrBefore: time)
    }

    /// Each pollutant's concentration at `time`, linear between the two steps around it (nil for a
    /// pollutant either lacks); nil before the first step or after the last.
    public func gramsPerCubicMeter(at time: Double) -> [Double?]? {
        guard let first = steps.first, let last = steps.last, time >= first.observationTime,
            time <= last.observationTime
        else { return nil }
        let lower = lastIndex(atOrBefore: time)
        let low = steps[lower]
        guard low.observationTime < time, lower + 1 < steps.count else { return low.gramsPerCubicMeter }
        let high = steps[lower + 1]
        let fraction = (time - low.observationTime) / (high.observationTime - low.observationTime)
        return zip(low.gramsPerCubicMeter, high.gramsPerCubicMeter).map { pair in
            guard let from = pair.0, let to = pair.1 else { return nil }
            // To the picogram, as decoded: no float noise in the exposition.
            return ((from + (to - from) * fraction) * 1e12).rounded() / 1e12
        }
    }

    /// The steps whose hours overlap `start..<end`; nil unless the forecast reaches `end`.
    public func steps(from start: Double, to end: Double) -> Range<Int>? {
        guard end > start, let last = steps.last, last.observationTime + Self.stepSeconds >= end else { return nil }
        let lower = steps.firstIndex { $0.observationTime + Self.stepSeconds > start } ?? steps.count
        let upper = steps.firstIndex { $0.observationTime >= end } ?? steps.count
        return lower < upper ? lower..<upper : nil
    }

    /// The last step at or before `time`, which must not be before the first.
    private func lastIndex(atOrBefore time: Double) -> Int {
        var low = 0
        var high = steps.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if steps[middle].observationTime <= time { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// `/data/2.5/air_pollution/forecast` for one place; like the current call, no units or language.
    public static func request(latitude: Double, longitude: Double) -> APIRequest {
        APIRequest(
            path: "/data/2.5/air_pollution/forecast",
            query: [.init("lat", String(latitude)), .init("lon", String(longitude))])
    }
}

/// Decodes a `/data/2.5/air_pollution/forecast` body: every hour checked as the current answer's
/// one is; an empty list or hours out of time order are a `decode` failure.
public enum AirPollutionForecastDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> AirPollutionForecast {
        try Fields.decode(body, convert)
    }

    private static func convert(_ root: Fields) throws(FieldError) -> AirPollutionForecast {
        let list = try root.requireObject().list("list")
        guard !list.isEmpty else { throw FieldError(reason: "`list` is empty: no forecast hour reported") }
        var steps: [AirPollution] = []
        for entry in list {
            let step = try AirPollutionDecoder.item(entry)
            if let previous = steps.last, step.observationTime <= previous.observationTime {
                throw FieldError(
                    reason: "`\(entry.path).dt` = \(Int(step.observationTime)) is not after the hour before it")
            }
            steps.append(step)
        }
        return AirPollutionForecast(steps: steps)
    }
}
