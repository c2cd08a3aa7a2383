/// The air quality at one place (`/data/2.5/air_pollution`), concentrations in
/// grams per cubic metre; converted once, where the JSON is decoded.
public struct AirPollution: Sendable, Equatable {
    /// OpenWeather's component names, in byte order: the order of the `pollutant` label values.
    public static let pollutants: [String] = ["co", "nh3", "no", "no2", "o3", "pm10", "pm2_5", "so2"]

    /// 1 (good) to 5 (very poor), OpenWeather's own index; nil for a forecast or history hour that
    /// sent none usable (a real forecast sent 0 in two hours, their concentrations all there).
    public var airQualityIndex: Int?
    /// In the order of `pollutants`; nil where the answer has no such component.
    public var gramsPerCubicMeter: [Double?]
    /// When the (hourly, modelled) values apply.
    public var observationTime: Double
    /// What the answer lacked (for the current answer; a forecast's hours leave it to the forecast).
    public var gaps: AnswerGaps

    public init(
        airQualityIndex: Int?, gramsPerCubicMeter: [Double?], observationTime: Double, gaps: AnswerGaps = AnswerGaps()
    ) {
        self.airQualityIndex = airQualityIndex
        self.gramsPerCubicMeter = gramsPerCubicMeter
        self.observationTime = observationTime
        self.gaps = gaps
    }

    /// `/data/2.5/air_pollution` for one place; the endpoint takes no units or language.
    public static func request(latitude: Double, longitude: Double) -> APIRequest {
        APIRequest(
            path: "/data/2.5/air_pollution", query: [.init("lat", String(latitude)), .init("lon", String(longitude))])
    }
}

/// Decodes a `/data/2.5/air_pollution` body.
///
/// Field policy. Required: the body an object whose `list` holds an entry (the answer has one, the
/// current hour) with `dt` and `main.aqi`, a whole number from 1 to 5: the index is what the source is
/// for, and a value outside OpenWeather's scale says nothing. Optional, each its own series, left out
/// when absent, null, of another type or out of range (noted in `gaps`): `components.co`, `.nh3`,
/// `.no`, `.no2`, `.o3`, `.pm10`, `.pm2_5`, `.so2` (a scale computed from them is left out when none of
/// its pollutants came). Not read: `coord`.
public enum AirPollutionDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> AirPollution {
        try Fields.decode(body, convert)
    }

    /// µg/m³. Carbon monoxide is measured in hundreds where the others are in tens;
    /// the bounds are far above any city's worst hour, well below a broken number.
    private static func limit(_ pollutant: String) -> ClosedRange<Double> {
        pollutant == "co" ? 0...1_000_000 : 0...100_000
    }

    private static func convert(_ root: Fields) throws(FieldError) -> AirPollution {
        let root = try root.requireObject()
        try root.requireList("list")
        guard case .array(let items)? = root.value["list"], let latest = items.first else {
            throw FieldError(reason: "`list` is empty: no measurement reported")
        }
        guard case .object = latest else { throw FieldError(reason: "`list[0]` is \(latest.typeName), not an object") }
        var reading = try item(Fields(latest, path: "list[0]", log: root.log), indexRequired: true)
        reading.gaps = root.gaps
        return reading
    }

    /// One hour of a `list`: the current answer's, whose index is required, or one of the forecast's
    /// and the history's, whose unusable index is that hour's alone to lose (noted): its
    /// concentrations, and the scales computed from them, are kept.
    static func item(_ entry: Fields, indexRequired: Bool = false) throws(FieldError) -> AirPollution {
        let main = indexRequired ? try entry.object("main") : entry.part("main")
        var index = indexRequired ? try main.number("aqi", 1...5) : main.optional("aqi", 1...5)
        if let whole = index, whole != whole.rounded() {
            let reason = "`\(main.name("aqi"))` = \(whole) is not a whole number"
            guard !indexRequired else { throw FieldError(reason: reason) }
            main.log?.missing(main.name("aqi"), reason)
            index = nil
        }
        let time = try entry.number("dt", 1...1e11)
        let components = entry.part("components")
        let concentrations = AirPollution.pollutants.map { pollutant in
            components.optional(pollutant, limit(pollutant)).map { WeatherDecoder.shift($0, by: -6) }
        }
        return AirPollution(
            airQualityIndex: index.map { Int($0) }, gramsPerCubicMeter: concentrations, observationTime: time)
    }

    /// Hours rise strictly in time; one that does not is skipped.
    static func rising(_ previous: AirPollution, _ hour: AirPollution, _ path: String) -> String? {
        hour.observationTime > previous.observationTime
            ? nil : "`\(path).dt` = \(Int(hour.observationTime)) is not after the hour before it"
    }
}
