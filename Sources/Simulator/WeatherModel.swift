import Glibc

/// Plausible current weather for any place and time: a daily temperature cycle
/// that follows local solar time and the season, humidity moving against it,
/// wind that varies smoothly, clouds and rain in three-hour spells, and real
/// sunrise and sunset times. Deterministic for a given place and time.
struct WeatherModel {
    /// Degrees added to the temperatures of the places they match (`POST /_simulator/weather`): bound
    /// by the handler for the answer it is making, so every endpoint (current, forecast, One Call)
    /// shows the same hotter or colder place.
    @TaskLocal static var shifts: [TemperatureShift] = []

    /// The standard atmosphere's cooling with height, °C per metre.
    static let lapseRate = 0.0065

    struct Reading {
        var temperature, feelsLike, temperatureMin, temperatureMax: Double
        var pressure, groundLevel, humidity: Double
        var windSpeed, windGust, windDirection: Double
        var clouds, visibility: Double
        var rain1h, snow1h: Double
        var conditionID: Int
        var conditionMain, conditionDescription, icon: String
        var sunrise, sunset: Double?
        var observationTime, timezoneOffset: Double
        var place: SimulatedPlace
    }

    static func reading(latitude: Double, longitude: Double, at time: Double) -> Reading {
        let place = Places.near(latitude: latitude, longitude: longitude)
        let seed = Self.seed(latitude: latitude, longitude: longitude)
        let timezoneOffset = Self.timezoneOffset(longitude: longitude)
        let solarHour = Self.solarHour(at: time, longitude: longitude)

        // Three-hour spells of sky: clear, some clouds, overcast, or precipitation.
        let spell = (time / 10_800).rounded(.down)
        let sky = unitHash(seed, spell)
        let raining = sky < 0.18
        let clouds =
            raining
            ? 90 + 10 * unitHash(seed + 1, spell)
            : sky < 0.45
                ? 60 + 40 * unitHash(seed + 2, spell)
                : sky < 0.75
                    ? 11 + 40 * unitHash(seed + 3, spell)
                    : 10 * unitHash(seed + 4, spell)

        let absoluteLatitude = abs(latitude)
        let annualMean = 27 * pow(cos(absoluteLatitude * .pi / 180), 1.2) - 3
        let dayOfYear = SolarTimes.dayOfYear(time)
        let season = cos(2 * .pi * (dayOfYear - 200) / 365.25) * (latitude >= 0 ? 1 : -1)
        let shift = shifts.reduce(0) {
            $0 + ($1.matches(latitude: latitude, longitude: longitude) && time >= ($1.from ?? time) ? $1.celsius : 0)
        }
        let dailyMean = annualMean + 0.15 * absoluteLatitude * season - lapseRate * place.elevation + shift
        let dailySwing = 3 + 4 * (1 - clouds / 100)
        let temperature = (dailyMean + dailySwing * cos(2 * .pi * (solarHour - 15) / 24) + 1.5 * wave(seed, time, 5400))
            .rounded(to: 2)

        let windSpeed = max(0, 3.5 + 2.5 * wave(seed + 5, time, 10_800) + 1.2 * wave(seed + 6, time, 2_200)).rounded(
            to: 2)
        let windGust = (windSpeed * 1.45 + 0.8).rounded(to: 2)
        let windDirection = ((200 + 140 * wave(seed + 7, time, 18_000)).truncatingRemainder(dividingBy: 360) + 360)
            .truncatingRemainder(dividingBy: 360).rounded()
        var humidity = 72 - 2.2 * (temperature - dailyMean) + 6 * wave(seed + 8, time, 7200)
        if raining { humidity = max(humidity, 88) }
        humidity = min(100, max(15, humidity)).rounded()

        let precipitation = raining ? (0.2 + 3 * unitHash(seed + 9, spell)).rounded(to: 2) : 0
        let snowing = raining && temperature < 0.5
        let pressure = (1013 + 9 * wave(seed + 10, time, 86_400 * 2.5) - (raining ? 6 : 0)).rounded()
        let visibility = raining ? (3000 + 6000 * unitHash(seed + 11, spell)).rounded(to: -2) : 10_000

        let sun = SolarTimes.day(
            containing: time, latitude: latitude, longitude: longitude, timezoneOffset: timezoneOffset)
        let daylight = isDaylight(sun, time: time, latitude: latitude, dayOfYear: dayOfYear)
        let condition = Self.condition(
            clouds: clouds, precipitation: precipitation, snowing: snowing, daylight: daylight)

        return Reading(
            temperature: temperature,
            feelsLike: feelsLike(temperature, humidity: humidity, wind: windSpeed).rounded(to: 2),
            temperatureMin: (temperature - 0.4 - unitHash(seed + 12, spell)).rounded(to: 2),
            temperatureMax: (temperature + 0.4 + unitHash(seed + 13, spell)).rounded(to: 2),
            pressure: pressure, groundLevel: pressure - 3, humidity: humidity,
            windSpeed: windSpeed, windGust: windGust, windDirection: windDirection,
            clouds: clouds.rounded(), visibility: visibility,
            rain1h: snowing ? 0 : precipitation, snow1h: snowing ? precipitation : 0,
            conditionID: condition.id, conditionMain: condition.main, conditionDescription: condition.description,
            icon: condition.icon,
            sunrise: sun.sunrise, sunset: sun.sunset,
            observationTime: (time / 60).rounded(.down) * 60, timezoneOffset: timezoneOffset, place: place)
    }

