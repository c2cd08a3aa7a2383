import Glibc

/// The indices people alert on besides the temperature, each by its publisher's formula, from what a
/// reading carries (temperature in °C, relative humidity in %, wind at 10 m in m/s, the dew point where
/// One Call gives it). OpenWeather's own `feels_like` is none of these. Each function answers nil
/// where its publisher gives no value (an input missing or outside the formula's stated domain);
/// `deploy/docs/metrics.md` gives each formula, its domain and its source.
public enum ThermalIndex {
    /// The US National Weather Service heat index, in °C, as the NWS computes it (Weather Prediction
    /// Center, "The Heat Index Equation"): Steadman's simple formula first; where its mean with the
    /// temperature reaches 80 °F, the Rothfusz regression, less the adjustment for humidity under 13 %
    /// between 80 and 112 °F, plus the one for humidity over 85 % between 80 and 87 °F.
    ///
    /// Three edges. Below 80 °F (26.7 °C) the NWS does not use the regression, and the simple formula
    /// falls under the temperature as the air cools (−2.6 °C at 0 °C): there it is the temperature, as
    /// the wind chill is above 10 °C, so a graph stays continuous and never shows heat as cold. Where dry
    /// air takes the index under the temperature, it is the temperature. Past Steadman's data, where
    /// the NWS chart stops (137 °F, 58.3 °C), the regression runs away (506.6 °C at 70 °C and 100 %):
    /// it stops there too, or at the temperature when that is higher.
    public static func heatIndex(temperature celsius: Double, relativeHumidity rh: Double) -> Double? {
        guard celsius.isFinite, rh.isFinite, (0...100).contains(rh) else { return nil }
        let t = celsius * 9 / 5 + 32
        guard t >= 80 else { return celsius }
        let simple = 0.5 * (t + 61 + (t - 68) * 1.2 + rh * 0.094)
        var index = simple
        if (simple + t) / 2 >= 80 {
            index =
                -42.379 + 2.049_015_23 * t + 10.143_331_27 * rh - 0.224_755_41 * t * rh - 0.006_837_83 * t * t
                - 0.054_817_17 * rh * rh + 0.001_228_74 * t * t * rh + 0.000_852_82 * t * rh * rh
                - 0.000_001_99 * t * t * rh * rh
            if rh < 13, t > 80, t < 112 {
                index -= (13 - rh) / 4 * ((17 - abs(t - 95)) / 17).squareRoot()
            } else if rh > 85, t >= 80, t <= 87 {
                index += (rh - 85) / 10 * ((87 - t) / 5)
            }
        }
        return max(celsius, fahrenheitToCelsius(min(index, heatIndexChartTop)))
    }

    /// The highest heat index of the NWS chart, °F: Steadman's data, which the regression was fitted on,
    /// end about there.
    static let heatIndexChartTop = 137.0

    /// Environment Canada's humidex (Masterton and Richardson, 1979): the temperature plus 5/9 of the
    /// vapour pressure above 10 hPa, the vapour pressure from the dew point. Environment Canada reports
    /// it from 20 °C; below that it is computed all the same (and may be under the temperature).
    public static func humidex(temperature celsius: Double, dewPoint: Double) -> Double? {
        guard celsius.isFinite, dewPoint.isFinite, dewPoint <= celsius + 0.5 else { return nil }
        return celsius + 0.5555 * (vapourPressure(atDewPoint: dewPoint) - 10)
    }

    /// The humidex from the relative humidity: the vapour pressure is that share of the saturation
    /// pressure at the temperature, by the same formula, so it equals the one from the dew point.
    public static func humidex(temperature celsius: Double, relativeHumidity rh: Double) -> Double? {
        guard celsius.isFinite, rh.isFinite, rh > 0, rh <= 100 else { return nil }
        return celsius + 0.5555 * (rh / 100 * vapourPressure(atDewPoint: celsius) - 10)
    }

