import Testing

@testable import OpenWeather

/// Each scale's sub-indices at both sides of every breakpoint, by hand from the published tables,
/// and the highest-wins index of a real answer.
@Suite struct AirQualityScaleTests {
    /// (concentration in the table's unit, index): the last value of each row and the first of the
    /// next (after truncation to the table's precision), and past the table's end.
    @Test(
        arguments: [
            (
                "pm2_5",
                [
                    (0, 0), (9, 50), (9.1, 51), (35.4, 100), (35.5, 101), (55.4, 150), (55.5, 151), (125.4, 200),
                    (125.5, 201),
                    (225.4, 300), (225.5, 301), (325.4, 500), (325.5, 500),
                ]
            ),
            (
                "pm10",
                [
                    (0, 0), (54, 50), (55, 51), (154, 100), (155, 101), (254, 150), (255, 151), (354, 200), (355, 201),
                    (424, 300),
                    (425, 301), (604, 500), (605, 500),
                ]
            ),
            // ppb: the 8-hour table to 0.200 ppm, 300 up to the 1-hour table's 0.405 ppm.
            (
                "o3",
                [
                    (0, 0), (54, 50), (55, 51), (70, 100), (71, 101), (85, 150), (86, 151), (105, 200), (106, 201),
                    (200, 300), (201, 300),
                    (404, 300), (405, 301), (604, 500), (605, 500),
                ]
            ),
            // ppm.
            (
                "co",
                [
                    (0, 0), (4.4, 50), (4.5, 51), (9.4, 100), (9.5, 101), (12.4, 150), (12.5, 151), (15.4, 200),
                    (15.5, 201), (30.4, 300),
                    (30.5, 301), (50.4, 500), (50.5, 500),
                ]
            ),
            // ppb.
            (
                "so2",
                [
                    (0, 0), (35, 50), (36, 51), (75, 100), (76, 101), (185, 150), (186, 151), (304, 200), (305, 201),
                    (604, 300), (605, 301),
                    (1004, 500), (1005, 500),
                ]
            ),
            (
                "no2",
                [
                    (0, 0), (53, 50), (54, 51), (100, 100), (101, 101), (360, 150), (361, 151), (649, 200), (650, 201),
                    (1249, 300),
                    (1250, 301), (2049, 500), (2050, 500),
                ]
            ),
        ] as [(String, [(Double, Double)])])
    func usEPAAtEveryBreakpoint(pollutant: String, edges: [(Double, Double)]) throws {
        let table = try #require(USAQI.pollutant(pollutant))
        for (concentration, index) in edges {
            #expect(table.subIndex(concentration) == index, "\(pollutant) at \(concentration)")
        }
    }

    /// Truncated, not rounded, to the table's precision before the row is found; rounded after.
    @Test func usEPATruncatesThenInterpolates() throws {
        let pm25 = try #require(USAQI.pollutant("pm2_5"))
        #expect(pm25.subIndex(9.09) == 50)
        #expect(pm25.subIndex(35.49) == 100)
        // 20.0: 51 + 49 × (200 − 91) / (354 − 91) = 71.31.
        #expect(pm25.subIndex(20) == 71)
        #expect(try #require(USAQI.pollutant("o3")).subIndex(54.9) == 50)
        #expect(try #require(USAQI.pollutant("co")).subIndex(4.49) == 50)
        // 200 ppb NO₂: 101 + 49 × 99 / 259 = 119.73.
        #expect(try #require(USAQI.pollutant("no2")).subIndex(200) == 120)
        #expect(USAQI.pollutant("nh3") == nil)
        #expect(USAQI.pollutant("no") == nil)
    }

    /// µg/m³ to ppb or ppm at 25 °C and 1 atm: × 24.45 / molar mass.
    @Test func usEPAConvertsGasesAt25Degrees() {
        let epa = AirQualityScale.usEPA
        // O₃ 100 µg/m³ = 50.94 ppb → 50 → 50 × 50 / 54 = 46.3.
        #expect(epa.subIndex("o3", microgramsPerCubicMeter: 100) == 46)
        // NO₂ 100 µg/m³ = 53.14 ppb → 53 → 50; 102 µg/m³ = 54.2 ppb → 54 → 51.
        #expect(epa.subIndex("no2", microgramsPerCubicMeter: 100) == 50)
        #expect(epa.subIndex("no2", microgramsPerCubicMeter: 102) == 51)
        // CO 5000 µg/m³ = 4.364 ppm → 4.3 → 43 × 50 / 44 = 48.9.
        #expect(epa.subIndex("co", microgramsPerCubicMeter: 5000) == 49)
        // SO₂ 100 µg/m³ = 38.16 ppb → 38 → 51 + 49 × 2 / 39 = 53.5.
        #expect(epa.subIndex("so2", microgramsPerCubicMeter: 100) == 54)
        // Particles are in µg/m³ already.
        #expect(epa.subIndex("pm10", microgramsPerCubicMeter: 55) == 51)
    }

