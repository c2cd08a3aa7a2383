import Glibc

/// The simulated `/data/3.0/onecall`: the current weather of `WeatherModel` with a dew point and
/// a UV index, the next hour's precipitation minute by minute (the model's, so rain starts and stops
/// where its spells do), 48 hourly steps and 8 days from the same model (with the forecast's growing
/// error), and now and then an official alert: in one 6-hour block of three, per place, an alert
/// fitting the weather of the block's start. Deterministic for a place and time. `exclude` leaves
/// parts out as OpenWeather does.
enum OneCallJSON {
    static let sender = "Simulated Weather Service"
    /// 1979-01-01: as far back as OpenWeather's history goes.
    static let firstHistory = 283_996_800.0

    /// Magnus formula: the dew point of air at `temperature` °C and `humidity` %.
    static func dewPoint(_ temperature: Double, humidity: Double) -> Double {
        let gamma = log(max(humidity, 1) / 100) + 17.62 * temperature / (243.12 + temperature)
        return (243.12 * gamma / (17.62 - gamma)).rounded(to: 2)
    }

    /// Higher with the sun up and few clouds, up to about 10 in the tropics.
    static func uvIndex(_ reading: WeatherModel.Reading, latitude: Double, at time: Double) -> Double {
        let hour = WeatherModel.solarHour(at: time, longitude: reading.place.longitude)
        let sun = max(0, cos(2 * .pi * (hour - 12) / 24) * 2 - 1)
        return (10 * sun * cos(latitude * .pi / 180) * (1 - reading.clouds / 150)).rounded(to: 2)
    }