    /// The 2001 wind chill index (Environment Canada and the US NWS; JAG/TI), in °C, wind at 10 m in
    /// km/h. Defined at or below 10 °C with wind of at least 4.8 km/h; elsewhere it is the temperature,
    /// as the published charts treat it.
    public static func windChill(temperature celsius: Double, windSpeed metersPerSecond: Double) -> Double? {
        guard celsius.isFinite, metersPerSecond.isFinite, metersPerSecond >= 0 else { return nil }
        let kmh = metersPerSecond * 3.6
        guard celsius <= 10, kmh >= 4.8 else { return celsius }
        let v = pow(kmh, 0.16)
        return 13.12 + 0.6215 * celsius - 11.37 * v + 0.3965 * celsius * v
    }

    /// Stull's (2011) wet-bulb temperature at sea-level pressure, in °C. Valid for 5–99 % humidity and
    /// −20 to 50 °C (except both cold and very dry, where its error grows past −1 °C); nil outside,
    /// but at 100 %: saturated air cannot cool by evaporation, so its wet bulb is its temperature, exactly.
    public static func wetBulb(temperature celsius: Double, relativeHumidity rh: Double) -> Double? {
        guard celsius.isFinite, rh.isFinite else { return nil }
        if rh == 100 { return celsius }
        guard (5...99).contains(rh), (-20...50).contains(celsius) else { return nil }
        let t = celsius
        return t * atan(0.151_977 * (rh + 8.313_659).squareRoot()) + atan(t + rh) - atan(rh - 1.676_331)
            + 0.003_918_38 * pow(rh, 1.5) * atan(0.023_101 * rh) - 4.686_035
    }

    /// The Australian Bureau of Meteorology's apparent temperature (Steadman 1994, without radiation),
    /// in °C: AT = T + 0.33 e − 0.70 ws − 4.00, e the vapour pressure in hPa, ws the wind at 10 m in m/s.
    public static func apparentTemperature(
        temperature celsius: Double, relativeHumidity rh: Double, windSpeed metersPerSecond: Double
    ) -> Double? {
        guard celsius.isFinite, rh.isFinite, (0...100).contains(rh), metersPerSecond.isFinite, metersPerSecond >= 0
        else { return nil }
        let e = rh / 100 * 6.105 * exp(17.27 * celsius / (237.7 + celsius))
        return celsius + 0.33 * e - 0.70 * metersPerSecond - 4.00
    }

    /// The indices of one reading (the current weather's, or a forecast step's), each nil where its
    /// formula gives none: an input the reading lacks, or outside the formula's domain.
    public struct Values: Sendable, Equatable {
        public var heatIndex: Double?
        /// From the humidity: the answers carry no dew point beside it but One Call's, and the two agree.
        public var humidex: Double?
        public var windChill: Double?
        public var wetBulb: Double?
        public var apparentTemperature: Double?

        /// From a reading's temperature in °C, humidity as a ratio (0 to 1, as readings carry it) and wind
        /// at 10 m in m/s.
        public init(temperature celsius: Double, humidityRatio: Double?, windSpeed: Double?) {
            // The percentage exactly as the answer gave it (0.29 is 29, not 28.999999999999996), so a
            // domain's edge is where the answer put it.
            let rh = humidityRatio.map { WeatherDecoder.shift($0, by: 2) }
            heatIndex = rh.flatMap { ThermalIndex.heatIndex(temperature: celsius, relativeHumidity: $0) }
            humidex = rh.flatMap { ThermalIndex.humidex(temperature: celsius, relativeHumidity: $0) }
            windChill = windSpeed.flatMap { ThermalIndex.windChill(temperature: celsius, windSpeed: $0) }
            wetBulb = rh.flatMap { ThermalIndex.wetBulb(temperature: celsius, relativeHumidity: $0) }
            apparentTemperature = rh.flatMap { rh in
                windSpeed.flatMap {
                    ThermalIndex.apparentTemperature(temperature: celsius, relativeHumidity: rh, windSpeed: $0)
                }
            }
        }
    }

    /// Environment Canada's vapour pressure in hPa at a dew point in °C (5417.7530 from the molecular
    /// weight of water, its latent heat of evaporation and the gas constant).
    static func vapourPressure(atDewPoint celsius: Double) -> Double {
        6.11 * exp(5417.7530 * (1 / 273.16 - 1 / (celsius + 273.15)))
    }

    static func fahrenheitToCelsius(_ fahrenheit: Double) -> Double { (fahrenheit - 32) * 5 / 9 }
}
