/// The current weather at one place, in Prometheus base units (metres, pascals,
/// ratios, seconds since the epoch); converted once, where the JSON is decoded.
public struct CurrentWeather: Sendable, Equatable {
    public struct Condition: Sendable, Equatable {
        /// OpenWeather's condition code: 2xx thunderstorm ... 800 clear, 80x clouds.
        public var id: Int
        public var main: String
        public var description: String
        public var icon: String
    }

    public var temperatureCelsius: Double
    public var feelsLikeCelsius: Double
    /// Nil from One Call, which reports no spread.
    public var temperatureMinCelsius: Double?
    public var temperatureMaxCelsius: Double?
    public var humidityRatio: Double
    /// At sea level.
    public var pressurePascals: Double
    public var groundLevelPressurePascals: Double?
    public var windSpeedMetersPerSecond: Double
    public var windGustMetersPerSecond: Double?
    /// Where the wind comes from, meteorological degrees.
    public var windDirectionDegrees: Double
    public var cloudinessRatio: Double
    public var visibilityMeters: Double?
    /// Zero when OpenWeather leaves the object out: absent means no rain.
    public var rain1hMeters: Double
    public var snow1hMeters: Double
    /// Nil during polar day and night.
    public var sunrise: Double?
    public var sunset: Double?
    /// When OpenWeather computed the data (`dt`).
    public var observationTime: Double
    public var timezoneOffsetSeconds: Double
    /// The primary condition first.
    public var conditions: [Condition]
    /// "" far from any city.
    public var cityName: String
    /// Nil over the ocean.
    public var country: String?
    public var latitude: Double
    public var longitude: Double

    public var primaryCondition: Condition? { conditions.first }
}
