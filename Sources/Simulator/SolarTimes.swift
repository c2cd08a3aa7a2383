import Glibc
import Platform

/// Sunrise and sunset from NOAA's solar equations: within a few minutes of the
/// real times between the polar circles, and nil where the sun does not rise or set.
enum SolarTimes {
    struct Day: Equatable {
        var sunrise: Double?
        var sunset: Double?
    }

    /// For the local calendar day containing `time` at a place `timezoneOffset` seconds east of UTC.
    static func day(containing time: Double, latitude: Double, longitude: Double, timezoneOffset: Double) -> Day {
        let localDayStart = ((time + timezoneOffset) / 86_400).rounded(.down) * 86_400
        let utcMidnight = localDayStart  // 00:00 UTC of the local date; the equations count minutes from it
        let dayOfYear = Self.dayOfYear(utcMidnight)
        let gamma = 2 * Double.pi / 365 * (dayOfYear - 1)
        let equationOfTime =
            229.18
            * (0.000075 + 0.001868 * cos(gamma) - 0.032077 * sin(gamma)
                - 0.014615 * cos(2 * gamma) - 0.040849 * sin(2 * gamma))
        let declination =
            0.006918 - 0.399912 * cos(gamma) + 0.070257 * sin(gamma) - 0.006758 * cos(2 * gamma)
            + 0.000907 * sin(2 * gamma) - 0.002697 * cos(3 * gamma) + 0.00148 * sin(3 * gamma)
        let phi = latitude * .pi / 180
        // 90.833°: the sun's radius and atmospheric refraction.
        let cosHourAngle = cos(90.833 * .pi / 180) / (cos(phi) * cos(declination)) - tan(phi) * tan(declination)
        guard cosHourAngle >= -1, cosHourAngle <= 1 else { return Day(sunrise: nil, sunset: nil) }
        let hourAngle = acos(cosHourAngle) * 180 / .pi
        let sunriseMinutes = 720 - 4 * (longitude + hourAngle) - equationOfTime
        let sunsetMinutes = 720 - 4 * (longitude - hourAngle) - equationOfTime
        return Day(
            sunrise: (utcMidnight + sunriseMinutes * 60).rounded(),
            sunset: (utcMidnight + sunsetMinutes * 60).rounded())
    }

    static func dayOfYear(_ time: Double) -> Double {
        Double(CivilTime(seconds: Int(time.rounded(.down))).dayOfYear)
    }
}
