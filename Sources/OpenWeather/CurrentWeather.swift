/// The current weather at one place, in Prometheus base units (metres, pascals,
/// ratios, seconds since the epoch); converted once, where the JSON is decoded.
/// Nil where the answer gave no usable value (see the decoders' field policies):
/// its series are then left out, never shown as a number nobody measured.
public struct CurrentWeather: Sendable, Equatable {
    public struct Condition: Sendable, Equatable {
        /// OpenWeather's condition code: 2xx thunderstorm ... 800 clear, 80x clouds.
        public var id: Int
        public var main: String
        public var description: String
        public var icon: String
    }

    public var temperatureCelsius: Double
    public var feelsLikeCelsius: Double?
    /// Nil from One Call, which reports no spread.
    public var temperatureMinCelsius: Double?
    public var temperatureMaxCelsius: Double?
    public var humidityRatio: Double?
    /// At sea level.
    public var pressurePascals: Double?
    public var groundLevelPressurePascals: Double?
    public var windSpeedMetersPerSecond: Double?
    public var windGustMetersPerSecond: Double?
    /// Where the wind comes from, meteorological degrees.
    public var windDirectionDegrees: Double?
    public var cloudinessRatio: Double?
    public var visibilityMeters: Double?
    /// Zero when OpenWeather leaves the `rain` object out (absent means no rain); nil when the object
    /// is there without this amount.
    public var rain1hMeters: Double?
    public var rain3hMeters: Double?
    public var snow1hMeters: Double?
    public var snow3hMeters: Double?
    /// Nil during polar day and night.
    public var sunrise: Double?
    public var sunset: Double?
    /// When OpenWeather computed the data (`dt`).
    public var observationTime: Double
    public var timezoneOffsetSeconds: Double?
    /// `weather[0]`; nil when the answer has no usable primary condition.
    public var primaryCondition: Condition?
    /// `weather[1...]` ("mist" beside "shower rain"), in the answer's order.
    public var secondaryConditions: [Condition]
    /// "" far from any city.
    public var cityName: String
    /// Nil over the ocean.
    public var country: String?
    /// The answer's `coord` (it may be snapped); nil when not given.
    public var latitude: Double?
    public var longitude: Double?
    /// What the answer lacked.
    public var gaps = AnswerGaps()
}
