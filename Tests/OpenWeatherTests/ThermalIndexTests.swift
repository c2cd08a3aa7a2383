import Glibc
import Testing

@testable import OpenWeather

/// Each index against its publisher's table at the table's precision, inside and at the edges of its
/// domain. Tables are typed as published: the NWS chart in °F by relative humidity, Environment
/// Canada's wind chill chart in °C by wind at 10 m in km/h.
@Suite struct ThermalIndexTests {
    /// The NWS heat index chart (weather.gov), °F: per air temperature, the index at 40, 45, 50 … % humidity.
    static let heatIndexChart: [(temperature: Double, indices: [Double])] = [
        (110, [136]),
        (108, [130, 137]),
        (106, [124, 130, 137]),
        (104, [119, 124, 131, 137]),
        (102, [114, 119, 124, 130, 137]),
        (100, [109, 114, 118, 124, 129, 136]),
        (98, [105, 109, 113, 117, 123, 128, 134]),
        (96, [101, 104, 108, 112, 116, 121, 126, 132]),
        (94, [97, 100, 102, 106, 110, 114, 119, 124, 129, 136]),
        (92, [94, 96, 99, 101, 105, 108, 112, 116, 121, 126, 131]),
        (90, [91, 93, 95, 97, 100, 103, 106, 109, 113, 117, 122, 127, 132]),
        (88, [88, 89, 91, 93, 95, 98, 100, 103, 106, 110, 113, 117, 121]),
        (86, [85, 87, 88, 89, 91, 93, 95, 97, 100, 102, 105, 108, 112]),
        (84, [83, 84, 85, 86, 88, 89, 90, 92, 94, 96, 98, 100, 103]),
        (82, [81, 82, 83, 84, 84, 85, 86, 88, 89, 90, 91, 93, 95]),
        (80, [80, 80, 81, 81, 82, 82, 83, 84, 84, 85, 86, 86, 87]),
    ]

    static func fahrenheit(_ celsius: Double) -> Double { celsius * 9 / 5 + 32 }
    static func celsius(_ fahrenheit: Double) -> Double { (fahrenheit - 32) * 5 / 9 }

