import Glibc
import Platform

/// The simulated `/data/2.5/forecast`: 40 steps 3 hours apart, each the `WeatherModel`'s own
/// reading at the step's time plus an error that grows with the lead time, so the forecast for
/// +3 h is near what the simulator reports 3 hours later. Deterministic for a place and time:
/// the forecast is "recomputed" every 3 hours and its first step is the last 3-hour mark, which
/// is up to 3 hours in the past, as OpenWeather's is.
enum ForecastJSON {
    static let stepSeconds = 10_800.0
    static let steps = 40

    /// The temperature error of a step `lead` seconds after the forecast was made, in ±°C: about
    /// 0.3 °C a day, as a real forecast's.
    static func temperatureError(seed: Double, issued: Double, lead: Double) -> Double {
        (WeatherModel.unitHash(seed + 21, issued + lead) * 2 - 1) * 0.3 * lead / 86_400
    }

    static func render(latitude: Double, longitude: Double, at time: Double, units: String) -> String {
        let issued = (time / stepSeconds).rounded(.down) * stepSeconds
        let seed = WeatherModel.seed(latitude: latitude, longitude: longitude)
        let temperature: (Double) -> Double =
            switch units {
            case "standard": { ($0 + 273.15).rounded(to: 2) }
            case "imperial": { ($0 * 9 / 5 + 32).rounded(to: 2) }
            default: { $0.rounded(to: 2) }
            }
        let speed: (Double) -> Double = units == "imperial" ? { ($0 * 2.23694).rounded(to: 2) } : { $0 }
        let number = WeatherJSON.number
        var list: [String] = []
        var place: SimulatedPlace?
        var timezone = 0.0
        for index in 0..<steps {
            let time = issued + Double(index) * stepSeconds
            let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
            place = place ?? reading.place
            timezone = reading.timezoneOffset
            let error = temperatureError(seed: seed, issued: issued, lead: time - issued + stepSeconds)
            let raining = reading.rain1h > 0 || reading.snow1h > 0
            let pop =
                raining
                ? (0.6 + 0.4 * WeatherModel.unitHash(seed + 22, time)).rounded(to: 2)
                : reading.clouds > 60 ? (0.3 * WeatherModel.unitHash(seed + 23, time)).rounded(to: 2) : 0
            var precipitation = ""
            if reading.rain1h > 0 {
                precipitation += #""rain":{"3h":\#(number((reading.rain1h * 3).rounded(to: 2)))},"#
            }
            if reading.snow1h > 0 {
                precipitation += #""snow":{"3h":\#(number((reading.snow1h * 3).rounded(to: 2)))},"#
            }
            list.append(
                """
                {"dt":\(number(time)),"main":{"temp":\(number(temperature(reading.temperature + error))),\
                "feels_like":\(number(temperature(reading.feelsLike + error))),\
                "temp_min":\(number(temperature(reading.temperatureMin + error))),\
                "temp_max":\(number(temperature(reading.temperatureMax + error))),\
                "pressure":\(number(reading.pressure)),"sea_level":\(number(reading.pressure)),\
                "grnd_level":\(number(reading.groundLevel)),\
                "humidity":\(number(reading.humidity)),"temp_kf":0},\
                "weather":[{"id":\(reading.conditionID),"main":"\(reading.conditionMain)",\
                "description":"\(reading.conditionDescription)","icon":"\(reading.icon)"}],\
                "clouds":{"all":\(number(reading.clouds))},\
                "wind":{"speed":\(number(speed(reading.windSpeed))),"deg":\(number(reading.windDirection)),\
                "gust":\(number(speed(reading.windGust)))},\
                "visibility":\(number(reading.visibility)),"pop":\(number(pop)),\(precipitation)\
                "sys":{"pod":"\(reading.icon.hasSuffix("d") ? "d" : "n")"},"dt_txt":"\(text(time))"}
                """)
        }
        let city = place.map { #""name":"\#($0.name)","country":"\#($0.country ?? "")""# } ?? #""name":"","country":"""#
        return """
            {"cod":"200","message":0,"cnt":\(steps),"list":[\(list.joined(separator: ","))],\
            "city":{"id":0,\(city),"coord":{"lat":\(number(latitude)),"lon":\(number(longitude))},\
            "timezone":\(number(timezone))}}
            """
    }

    /// `2022-08-30 15:00:00`, UTC.
    static func text(_ time: Double) -> String {
        let parts = CivilTime(seconds: Int(time.rounded(.down)))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let date = "\(parts.year)-\(two(parts.month))-\(two(parts.day))"
        return "\(date) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
    }
}