    /// (µg/m³, index): below, at and above each grid value; linear, continued above 100.
    @Test(
        arguments: [
            (
                "no2",
                [
                    (0, 0), (40, 20), (50, 25), (60, 30), (90, 45), (100, 50), (150, 62.5), (200, 75), (300, 87.5),
                    (400, 100), (500, 112.5),
                ]
            ),
            (
                "pm10",
                [
                    (20, 20), (25, 25), (30, 30), (45, 45), (50, 50), (70, 62.5), (90, 75), (135, 87.5), (180, 100),
                    (225, 112.5),
                ]
            ),
            (
                "pm2_5",
                [
                    (12, 20), (15, 25), (18, 30), (27, 45), (30, 50), (42.5, 62.5), (55, 75), (82.5, 87.5), (110, 100),
                    (137.5, 112.5),
                ]
            ),
            (
                "o3",
                [
                    (48, 20), (60, 25), (72, 30), (108, 45), (120, 50), (150, 62.5), (180, 75), (210, 87.5), (240, 100),
                    (270, 112.5),
                ]
            ),
            (
                "co",
                [
                    (4000, 20), (5000, 25), (5500, 30), (7000, 45), (7500, 50), (8750, 62.5), (10000, 75),
                    (15000, 87.5), (20000, 100), (25000, 112.5),
                ]
            ),
            (
                "so2",
                [
                    (40, 20), (50, 25), (60, 30), (90, 45), (100, 50), (225, 62.5), (350, 75), (425, 87.5), (500, 100),
                    (575, 112.5),
                ]
            ),
        ] as [(String, [(Double, Double)])])
    func caqiAtEveryGridValue(pollutant: String, values: [(Double, Double)]) throws {
        for (concentration, index) in values {
            let computed = try #require(CAQI.subIndex(pollutant, concentration))
            #expect(abs(computed - index) < 1e-9, "\(pollutant) at \(concentration): \(computed)")
        }
    }

    /// (µg/m³, band): the last value of each band and the first of the next, whole µg/m³.
    @Test(
        arguments: [
            (
                "o3",
                [
                    (0, 1), (33, 1), (34, 2), (66, 2), (67, 3), (100, 3), (101, 4), (120, 4), (121, 5), (140, 5),
                    (141, 6), (160, 6), (161, 7),
                    (187, 7), (188, 8), (213, 8), (214, 9), (240, 9), (241, 10), (1000, 10),
                ]
            ),
            (
                "no2",
                [
                    (67, 1), (68, 2), (134, 2), (135, 3), (200, 3), (201, 4), (267, 4), (268, 5), (334, 5), (335, 6),
                    (400, 6), (401, 7),
                    (467, 7), (468, 8), (534, 8), (535, 9), (600, 9), (601, 10),
                ]
            ),
            (
                "so2",
                [
                    (88, 1), (89, 2), (177, 2), (178, 3), (266, 3), (267, 4), (354, 4), (355, 5), (443, 5), (444, 6),
                    (532, 6), (533, 7),
                    (710, 7), (711, 8), (887, 8), (888, 9), (1064, 9), (1065, 10),
                ]
            ),
            (
                "pm2_5",
                [
                    (11, 1), (12, 2), (23, 2), (24, 3), (35, 3), (36, 4), (41, 4), (42, 5), (47, 5), (48, 6), (53, 6),
                    (54, 7), (58, 7),
                    (59, 8), (64, 8), (65, 9), (70, 9), (71, 10),
                ]
            ),
            (
                "pm10",
                [
                    (16, 1), (17, 2), (33, 2), (34, 3), (50, 3), (51, 4), (58, 4), (59, 5), (66, 5), (67, 6), (75, 6),
                    (76, 7), (83, 7),
                    (84, 8), (91, 8), (92, 9), (100, 9), (101, 10),
                ]
            ),
        ] as [(String, [(Double, Double)])])
    func daqiAtEveryBand(pollutant: String, bands: [(Double, Double)]) {
        for (concentration, band) in bands {
            #expect(DAQI.subIndex(pollutant, concentration) == band, "\(pollutant) at \(concentration)")
        }
    }

    @Test func daqiRoundsToWholeMicrograms() {
        #expect(DAQI.subIndex("pm2_5", 11.49) == 1)
        #expect(DAQI.subIndex("pm2_5", 11.5) == 2)
        #expect(DAQI.subIndex("co", 100_000) == nil, "the DAQI has no carbon monoxide")
    }

    /// Barcelona's answer (co 347.14, no2 31.87, o3 48.99, so2 4.23, pm2_5 16.84, pm10 23.1 µg/m³).
    @Test func theHighestSubIndexIsTheIndex() throws {
        let air = try AirPollutionDecoder.decode(Fixtures.bytes("air-pollution-barcelona.json"))
        // PM2.5 16.8: 51 + 49 × 77 / 263 = 65.3; the others are lower (PM10 21, O₃ 22, NO₂ 15).
        #expect(AirQualityScale.usEPA.index(air.gramsPerCubicMeter) == 65)
        // PM2.5: 25 + 25 × 1.84 / 15 = 28.07, rounded; PM10 23.1, O₃ 20.4, NO₂ 15.9.
        #expect(AirQualityScale.europeanCAQI.index(air.gramsPerCubicMeter) == 28)
        // PM2.5 17 → band 2; O₃ 49 → 2; PM10 23 → 2; NO₂ 32 → 1.
        #expect(AirQualityScale.ukDAQI.index(air.gramsPerCubicMeter) == 2)
        // Only pollutants no scale covers: no index at all.
        let onlyAmmonia: [Double?] = [nil, 1e-6, 2e-6, nil, nil, nil, nil, nil]
        #expect(AirQualityScale.allCases.allSatisfy { $0.index(onlyAmmonia) == nil })
    }
}
