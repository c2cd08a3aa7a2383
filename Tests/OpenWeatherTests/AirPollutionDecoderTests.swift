import Testing

@testable import OpenWeather

@Suite struct AirPollutionDecoderTests {
    @Test func decodesBarcelonaInGramsPerCubicMeter() throws {
        let air = try AirPollutionDecoder.decode(Fixtures.bytes("air-pollution-barcelona.json"))
        #expect(air.airQualityIndex == 3)
        #expect(air.observationTime == 1_700_147_040)
        // co, nh3, no, no2, o3, pm10, pm2_5, so2: the decimals a person writes, not float noise.
        #expect(
            air.gramsPerCubicMeter == [
                0.00034714, 9.2e-07, 2.77e-06, 3.187e-05, 4.899e-05, 2.31e-05, 1.684e-05, 4.23e-06,
            ])
    }

    @Test func pollutantsAreInByteOrder() {
        #expect(
            AirPollution.pollutants
                == AirPollution.pollutants.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(AirPollution.pollutants.count == 8)
    }

    @Test func halfAMicrogramIsExact() throws {
        let body = #"{"list":[{"main":{"aqi":1},"components":{"co":0.5,"pm2_5":0},"dt":1700000000}]}"#
        let air = try AirPollutionDecoder.decode(Array(body.utf8))
        #expect(air.gramsPerCubicMeter[0] == 5e-07)
        #expect(air.gramsPerCubicMeter[6] == 0)
        // Absent components are unknown, not zero.
        #expect(air.gramsPerCubicMeter.filter { $0 == nil }.count == 6)
    }

    @Test func requestHasCoordinatesAndNoUnits() throws {
        let request = AirPollution.request(latitude: 41.3851, longitude: 2.1734)
        #expect(request.path == "/data/2.5/air_pollution")
        #expect(request.query == [.init("lat", "41.3851"), .init("lon", "2.1734")])
        let client = try OpenWeatherClient(
            configuration: .init(baseURL: "http://127.0.0.1:1", apiKey: "k"), userAgent: "test")
        #expect(client.target(request) == "/data/2.5/air_pollution?lat=41.3851&lon=2.1734&appid=k")
    }

    static let good =
        #"""
        {"coord":{"lon":2.1734,"lat":41.3851},"list":[{"main":{"aqi":3},"components":{"co":347.14,"no":2.77,\#
        "no2":31.87,"o3":48.99,"so2":4.23,"pm2_5":16.84,"pm10":23.1,"nh3":0.92},"dt":1700147040}]}
        """#

    @Test(arguments: [
        ("", "not valid JSON"),
        ("<html>502</html>", "not valid JSON"),
        (String(good.prefix(80)), "not valid JSON"),
        ("[]", "the body is a list, not an object"),
        (#"{"coord":{}}"#, "missing field `list`"),
        (#"{"list":{}}"#, "`list` is an object, not a list"),
        (#"{"list":[]}"#, "`list` is empty"),
        (#"{"list":[3]}"#, "`list[0]` is a number, not an object"),
        (good.replacing(#""aqi":3"#, with: #""aqi":6"#), "`list[0].main.aqi` = 6.0 is outside 1.0...5.0"),
        (good.replacing(#""aqi":3"#, with: #""aqi":0"#), "`list[0].main.aqi` = 0.0 is outside"),
        (good.replacing(#""aqi":3"#, with: #""aqi":2.5"#), "`list[0].main.aqi` = 2.5 is not a whole number"),
        (good.replacing(#""aqi":3"#, with: #""aqi":"3""#), "`list[0].main.aqi` is a string, not a number"),
        (good.replacing(#""main":{"aqi":3},"#, with: ""), "missing field `list[0].main`"),
        (good.replacing(#","dt":1700147040"#, with: ""), "missing field `list[0].dt`"),
        (good.replacing(#""dt":1700147040"#, with: #""dt":"today""#), "`list[0].dt` is a string, not a number"),
        (good.replacing(#""o3":48.99"#, with: #""o3":NaN"#), "not valid JSON"),
    ])
    func rejectsBrokenBodies(body: String, reason: String) {
        #expect {
            try AirPollutionDecoder.decode(Array(body.utf8))
        } throws: { error in
            guard case .decode(let message) = error as? OpenWeatherError else { return false }
            return message.contains(reason)
        }
    }

    /// A pollutant is optional: unusable, its own series goes (noted), the index and the others stay.
    @Test(arguments: [
        (
            good.replacing(#""no2":31.87"#, with: #""no2":-1"#), ["no2"],
            "`list[0].components.no2` = -1.0 is outside 0.0...100000.0"
        ),
        (
            good.replacing(#""pm10":23.1"#, with: #""pm10":1e9"#), ["pm10"],
            "`list[0].components.pm10` = 1000000000.0 is outside"
        ),
        (
            good.replacing(#""co":347.14"#, with: #""co":2000000"#), ["co"],
            "`list[0].components.co` = 2000000.0 is outside 0.0...1000000.0"
        ),
        (
            good.replacing(#""so2":4.23"#, with: #""so2":"4.23""#), ["so2"],
            "`list[0].components.so2` is a string, not a number"
        ),
        (good.replacing(#""so2":4.23"#, with: #""so2":null"#), ["so2"], "absent or null"),
        (good.replacing(#""components":{"#, with: #""parts":{"#), AirPollution.pollutants, "absent or null"),
    ])
    func anUnusablePollutantIsLeftOutAndNoted(body: String, lost: [String], reason: String) throws {
        let reading = try AirPollutionDecoder.decode(Array(body.utf8))
        let whole = try AirPollutionDecoder.decode(Array(Self.good.utf8))
        #expect(reading.airQualityIndex == 3 && reading.observationTime == whole.observationTime)
        for (pollutant, (value, before)) in zip(
            AirPollution.pollutants, zip(reading.gramsPerCubicMeter, whole.gramsPerCubicMeter))
        {
            #expect(value == (lost.contains(pollutant) ? nil : before), "\(pollutant)")
        }
        #expect(reading.gaps.missing == lost.map { "list[].components.\($0)" })
        #expect(reading.gaps.fields.first?.reason.contains(reason) == true)
    }
}