    /// The same numbers for the same place (to 0.001°), different ones elsewhere.
    static func seed(latitude: Double, longitude: Double) -> Double {
        (latitude * 1000).rounded() * 7919 + (longitude * 1000).rounded() * 104_729
    }

    /// Seconds east of UTC: the nearest hour of the sun's.
    static func timezoneOffset(longitude: Double) -> Double { (longitude / 15).rounded() * 3600 }

    /// 0..<24, noon when the sun is highest.
    static func solarHour(at time: Double, longitude: Double) -> Double {
        ((time / 3600 + longitude / 15).truncatingRemainder(dividingBy: 24) + 24).truncatingRemainder(dividingBy: 24)
    }

    private static func isDaylight(_ sun: SolarTimes.Day, time: Double, latitude: Double, dayOfYear: Double) -> Bool {
        if let sunrise = sun.sunrise, let sunset = sun.sunset { return time >= sunrise && time < sunset }
        // Polar day in local summer, polar night in winter.
        let northernSummer = dayOfYear > 80 && dayOfYear < 266
        return (latitude >= 0) == northernSummer
    }

    private static func condition(
        clouds: Double, precipitation: Double, snowing: Bool, daylight: Bool
    )
        -> (id: Int, main: String, description: String, icon: String)
    {
        let suffix = daylight ? "d" : "n"
        if precipitation > 0 {
            if snowing {
                return precipitation < 1
                    ? (600, "Snow", "light snow", "13" + suffix) : (601, "Snow", "snow", "13" + suffix)
            }
            return precipitation < 1
                ? (500, "Rain", "light rain", "10" + suffix) : (501, "Rain", "moderate rain", "10" + suffix)
        }
        switch clouds {
        case ..<11: return (800, "Clear", "clear sky", "01" + suffix)
        case ..<25: return (801, "Clouds", "few clouds", "02" + suffix)
        case ..<51: return (802, "Clouds", "scattered clouds", "03" + suffix)
        case ..<85: return (803, "Clouds", "broken clouds", "04" + suffix)
        default: return (804, "Clouds", "overcast clouds", "04" + suffix)
        }
    }

    /// Wind chill in the cold and wind, a humidity bump in the heat.
    private static func feelsLike(_ temperature: Double, humidity: Double, wind: Double) -> Double {
        if temperature <= 10, wind > 1.3 {
            let kmh = pow(wind * 3.6, 0.16)
            return 13.12 + 0.6215 * temperature - 11.37 * kmh + 0.3965 * temperature * kmh
        }
        if temperature >= 26 { return temperature + (humidity - 40) * 0.08 }
        return temperature - wind * 0.2
    }

    /// A smooth value in -1...1 with the given period, phase-shifted per place.
    static func wave(_ seed: Double, _ time: Double, _ period: Double) -> Double {
        let phase = unitHash(seed, 0) * 2 * .pi
        return 0.7 * sin(2 * .pi * time / period + phase) + 0.3 * sin(2 * .pi * time / (period * 0.37) + phase * 1.7)
    }

    /// A well-mixed number in 0..<1 from two inputs.
    static func unitHash(_ a: Double, _ b: Double) -> Double {
        var x =
            UInt64(bitPattern: Int64(a)) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: Int64(b))
            &* 0xC2B2_AE3D_27D4_EB4F
        x ^= x >> 33
        x = x &* 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        return Double(x >> 11) / Double(1 << 53)
    }
}

extension Double {
    /// Rounded to `places` decimals (negative: to tens, hundreds...), as OpenWeather reports.
    func rounded(to places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}

/// A place made hotter or colder by hand, for demos and drills.
struct TemperatureShift: Sendable, Equatable {
    /// Only this latitude (to 0.01°, as faults match); nil: every latitude.
    var latitude: Double?
    /// Only this longitude too, for two places at one latitude; nil: every longitude.
    var longitude: Double? = nil
    var celsius: Double
    /// Only the times at least this many seconds after the answer is made: a spell only forecasts
    /// have, which never arrives (the current weather and the past stay as they were); nil: all times.
    var ahead: Double? = nil
    /// `ahead` as a time, set for the answer being made (`at(now:)`).
    private(set) var from: Double? = nil

    /// This shift for an answer made at `now`.
    func at(now: Double) -> TemperatureShift {
        var shift = self
        shift.from = ahead.map { now + $0 }
        return shift
    }

    /// Whether the shift applies at a place; a coordinate not given (nil) matches any.
    func matches(latitude requested: Double?, longitude requestedLongitude: Double? = nil) -> Bool {
        func near(_ own: Double?, _ asked: Double?) -> Bool {
            guard let own, let asked else { return true }
            return abs(own - asked) < 0.005
        }
        return near(latitude, requested) && near(longitude, requestedLongitude)
    }

    /// The most a place's shifts may total, either way.
    static let maxCelsius = 100.0

    /// Made for the same place (the same coordinates given, each within 0.005°) and hours ahead: the
    /// two add up to one.
    func isSamePlace(as other: TemperatureShift) -> Bool {
        ahead == other.ahead && (latitude == nil) == (other.latitude == nil)
            && (longitude == nil) == (other.longitude == nil)
            && matches(latitude: other.latitude, longitude: other.longitude)
    }

    /// Made for one place (by latitude, longitude or both), not for every place.
    var isLocal: Bool { latitude != nil || longitude != nil }
}
