import Glibc

/// Plausible hourly air quality for any place: traffic pollutants (CO, NO, NO₂,
/// particles) peak in the morning and evening rush hours of local solar time,
/// ozone builds in the afternoon sun, multi-day stagnation spells make every
/// pollutant worse for a while, and some places are dirtier than others. The
/// index follows OpenWeather's table. Deterministic for a given place and hour.
enum AirPollutionModel {
    struct Reading {
        /// 1 (good) to 5 (very poor).
        var index: Int
        /// µg/m³, in the order OpenWeather writes `components`.
        var components: [(name: String, value: Double)]
        /// The start of the hour the values are for.
        var observationTime: Double
    }

    static func reading(latitude: Double, longitude: Double, at time: Double) -> Reading {
        let place = Places.near(latitude: latitude, longitude: longitude)
        let seed = WeatherModel.seed(latitude: latitude, longitude: longitude) + 31
        let hourStart = (time / 3600).rounded(.down) * 3600
        let hour = WeatherModel.solarHour(at: hourStart, longitude: longitude).rounded(.down)
        let traffic = (7...10).contains(hour) || (17...20).contains(hour) ? 2.0 : (1...5).contains(hour) ? 0.6 : 1.0
        let sunshine = max(0, cos(2 * .pi * (hour - 15) / 24))
        let stagnation = 1 + 0.45 * WeatherModel.wave(seed, hourStart, 86_400 * 3.3)
        let dirt = place.pollution * stagnation
        let noise = { (salt: Double) in 0.8 + 0.4 * WeatherModel.unitHash(seed + salt, hourStart) }

        let fine = 8 * dirt * (0.55 + 0.45 * traffic) * noise(1)
        let components = [
            ("co", 160 + 120 * dirt * traffic * noise(2)),
            ("no", 0.6 * dirt * traffic * traffic * noise(3)),
            ("no2", 16 * dirt * traffic * noise(4)),
            // Sunlight makes ozone; rush-hour NO eats it.
            ("o3", (25 + 60 * sunshine) * stagnation * noise(5) / (0.7 + 0.3 * traffic)),
            ("so2", 3 * dirt * noise(6)),
            ("pm2_5", fine),
            ("pm10", fine * (1.25 + 0.5 * WeatherModel.unitHash(seed + 7, hourStart))),
            ("nh3", (0.4 + 0.8 * place.pollution) * noise(8)),
        ].map { (name: $0.0, value: $0.1.rounded(to: 2)) }
        return Reading(index: index(components), components: components, observationTime: hourStart)
    }

    /// The forecast's hours: the model itself from the current hour on, so the forecast sees the
    /// same rush hours and stagnation spells the current answers will report.
    static let forecastHours = 96

    static func forecast(latitude: Double, longitude: Double, at time: Double) -> [Reading] {
        let hourStart = (time / 3600).rounded(.down) * 3600
        return (0..<forecastHours).map {
            reading(latitude: latitude, longitude: longitude, at: hourStart + Double($0) * 3600)
        }
    }

    /// The history's hours: every hour from the one at or after `start` to `end`, inclusive (the
    /// fixture's request of 24 hours answers 24 items), from the model that answered live then.
    /// At most a year: longer ranges are the client's to split.
    static func history(latitude: Double, longitude: Double, from start: Double, to end: Double) -> [Reading] {
        let first = (start / 3600).rounded(.up) * 3600
        guard end >= first else { return [] }
        let count = min(Int((end - first) / 3600) + 1, 366 * 24)
        return (0..<count).map { reading(latitude: latitude, longitude: longitude, at: first + Double($0) * 3600) }
    }

    /// OpenWeather's breakpoints (µg/m³) from "Good" to "Poor"; at or above the last, "Very poor".
    private static let breakpoints: [String: [Double]] = [
        "so2": [20, 80, 250, 350],
        "no2": [40, 70, 150, 200],
        "pm10": [20, 50, 100, 200],
        "pm2_5": [10, 25, 50, 75],
        "o3": [60, 100, 140, 180],
        "co": [4400, 9400, 12400, 15400],
    ]

    /// The worst pollutant decides, as in OpenWeather's table.
    static func index(_ components: [(name: String, value: Double)]) -> Int {
        components.map { component in
            guard let limits = breakpoints[component.name] else { return 1 }
            return 1 + limits.filter { component.value >= $0 }.count
        }.max() ?? 1
    }
}
