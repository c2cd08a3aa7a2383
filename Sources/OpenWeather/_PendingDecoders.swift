// Temporary: the shapes the decoders branch delivers; deleted when it is merged.
public struct AirPollution: Sendable, Equatable {
    public static let pollutants: [String] = ["co", "nh3", "no", "no2", "o3", "pm10", "pm2_5", "so2"]
    public var airQualityIndex: Int
    public var gramsPerCubicMeter: [Double?]
    public var observationTime: Double
    public static func request(latitude: Double, longitude: Double) -> APIRequest {
        APIRequest(path: "/data/2.5/air_pollution", query: [.init("lat", String(latitude)), .init("lon", String(longitude))])
    }
}
public enum AirPollutionDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> AirPollution { throw .decode("pending") }
}
public enum PlaceQuery: Sendable, Equatable, CustomStringConvertible {
    case name(String)
    case zip(String)
    public var description: String {
        switch self {
        case .name(let text): text
        case .zip(let text): "zip:" + text
        }
    }
}
public struct Place: Sendable, Equatable {
    public var name: String
    public var state: String?
    public var country: String
    public var latitude: Double
    public var longitude: Double
}
public enum Geocoding {
    public static func request(_ query: PlaceQuery) -> APIRequest { APIRequest(path: "/geo/1.0/direct", query: []) }
    public static func decode(_ body: [UInt8], for query: PlaceQuery) throws(OpenWeatherError) -> [Place] { [] }
}
