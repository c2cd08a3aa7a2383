/// The hourly air-quality forecast at one place (`/data/2.5/air_pollution/forecast`, 4 days ahead):
/// each step is an hour as the current answer has it, for the hour starting at its `observationTime`.
/// Read, like the weather forecast, at "now + H" and over "the next W".
public struct AirPollutionForecast: Sendable, Equatable {
    /// In time order, one an hour; an hour whose entry was skipped is missing.
    public let steps: [AirPollution]
    /// Per step, the index in each of `AirQualityScale.allCases`, worked out once: a render reads
    /// every step of a window each minute.
    public let scaleIndices: [[Double?]]
    /// The steps with a missing hour before them: read at each render, so found once.
    private let afterGaps: [Int]
    /// What the answer lacked.
    public let gaps: AnswerGaps

    public static let stepSeconds = 3600.0

    public init(steps: [AirPollution], gaps: AnswerGaps = AnswerGaps()) {
        self.steps = steps
        self.gaps = gaps
        scaleIndices = steps.map { step in AirQualityScale.allCases.map { $0.index(step.gramsPerCubicMeter) } }
        afterGaps = steps.indices.dropFirst().filter {
            steps[$0].observationTime - steps[$0 - 1].observationTime > Self.stepSeconds
        }
    }

    /// The step whose hour holds `time`; nil before the first hour, after the last, or in a missing one.
    public func step(covering time: Double) -> Int? {
        guard let first = steps.first, let last = steps.last, time >= first.observationTime,
            time < last.observationTime + Self.stepSeconds
        else { return nil }
        let index = lastIndex(atOrBefore: time)
        return time < steps[index].observationTime + Self.stepSeconds ? index : nil
    }

    /// Each pollutant's concentration at `time`, linear between the two steps around it (nil for a
    /// pollutant either lacks); nil before the first step, after the last, or with an hour missing
    /// between the two.
    public func gramsPerCubicMeter(at time: Double) -> [Double?]? {
        guard let first = steps.first, let last = steps.last, time >= first.observationTime,
            time <= last.observationTime
        else { return nil }
        let lower = lastIndex(atOrBefore: time)
        let low = steps[lower]
        guard low.observationTime < time, lower + 1 < steps.count else { return low.gramsPerCubicMeter }
        let high = steps[lower + 1]
        guard high.observationTime - low.observationTime <= Self.stepSeconds else { return nil }
        let fraction = (time - low.observationTime) / (high.observationTime - low.observationTime)
        return zip(low.gramsPerCubicMeter, high.gramsPerCubicMeter).map { pair in
            guard let from = pair.0, let to = pair.1 else { return nil }
            // To the picogram, as decoded: no float noise in the exposition.
            return ((from + (to - from) * fraction) * 1e12).rounded() / 1e12
        }
    }

    /// The steps whose hours overlap `start..<end`; nil unless the forecast reaches `end`, or when an
    /// hour in between is missing (the highest index of fewer hours could mislead).
    public func steps(from start: Double, to end: Double) -> Range<Int>? {
        guard end > start, let last = steps.last, last.observationTime + Self.stepSeconds >= end else { return nil }
        for index in afterGaps
        where steps[index - 1].observationTime + Self.stepSeconds < end && steps[index].observationTime > start {
            return nil
        }
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

/// Decodes a `/data/2.5/air_pollution/forecast` body.
///
/// Field policy. Required: the body an object whose `list` holds at least one usable hour. Each hour
/// needs `dt`; one without it, or not after the hour kept before it, is skipped and noted in `gaps`,
/// and the others are used. Optional in each hour, noted: `main.aqi` (a whole number from 1 to 5; a
/// real forecast sent 0 in two hours, their concentrations all there: only that hour's own index is
/// unknown) and the `components`, as the current answer's (`AirPollutionDecoder`).
public enum AirPollutionForecastDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> AirPollutionForecast {
        try Fields.decode(body, convert)
    }

    private static func convert(_ root: Fields) throws(FieldError) -> AirPollutionForecast {
        let root = try root.requireObject()
        try root.requireList("list")
        let steps =
            root.entries("list", follows: AirPollutionDecoder.rising) { (entry: Fields) throws(FieldError) in
                try AirPollutionDecoder.item(entry)
            } ?? []
        guard !steps.isEmpty else {
            throw FieldError(reason: ForecastDecoder.noUsableEntry(root, "list", "forecast hour"))
        }
        return AirPollutionForecast(steps: steps, gaps: root.gaps)
    }
}