    /// The alert in force in the 6-hour block holding `time`, if any: (event, start, end).
    static func alert(
        latitude: Double, longitude: Double, at time: Double, always: Bool = false
    ) -> (event: String, start: Double, end: Double)? {
        let block = (time / 21_600).rounded(.down)
        let seed = WeatherModel.seed(latitude: latitude, longitude: longitude)
        guard always || WeatherModel.unitHash(seed + 31, block) < 1.0 / 3 else { return nil }
        let start = block * 21_600
        let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: start)
        let event =
            reading.temperature >= 30
            ? "Heat Advisory"
            : reading.temperature <= 0
                ? "Frost Advisory"
                : reading.rain1h + reading.snow1h > 0
                    ? "Flood Watch" : reading.windSpeed > 5 ? "Wind Advisory" : "Dense Fog Advisory"
        return (event, start, start + 21_600)
    }

    /// 61 minute steps from the minute holding `time`, as OpenWeather sends: the precipitation (mm/h)
    /// of the model's weather at each minute. The model's spells last 3 hours, so within the hour it
    /// rains throughout, not at all, or starts or stops at a spell's edge. `rainSoon` (a steer for
    /// tests, not the model): dry for 10 minutes, then 2 mm/h.
    static func minutely(
        latitude: Double, longitude: Double, at time: Double, rainSoon: Bool = false
    ) -> [(time: Double, precipitation: Double)] {
        let first = (time / 60).rounded(.down) * 60
        var spell = (start: -1.0, precipitation: 0.0)
        return (0...60).map { index in
            let minute = first + Double(index) * 60
            let start = (minute / 10_800).rounded(.down) * 10_800
            if start != spell.start {
                let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: minute)
                spell = (start, reading.rain1h + reading.snow1h)
            }
            return (minute, rainSoon ? (index < 10 ? 0 : 2) : spell.precipitation)
        }
    }

    /// One step's values as One Call reports them: the model's reading with its temperatures off by
    /// a forecast's error, the dew point and UV index that go with it, and a chance of precipitation
    /// for a forecast's step.
    struct Step {
        var time: Double
        var reading: WeatherModel.Reading
        var dewPoint, uvi: Double
        var pop: Double?
    }

    static func step(
        _ reading: WeatherModel.Reading, latitude: Double, at time: Double, error: Double, pop: Double? = nil
    ) -> Step {
        var shifted = reading
        shifted.temperature = (reading.temperature + error).rounded(to: 2)
        shifted.feelsLike = (reading.feelsLike + error).rounded(to: 2)
        return Step(
            time: time, reading: shifted, dewPoint: dewPoint(shifted.temperature, humidity: reading.humidity),
            uvi: uvIndex(reading, latitude: latitude, at: time), pop: pop)
    }

    /// The chance of precipitation the hourly forecast gives for a step of this weather.
    static func pop(_ reading: WeatherModel.Reading) -> Double {
        reading.rain1h + reading.snow1h > 0 ? 0.8 : reading.clouds > 60 ? 0.2 : 0
    }

    /// The hourly record at `time` of the forecast issued at `issued` (the hour holding now): the
    /// model's weather with the forecast's error; an hour before `issued` is past, so observed, without.
    static func hour(latitude: Double, longitude: Double, issued: Double, at time: Double) -> Step {
        let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
        let seed = WeatherModel.seed(latitude: latitude, longitude: longitude)
        let error =
            time < issued ? 0 : ForecastJSON.temperatureError(seed: seed, issued: issued, lead: time - issued + 3600)
        return step(reading, latitude: latitude, at: time, error: error, pop: pop(reading))
    }

    /// One step's fields as One Call writes them.
    static func fields(_ step: Step) -> String {
        let number = WeatherJSON.number
        let reading = step.reading
        var text = """
            "dt":\(number(step.time)),"temp":\(number(reading.temperature)),"feels_like":\(number(reading.feelsLike)),\
            "pressure":\(number(reading.pressure)),"humidity":\(number(reading.humidity)),\
            "dew_point":\(number(step.dewPoint)),"uvi":\(number(step.uvi)),\
            "clouds":\(number(reading.clouds)),"visibility":\(number(reading.visibility)),\
            "wind_speed":\(number(reading.windSpeed)),"wind_deg":\(number(reading.windDirection)),\
            "wind_gust":\(number(reading.windGust)),\
            "weather":[{"id":\(reading.conditionID),"main":"\(reading.conditionMain)",\
            "description":"\(reading.conditionDescription)","icon":"\(reading.icon)"}]
            """
        if reading.rain1h > 0 { text += #","rain":{"1h":\#(number(reading.rain1h))}"# }
        if reading.snow1h > 0 { text += #","snow":{"1h":\#(number(reading.snow1h))}"# }
        if let pop = step.pop { text += #","pop":\#(number(pop))"# }
        return text
    }

    /// A local day of the model's weather: its 24 hours from local midnight (`start`).
    struct Day {
        var start: Double
        var hours: [WeatherModel.Reading]
        var midday: Double { start + 43_200 }
        var noon: WeatherModel.Reading { hours[12] }
        var temperatures: [Double] { hours.map(\.temperature) }
        /// Millimetres over the day.
        var rain: Double { hours.reduce(0.0) { $0 + $1.rain1h } }
        var pop: Double { rain > 0 ? 0.8 : 0 }
    }

    static func day(latitude: Double, longitude: Double, start: Double) -> Day {
        Day(
            start: start,
            hours: stride(from: start, to: start + 86_400, by: 3600).map {
                WeatherModel.reading(latitude: latitude, longitude: longitude, at: $0)
            })
    }

    /// Local midnight, in UTC, of the day holding `time`.
    static func dayStart(containing time: Double, timezoneOffset: Double) -> Double {
        ((time + timezoneOffset) / 86_400).rounded(.down) * 86_400 - timezoneOffset
    }

    /// The weather at one moment, as `current` and `timemachine`'s `data` record have it: the
    /// model's, with the day's sunrise and sunset (absent in polar day and night).
    static func moment(_ reading: WeatherModel.Reading, latitude: Double, at time: Double) -> String {
        var text = fields(step(reading, latitude: latitude, at: time, error: 0))
        if let sunrise = reading.sunrise { text += #","sunrise":\#(WeatherJSON.number(sunrise))"# }
        if let sunset = reading.sunset { text += #","sunset":\#(WeatherJSON.number(sunset))"# }
        return text
    }

    /// `/data/3.0/onecall/timemachine`: the model's weather at `time`, which `dt` echoes, so the
    /// history of a place is what the live answers reported then.
    static func timemachine(latitude: Double, longitude: Double, at time: Double) -> String {
        let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
        return """
            {"lat":\(WeatherJSON.number(latitude)),"lon":\(WeatherJSON.number(longitude)),"timezone":"Etc/GMT",\
            "timezone_offset":\(WeatherJSON.number(reading.timezoneOffset)),\
            "data":[{\(moment(reading, latitude: latitude, at: time))}]}
            """
    }

    static func render(
        latitude: Double, longitude: Double, at time: Double, alwaysAlert: Bool = false, rainSoon: Bool = false,
        exclude: Set<String> = []
    ) -> String {
        let number = WeatherJSON.number
        let now = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
        let current = moment(now, latitude: latitude, at: now.observationTime)

        let issued = (time / 3600).rounded(.down) * 3600
        let hourly = (0..<48).map { index in
            "{"
                + fields(
                    hour(latitude: latitude, longitude: longitude, issued: issued, at: issued + Double(index) * 3600))
                + "}"
        }
        let dayStart = dayStart(containing: time, timezoneOffset: now.timezoneOffset)
        let daily = (0..<8).map { index -> String in
            let day = day(latitude: latitude, longitude: longitude, start: dayStart + Double(index) * 86_400)
            let (temperatures, noon) = (day.temperatures, day.noon)
            return """
                {"dt":\(number(day.midday)),"temp":{"day":\(number(temperatures[12])),\
                "min":\(number(temperatures.min()!)),"max":\(number(temperatures.max()!))},\
                "feels_like":{"day":\(number(noon.feelsLike))},"pressure":\(number(noon.pressure)),\
                "humidity":\(number(noon.humidity)),\
                "dew_point":\(number(dewPoint(noon.temperature, humidity: noon.humidity))),\
                "wind_speed":\(number(noon.windSpeed)),\
                "wind_deg":\(number(noon.windDirection)),"wind_gust":\(number(noon.windGust)),\
                "weather":[{"id":\(noon.conditionID),"main":"\(noon.conditionMain)",\
                "description":"\(noon.conditionDescription)","icon":"\(noon.icon)"}],\
                "clouds":\(number(noon.clouds)),"pop":\(number(day.pop)),"rain":\(number(day.rain.rounded(to: 2))),\
                "uvi":\(number(uvIndex(noon, latitude: latitude, at: day.midday)))}
                """
        }
        let minutely = minutely(latitude: latitude, longitude: longitude, at: time, rainSoon: rainSoon)
            .map { #"{"dt":\#(number($0.time)),"precipitation":\#(number($0.precipitation))}"# }
        var alerts = ""
        if let alert = alert(latitude: latitude, longitude: longitude, at: time, always: alwaysAlert) {
            alerts =
                #"""
                ,"alerts":[{"sender_name":"\#(sender)","event":"\#(alert.event)","start":\#(number(alert.start)),\#
                "end":\#(number(alert.end)),"description":"Simulated.\n","tags":[]}]
                """#
        }
        var parts = ""
        if !exclude.contains("current") { parts += #","current":{\#(current)}"# }
        if !exclude.contains("minutely") { parts += #","minutely":[\#(minutely.joined(separator: ","))]"# }
        if !exclude.contains("hourly") { parts += #","hourly":[\#(hourly.joined(separator: ","))]"# }
        if !exclude.contains("daily") { parts += #","daily":[\#(daily.joined(separator: ","))]"# }
        if !exclude.contains("alerts") { parts += alerts }
        return """
            {"lat":\(number(latitude)),"lon":\(number(longitude)),"timezone":"Etc/GMT",\
            "timezone_offset":\(number(now.timezoneOffset))\(parts)}
            """
    }
}
