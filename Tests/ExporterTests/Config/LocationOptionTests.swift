import Glibc
import TestSupport
import Testing

@testable import Exporter

/// Issues 49 and 50: a place's alert options take each quantity's own unit, a repeated key is refused,
/// a typo names the option meant, and the landing page says every threshold a place has.
@Suite struct LocationOptionTests {
    /// Each value may end in its quantity's unit, in either case and after spaces, as temperatures
    /// take C and F; the same text is read from `--location`, the flags and the file.
    @Test(arguments: [
        ("rain=20mm", AlertThresholds(hysteresisCelsius: 1, rainMeters: 0.02)),
        ("rain=1.1 MM", AlertThresholds(hysteresisCelsius: 1, rainMeters: 0.0011)),
        ("gust=20m/s", AlertThresholds(hysteresisCelsius: 1, gustMetersPerSecond: 20, rainMeters: 0.02)),
        ("gust=20 M/S", AlertThresholds(hysteresisCelsius: 1, gustMetersPerSecond: 20, rainMeters: 0.02)),
        ("hysteresis=2C", AlertThresholds(hysteresisCelsius: 2, rainMeters: 0.02)),
        ("hysteresis=0.5°C", AlertThresholds(hysteresisCelsius: 0.5, rainMeters: 0.02)),
        // A margin is a difference: 1.8 °F is 1 °C.
        ("hysteresis=1.8F", AlertThresholds(hysteresisCelsius: 1, rainMeters: 0.02)),
    ])
    func unitsOfEachQuantityAreTaken(option: String, thresholds: AlertThresholds) throws {
        let config = try load(["--location", "X=1,2," + option])
        let read = config.thresholds(for: config.locations[0])
        #expect(read.rainMeters == thresholds.rainMeters && read.gustMetersPerSecond == thresholds.gustMetersPerSecond)
        #expect(abs((read.hysteresisCelsius ?? -1) - thresholds.hysteresisCelsius!) < 1e-12, "\(read)")
    }

    @Test func theFlagsAndTheFileTakeTheUnitsToo() throws {
        let flags = try load([
            "--location", "X=1,2", "--alerts.rain-millimeters=30mm", "--alerts.wind-gust-meters-per-second=25m/s",
        ])
        let fromFlags = flags.thresholds(for: flags.locations[0])
        #expect(fromFlags.rainMeters == 0.03 && fromFlags.gustMetersPerSecond == 25, "\(fromFlags)")
        let file = temporaryFile(
            """
            locations:
              - {name: A, latitude: 1, longitude: 2, alerts: {rain_millimeters: 20mm, hysteresis_celsius: 2C}}
            """, suffix: ".yml")
        defer { unlink(file) }
        let fromFile = try load(["--config.file", file])
        let read = fromFile.thresholds(for: fromFile.locations[0])
        #expect(read.rainMeters == 0.02 && read.hysteresisCelsius == 2, "\(read)")
    }

    /// Another quantity's unit, or one the key does not take, is refused with the forms it takes.
    @Test(arguments: [
        ("X=1,2,rain=2cm", "rain=2cm is not a rain total in mm above 0 and at most 10000, like 20 or 20mm"),
        ("X=1,2,rain=20m/s", "rain=20m/s is not a rain total in mm"),
        ("X=1,2,gust=72km/h", "gust=72km/h is not a gust speed in m/s above 0 and at most 200, like 20 or 20m/s"),
        ("X=1,2,gust=20mm", "gust=20mm is not a gust speed in m/s"),
        ("X=1,2,hysteresis=1K", "hysteresis=1K is not a margin in °C from 0 to 50, like 1, 0.5 or 1C, or one in °F"),
        ("X=1,2,hysteresis=91F", "hysteresis=91F is not a margin in °C"),
        ("X=1,2,rain=mm", "rain=mm is not a rain total in mm"),
    ])
    func otherUnitsAreRefused(location: String, message: String) {
        let text = loadError(["--location", location])
        #expect(text.contains(message), "\(text)")
    }

    /// A key given twice is refused, naming it, whatever the values: the second would win silently.
    @Test(arguments: [
        ("X=1,2,heat_index=95F,heat_index=20", "heat_index="), ("London,rain=20,gust=3,rain=20", "rain="),
        ("X=1,2,alerts=off,alerts=off", "alerts="),
    ])
    func aRepeatedKeyIsRefused(location: String, key: String) {
        let text = loadError(["--location", location])
        #expect(text.contains("\"\(location)\" gives \(key) twice: keep one value for it"), "\(text)")
    }

    /// A typo names the option meant, and only it; a word near none lists them all.
    @Test(arguments: [
        ("heatindex=40", "heat_index="), ("windchill=-30", "wind_chill="), ("wetbulb=30", "wet_bulb="),
        ("gusts=20", "gust="), ("Above=35", "above="), ("alert=off", "alerts="),
    ])
    func aTypoNamesTheNearestOption(option: String, meant: String) {
        let text = loadError(["--location", "X=1,2," + option])
        #expect(text.contains("\"\(option)\" is not an option (did you mean \(meant)?)"), "\(text)")
        #expect(!text.contains("below="), "\(text)")
    }

    @Test func aWordNearNoOptionListsThemAndAlertsTakesOnlyOff() {
        let far = loadError(["--location", "X=1,2,min=3"])
        #expect(far.contains("\"min=3\" is not an option; use above=, below=, hysteresis="), "\(far)")
        let on = loadError(["--location", "X=1,2,alerts=on"])
        #expect(on.contains("alerts= takes only off (alerts=off), not \"on\""), "\(on)")
    }

    /// The landing page's column: every threshold a place has, the indices' too, each in the unit it was
    /// written in, a value never apart from its unit.
    @Test func theSummaryHasEveryThresholdInItsUnit() throws {
        let config = try load([
            "--location", "NYC=40.71,-74.01,heat_index=103F,wet_bulb=28,wind_chill=-22F", "--location",
            "All=1,2,above=35,below=0C,gust=20,rain=20mm,heat_index=40,wet_bulb=30.5,wind_chill=-30",
        ])
        let nyc = config.thresholds(for: config.locations[0]).summary(off: false)
        #expect(
            nyc
                == """
                rain 20\u{A0}mm, heat index above 103\u{A0}°F, wet bulb above 28\u{A0}°C, wind chill below \
                -22\u{A0}°F
                """, "\(nyc)")
        let all = config.thresholds(for: config.locations[1]).summary(off: false)
        #expect(
            all
                == """
                above 35\u{A0}°C, below 0\u{A0}°C, gusts 20\u{A0}m/s, rain 20\u{A0}mm, heat index above 40\u{A0}°C, \
                wet bulb above 30.5\u{A0}°C, wind chill below -30\u{A0}°C
                """, "\(all)")
    }
}