    /// The chart is the Rothfusz regression rounded to whole degrees (the regression's stated error is
    /// ±1.3 °F; every cell is within 1 °F of it). Where the NWS algorithm adds its humid adjustment
    /// (80–87 °F above 85 %), the chart leaves it out, so the index is the chart's plus that adjustment.
    @Test func heatIndexFollowsTheNWSChart() throws {
        for (temperature, indices) in Self.heatIndexChart {
            for (column, chart) in indices.enumerated() {
                let humidity = 40 + 5 * Double(column)
                let index = try #require(
                    ThermalIndex.heatIndex(temperature: Self.celsius(temperature), relativeHumidity: humidity))
                let adjustment =
                    humidity > 85 && temperature <= 87 ? (humidity - 85) / 10 * ((87 - temperature) / 5) : 0
                // Where dry air takes the chart under the temperature (81 °F at 82 °F and 40 %), the temperature.
                #expect(
                    abs(Self.fahrenheit(index) - adjustment - max(chart, temperature)) < 1,
                    "\(temperature) °F at \(humidity) %: \(Self.fahrenheit(index)) °F, chart \(chart)")
            }
        }
    }

    /// The Rothfusz regression as the NWS publishes it, °F.
    static func rothfusz(_ t: Double, _ rh: Double) -> Double {
        let linear = -42.379 + 2.049_015_23 * t + 10.143_331_27 * rh - 0.224_755_41 * t * rh
        let squares = -0.006_837_83 * t * t - 0.054_817_17 * rh * rh + 0.001_228_74 * t * t * rh
        return linear + squares + 0.000_852_82 * t * rh * rh - 0.000_001_99 * t * t * rh * rh
    }

    func fahrenheitIndex(_ temperature: Double, _ humidity: Double) throws -> Double {
        Self.fahrenheit(
            try #require(ThermalIndex.heatIndex(temperature: Self.celsius(temperature), relativeHumidity: humidity)))
    }

    /// Below 80 °F the NWS does not use the regression, and the simple formula falls under the air as
    /// it cools (the issue's −2.6 °C at 0 °C): the index is the temperature there, as the wind chill is
    /// above 10 °C, and never under it anywhere.
    @Test func heatIndexIsTheTemperatureBelow80FAndNeverUnderIt() throws {
        for (temperature, humidity) in [(0.0, 50.0), (-10, 70), (-90, 50), (21.1, 50), (26.6, 100), (26.6, 0)] {
            #expect(ThermalIndex.heatIndex(temperature: temperature, relativeHumidity: humidity) == temperature)
        }
        // 80 °F at 40 %: the simple formula's 79.58, its mean with 80 is 79.79: the temperature.
        #expect(abs(try fahrenheitIndex(80, 40) - 80) < 1e-9)
        // 81 °F at 40 %: the regression's 80.65: the temperature; at 60 %, the regression.
        #expect(abs(try fahrenheitIndex(81, 40) - 81) < 1e-9)
        #expect(abs(try fahrenheitIndex(81, 60) - Self.rothfusz(81, 60)) < 1e-9 && Self.rothfusz(81, 60) > 81)
        for temperature in stride(from: -100.0, through: 70, by: 0.5) {
            for humidity in stride(from: 0.0, through: 100, by: 5) {
                let index = try #require(ThermalIndex.heatIndex(temperature: temperature, relativeHumidity: humidity))
                #expect(index >= temperature, "\(temperature) °C at \(humidity) %: \(index) °C")
            }
        }
    }

    /// Past Steadman's data the regression runs away (70 °C at 100 %: 506.6 °C): the index stops at the
    /// top of the NWS chart, 137 °F, or at the temperature when that is higher.
    @Test func heatIndexStopsAtTheChartsTop() throws {
        #expect(abs(try fahrenheitIndex(104, 60) - 137) < 1e-9, "the regression's 144.8")
        #expect(ThermalIndex.heatIndex(temperature: 40, relativeHumidity: 100) == Self.celsius(137))
        #expect(ThermalIndex.heatIndex(temperature: 70, relativeHumidity: 100) == 70)
        #expect(ThermalIndex.heatIndex(temperature: 60, relativeHumidity: 5) == 60)
    }

    @Test func heatIndexAdjustmentsWhereTheNWSAppliesThem() throws {
        // Under 13 % between 80 and 112 °F: less (13 − RH)/4 × √((17 − |T − 95|)/17), which is under
        // the temperature already: the temperature.
        #expect(abs(try fahrenheitIndex(100, 10) - 100) < 1e-6)
        #expect(abs(try fahrenheitIndex(113, 10) - 113) < 1e-6)
        // Over 85 % between 80 and 87 °F: plus (RH − 85)/10 × (87 − T)/5.
        #expect(abs(try fahrenheitIndex(82, 95) - (Self.rothfusz(82, 95) + 1.0 * 1.0)) < 1e-6)
        #expect(abs(try fahrenheitIndex(88, 95) - Self.rothfusz(88, 95)) < 1e-6)
    }

    @Test func heatIndexRefusesWhatIsNotAHumidity() {
        #expect(ThermalIndex.heatIndex(temperature: 30, relativeHumidity: 101) == nil)
        #expect(ThermalIndex.heatIndex(temperature: 30, relativeHumidity: -1) == nil)
        #expect(ThermalIndex.heatIndex(temperature: .nan, relativeHumidity: 50) == nil)
    }

    /// Environment Canada's wind chill calculation chart: per wind at 10 m (km/h), the index at
    /// 5, 0, −5 … −50 °C. Every one of its 192 cells, rounded as published.
    static let windChillChart: [(wind: Double, indices: [Double])] = [
        (5, [4, -2, -7, -13, -19, -24, -30, -36, -41, -47, -53, -58]),
        (10, [3, -3, -9, -15, -21, -27, -33, -39, -45, -51, -57, -63]),
        (15, [2, -4, -11, -17, -23, -29, -35, -41, -48, -54, -60, -66]),
        (20, [1, -5, -12, -18, -24, -30, -37, -43, -49, -56, -62, -68]),
        (25, [1, -6, -12, -19, -25, -32, -38, -44, -51, -57, -64, -70]),
        (30, [0, -6, -13, -20, -26, -33, -39, -46, -52, -59, -65, -72]),
        (35, [0, -7, -14, -20, -27, -33, -40, -47, -53, -60, -66, -73]),
        (40, [-1, -7, -14, -21, -27, -34, -41, -48, -54, -61, -68, -74]),
        (45, [-1, -8, -15, -21, -28, -35, -42, -48, -55, -62, -69, -75]),
        (50, [-1, -8, -15, -22, -29, -35, -42, -49, -56, -63, -69, -76]),
        (55, [-2, -8, -15, -22, -29, -36, -43, -50, -57, -63, -70, -77]),
        (60, [-2, -9, -16, -23, -30, -36, -43, -50, -57, -64, -71, -78]),
        (65, [-2, -9, -16, -23, -30, -37, -44, -51, -58, -65, -72, -79]),
        (70, [-2, -9, -16, -23, -30, -37, -44, -51, -58, -65, -72, -80]),
        (75, [-3, -10, -17, -24, -31, -38, -45, -52, -59, -66, -73, -80]),
        (80, [-3, -10, -17, -24, -31, -38, -45, -52, -60, -67, -74, -81]),
    ]

    @Test func windChillFollowsEnvironmentCanadasChart() throws {
        for (wind, indices) in Self.windChillChart {
            for (column, chart) in indices.enumerated() {
                let temperature = 5 - 5 * Double(column)
                let index = try #require(ThermalIndex.windChill(temperature: temperature, windSpeed: wind / 3.6))
                #expect(index.rounded() == chart, "\(temperature) °C in \(wind) km/h: \(index), chart \(chart)")
            }
        }
    }

    @Test func windChillOutsideItsDomainIsTheTemperature() throws {
        // Above 10 °C, or under 4.8 km/h: the air temperature, as the charts treat it.
        #expect(ThermalIndex.windChill(temperature: 10.5, windSpeed: 20) == 10.5)
        #expect(ThermalIndex.windChill(temperature: -20, windSpeed: 4.7 / 3.6) == -20)
        #expect(ThermalIndex.windChill(temperature: -20, windSpeed: 0) == -20)
        // At both edges, the formula.
        let edge = try #require(ThermalIndex.windChill(temperature: 10, windSpeed: 4.8 / 3.6))
        #expect(abs(edge - (13.12 + 6.215 - 11.37 * pow(4.8, 0.16) + 3.965 * pow(4.8, 0.16))) < 1e-9)
        #expect(ThermalIndex.windChill(temperature: -20, windSpeed: -1) == nil)
    }

    /// Environment Canada's worked values (30 °C with dew points of 15 and 25 °C: 34 and 42) and its
    /// calculator's (28 °C at a dew point of 20: 36), in whole numbers as published.
    @Test(arguments: [(30.0, 15.0, 34.0), (30, 25, 42), (28, 20, 36)])
    func humidexFollowsEnvironmentCanada(temperature: Double, dewPoint: Double, published: Double) throws {
        let humidex = try #require(ThermalIndex.humidex(temperature: temperature, dewPoint: dewPoint))
        #expect(humidex.rounded() == published)
    }

    @Test func humidexFromHumidityEqualsTheOneFromTheDewPoint() throws {
        // At 100 % the dew point is the temperature; at 50 % the vapour pressure is half the saturation.
        let saturated = try #require(ThermalIndex.humidex(temperature: 30, relativeHumidity: 100))
        #expect(abs(saturated - ThermalIndex.humidex(temperature: 30, dewPoint: 30)!) < 1e-9)
        let half = try #require(ThermalIndex.humidex(temperature: 30, relativeHumidity: 50))
        #expect(abs(half - (30 + 0.5555 * (ThermalIndex.vapourPressure(atDewPoint: 30) / 2 - 10))) < 1e-9)
        #expect(ThermalIndex.humidex(temperature: 30, relativeHumidity: 0) == nil)
        #expect(ThermalIndex.humidex(temperature: 30, dewPoint: 35) == nil)
    }

    /// Stull's example (20 °C at 50 %: 13.7 °C) to the paper's 0.1 °C, and its stated domain.
    @Test func wetBulbFollowsStull() throws {
        let example = try #require(ThermalIndex.wetBulb(temperature: 20, relativeHumidity: 50))
        #expect((example * 10).rounded() / 10 == 13.7)
        for (temperature, humidity) in [(-20.0, 5.0), (50, 99), (-20, 99), (50, 5)] {
            #expect(ThermalIndex.wetBulb(temperature: temperature, relativeHumidity: humidity) != nil)
        }
        for (temperature, humidity) in [(-20.1, 50.0), (50.1, 50), (20, 4.9), (20, 99.1)] {
            #expect(ThermalIndex.wetBulb(temperature: temperature, relativeHumidity: humidity) == nil)
        }
        // Nearly saturated air: the wet bulb is near the temperature, within the fit's error (−1 to +0.65 °C).
        let saturated = try #require(ThermalIndex.wetBulb(temperature: 25, relativeHumidity: 99))
        #expect(abs(saturated - 25) < 1)
    }

    /// Saturated air (fog, rain, the deadliest heat) cannot cool by evaporation: at 100 % the wet bulb
    /// is the temperature, exactly, wherever the temperature is; just short of it, Stull's domain holds.
    @Test func wetBulbOfSaturatedAirIsItsTemperature() {
        for temperature in [-40.0, -20, 0, 12.3, 35, 50, 60] {
            #expect(ThermalIndex.wetBulb(temperature: temperature, relativeHumidity: 100) == temperature)
        }
        #expect(ThermalIndex.wetBulb(temperature: 20, relativeHumidity: 99.5) == nil)
        #expect(ThermalIndex.wetBulb(temperature: .nan, relativeHumidity: 100) == nil)
        #expect(ThermalIndex.Values(temperature: 31, humidityRatio: 1, windSpeed: nil).wetBulb == 31)
    }

    /// The Bureau of Meteorology's formula (no table is published): its terms one by one.
    @Test func apparentTemperatureIsTheBureausFormula() throws {
        let calm = try #require(
            ThermalIndex.apparentTemperature(temperature: 30, relativeHumidity: 50, windSpeed: 0))
        let e = 0.5 * 6.105 * exp(17.27 * 30 / (237.7 + 30))
        #expect(abs(calm - (30 + 0.33 * e - 4)) < 1e-9)
        let windy = try #require(
            ThermalIndex.apparentTemperature(temperature: 30, relativeHumidity: 50, windSpeed: 10))
        #expect(abs(calm - windy - 7) < 1e-9)
        #expect(ThermalIndex.apparentTemperature(temperature: 30, relativeHumidity: 50, windSpeed: -1) == nil)
    }
}
