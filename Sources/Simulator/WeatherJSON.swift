/// Renders a reading in the exact shape of `/data/2.5/weather` with `units=metric`
/// (or `standard`/`imperial`, converted).
enum WeatherJSON {
    static func render(_ reading: WeatherModel.Reading, units: String, cityID: Int) -> String {
        let temperature: (Double) -> Double =
            switch units {
            case "standard": { ($0 + 273.15).rounded(to: 2) }
            case "imperial": { ($0 * 9 / 5 + 32).rounded(to: 2) }
            default: { $0 }
            }
        let speed: (Double) -> Double = units == "imperial" ? { ($0 * 2.23694).rounded(to: 2) } : { $0 }
        var sys = #""type":2,"id":\#(cityID % 100_000)"#
        if let country = reading.place.country { sys += #","country":"\#(country)""# }
        if let sunrise = reading.sunrise { sys += #","sunrise":\#(number(sunrise))"# }
        if let sunset = reading.sunset { sys += #","sunset":\#(number(sunset))"# }
        var precipitation = ""
        if reading.rain1h > 0 { precipitation += #""rain":{"1h":\#(number(reading.rain1h))},"# }
        if reading.snow1h > 0 { precipitation += #""snow":{"1h":\#(number(reading.snow1h))},"# }
        return """
            {"coord":{"lon":\(number(reading.place.longitude)),"lat":\(number(reading.place.latitude))},\
            "weather":[{"id":\(reading.conditionID),"main":"\(reading.conditionMain)",\
            "description":"\(reading.conditionDescription)","icon":"\(reading.icon)"}],\
            "base":"stations",\
            "main":{"temp":\(number(temperature(reading.temperature))),\
            "feels_like":\(number(temperature(reading.feelsLike))),\
            "temp_min":\(number(temperature(reading.temperatureMin))),\
            "temp_max":\(number(temperature(reading.temperatureMax))),\
            "pressure":\(number(reading.pressure)),"humidity":\(number(reading.humidity)),\
            "sea_level":\(number(reading.pressure)),"grnd_level":\(number(reading.groundLevel))},\
            "visibility":\(number(reading.visibility)),\
            "wind":{"speed":\(number(speed(reading.windSpeed))),"deg":\(number(reading.windDirection)),\
            "gust":\(number(speed(reading.windGust)))},\
            \(precipitation)"clouds":{"all":\(number(reading.clouds))},\
            "dt":\(number(reading.observationTime)),"sys":{\(sys)},"timezone":\(number(reading.timezoneOffset)),\
            "id":\(reading.place.name.isEmpty ? 0 : cityID),"name":"\(reading.place.name)","cod":200}
            """
    }

    /// Integers without a decimal point, as the real API writes them.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
