import OpenWeather
import Testing

@testable import Simulator

@Suite struct AirPollutionModelTests {
    /// 2024-07-15 00:00 UTC.
    static let midnight = 1_721_001_600.0

    static func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    static func value(_ reading: AirPollutionModel.Reading, _ name: String) -> Double {
        reading.components.first { $0.name == name }!.value
    }

    @Test func renderedJSONDecodesWithOurDecoderToTheSameNumbers() throws {
        for hour in stride(from: 0.0, to: 24 * 20, by: 1) {
            let reading = AirPollutionModel.reading(
                latitude: 41.3888, longitude: 2.159, at: Self.midnight + hour * 3600 + 1234)
            let air = try AirPollutionDecoder.decode(
                Array(AirPollutionJSON.render(reading, latitude: 41.3888, longitude: 2.159).utf8))
            #expect(air.airQualityIndex == reading.index)
            #expect(air.observationTime == Self.midnight + hour * 3600)
            for (pollutant, grams) in zip(AirPollution.pollutants, air.gramsPerCubicMeter) {
                #expect(grams == (Self.value(reading, pollutant) * 1e6).rounded() / 1e12)
            }
        }
    }

    @Test func deterministicWithinTheHour() {
        let first = AirPollutionModel.reading(latitude: 51.5074, longitude: -0.1278, at: Self.midnight + 60)
        let later = AirPollutionModel.reading(latitude: 51.5074, longitude: -0.1278, at: Self.midnight + 3000)
        #expect(first.components.map(\.value) == later.components.map(\.value))
        #expect(first.index == later.index)
        let nextHour = AirPollutionModel.reading(latitude: 51.5074, longitude: -0.1278, at: Self.midnight + 3600)
        #expect(first.components.map(\.value) != nextHour.components.map(\.value))
    }

    /// London's solar time is UTC: rush hours at 8:00 and 18:00 against the small hours at 3:00.
    @Test func trafficHoursAreWorse() {
        var rush: [Double] = []
        var night: [Double] = []
        var rushFine: [Double] = []
        var nightFine: [Double] = []
        for day in 0..<30 {
            let base = Self.midnight + Double(day) * 86_400
            for hour in [8.0, 18] {
                let reading = AirPollutionModel.reading(latitude: 51.5074, longitude: -0.1278, at: base + hour * 3600)
                rush.append(Self.value(reading, "no2"))
                rushFine.append(Self.value(reading, "pm2_5"))
            }
            let reading = AirPollutionModel.reading(latitude: 51.5074, longitude: -0.1278, at: base + 3 * 3600)
            night.append(Self.value(reading, "no2"))
            nightFine.append(Self.value(reading, "pm2_5"))
        }
        #expect(Self.mean(rush) > 2.5 * Self.mean(night))
        #expect(Self.mean(rushFine) > 1.5 * Self.mean(nightFine))
    }

    @Test func someCitiesAreDirtierAndMagnitudesAreReal() {
        func monthly(
            _ latitude: Double, _ longitude: Double
        ) -> (pm: Double, no2: Double, co: Double, o3: Double, index: Double) {
            var pm: [Double] = []
            var no2: [Double] = []
            var co: [Double] = []
            var o3: [Double] = []
            var index: [Double] = []
            for hour in stride(from: 0.0, to: 24 * 30, by: 1) {
                let reading = AirPollutionModel.reading(
                    latitude: latitude, longitude: longitude, at: Self.midnight + hour * 3600)
                pm.append(Self.value(reading, "pm2_5"))
                no2.append(Self.value(reading, "no2"))
                co.append(Self.value(reading, "co"))
                o3.append(Self.value(reading, "o3"))
                index.append(Double(reading.index))
            }
            return (Self.mean(pm), Self.mean(no2), Self.mean(co), Self.mean(o3), Self.mean(index))
        }
        let athens = monthly(37.9838, 23.7275)
        let longyearbyen = monthly(78.2232, 15.6356)
        let barcelona = monthly(41.3888, 2.159)
        #expect(athens.pm > 5 * longyearbyen.pm)
        #expect(athens.index > longyearbyen.index)
        // The fixture's Barcelona hour: co 347, no2 32, o3 49, pm2_5 17 µg/m³.
        #expect((150...600).contains(barcelona.co))
        #expect((8...60).contains(barcelona.no2))
        #expect((20...120).contains(barcelona.o3))
        #expect((5...40).contains(barcelona.pm))
    }

