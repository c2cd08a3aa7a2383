/// The air quality at one place (`/data/2.5/air_pollution`), concentrations in
/// grams per cubic metre; converted once, where the JSON is decoded.
public struct AirPollution: Sendable, Equatable {
    /// OpenWeather's component names, in byte order: the order of the `pollutant` label values.
    public static let pollutants: [String] = ["co", "nh3", "no", "no2", "o3", "pm10", "pm2_5", "so2"]

    /// 1 (good) to 5 (very poor), OpenWeather's own index.
    public var airQualityIndex: Int
    /// In the order of `pollutants`; nil where the answer has no such component.
    public var gramsPerCubicMeter: [Double?]
    /// When the (hourly, modelled) values apply.
    public var observationTime: Double

    public init(airQualityIndex: Int, gramsPerCubicMeter: [Double?], observationTime: Double) {
        self.airQualityIndex = airQualityIndex
        self.gramsPerCubicMeter = gramsPerCubicMeter
        self.observationTime = observationTime
    }

    /// `/data/2.5/air_pollution` for one place; the endpoint takes no units or language.
    public static func request(latitude: Double, longitude: Double) -> APIRequest {
        APIRequest(
            path: "/data/2.5/air_pollution", query: [.init("lat", String(latitude)), .init("lon", String(longitude))])
    }
}

/// Decodes a `/data/2.5/air_pollution` body; a negative or absurd concentration or
/// an index outside 1...5 is a `decode` failure, like any broken answer.
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
        let list = try root.requireObject().list("list")
        guard let latest = list.first else { throw FieldError(reason: "`list` is empty: no measurement reported") }
        return try item(latest)
    }

    /// One hour of a `list`: the current answer's, or one of the forecast's.
    static func item(_ entry: Fields) throws(FieldError) -> AirPollution {
        let index = try entry.object("main").number("aqi", 1...5)
        guard index == index.rounded() else {
            throw FieldError(reason: "`\(entry.path).main.aqi` = \(index) is not a whole number")
        }
        let components = try entry.object("components")
        var concentrations: [Double?] = []
        for pollutant in AirPollution.pollutants {
            concentrations.append(
                try components.optionalNumber(pollutant, limit(pollutant)).map { WeatherDecoder.shift($0, by: -6) })
        }
        return AirPollution(
            airQualityIndex: Int(index),
            gramsPerCubicMeter: concentrations,
            observationTime: try entry.number("dt", 1...1e11)
        )
    }
}