    @Test func everyIndexFromGoodToPoorOccursAcrossThePlaces() {
        var seen = Set<Int>()
        for place in Places.all {
            for hour in stride(from: 0.0, to: 24 * 30, by: 1) {
                seen.insert(
                    AirPollutionModel.reading(
                        latitude: place.latitude, longitude: place.longitude, at: Self.midnight + hour * 3600
                    ).index)
            }
        }
        #expect(seen.isSuperset(of: [1, 2, 3, 4]))
        #expect(seen.isSubset(of: Set(1...5)))
    }

    @Test func indexFollowsOpenWeathersTable() {
        #expect(AirPollutionModel.index([("pm2_5", 9.99), ("no2", 39), ("co", 300)]) == 1)
        #expect(AirPollutionModel.index([("pm2_5", 10), ("no2", 39)]) == 2)
        #expect(AirPollutionModel.index([("pm2_5", 5), ("no2", 150)]) == 4)
        #expect(AirPollutionModel.index([("o3", 180), ("nh3", 1000)]) == 5)
        #expect(AirPollutionModel.index([("no", 500)]) == 1)
    }
}

@Suite struct PlacesTests {
    @Test func namesMatchAsOpenWeatherDoes() {
        let london = Places.matching("London")
        #expect(london.map { $0.country } == ["GB", "CA", "US"])
        #expect(london.first?.state == "England")
        #expect(Places.matching("  london , us").map { $0.state } == ["Ohio"])
        #expect(Places.matching("LONDON,GB").count == 1)
        #expect(Places.matching("Springfield,IL,US").map { $0.state } == ["Illinois"])
        #expect(Places.matching("springfield,illinois,us").map { $0.latitude } == [39.7817])
        #expect(Places.matching("Springfield").count == 3)
        #expect(Places.matching("New York").first?.state == "New York")
        #expect(Places.matching("Mountain View,US").first?.state == "California")
        #expect(Places.matching("Paris,FR").map { $0.longitude } == [2.3522])
        #expect(Places.matching("Xyzzyville").isEmpty)
        #expect(Places.matching("London,XX").isEmpty)
        for name in [
            "Paris", "Tokyo", "Sydney", "Barcelona", "Zocca", "Longyearbyen", "Athens", "Berlin", "Madrid", "Rome",
            "Seville",
        ] {
            #expect(!Places.matching(name).isEmpty, "\(name)")
        }
    }

    @Test func postalCodesDefaultToTheUS() {
        #expect(Places.zip("94040,US")?.place.latitude == 37.3855)
        #expect(Places.zip("94040")?.place.name == "Mountain View")
        #expect(Places.zip("94040,us")?.code == "94040")
        #expect(Places.zip("00000,US") == nil)
        #expect(Places.zip("94040,FR") == nil)
    }

    /// One list: the current weather at every geocoded place carries that place's name.
    @Test func weatherNamesEveryGeocodedPlace() {
        for place in Places.all {
            let reading = WeatherModel.reading(
                latitude: place.latitude, longitude: place.longitude, at: AirPollutionModelTests.midnight)
            #expect(reading.place == place)
        }
        for (_, place) in Places.zips {
            #expect(
                WeatherModel.reading(latitude: place.latitude, longitude: place.longitude, at: 0).place.name
                    == place.name)
        }
    }
}
