import Encoding

/// The simulated One Call 4.0 (`/data/4.0/onecall/...`): 3.0's answer (`OneCallJSON`) cut into
/// parts, each its own call, with the same values at the same times. `current`; the next 60 minutes
/// of precipitation; hours from 1979 (observed) through 3.0's 48-hour forecast; quarter hours from
/// now through the same 47 hours, between the hours around them; days from 1979 to 1.5 years ahead.
/// A timeline answers a page from `start` with `prev`/`next` links while records lie that way,
/// carrying the caller's key as the real API's probably do. A record lists the IDs of the alerts valid at
/// its time; `/alert/{id}` tells one in full.
enum OneCall4JSON {
    enum Timeline {
        case quarterHour, hour, day

        var seconds: Double {
            switch self {
            case .quarterHour: 900
            case .hour: 3600
            case .day: 86_400
            }
        }

        /// Records a page.
        var count: Int {
            switch self {
            case .quarterHour: 50
            case .hour: 20
            case .day: 10
            }
        }

        var path: String {
            switch self {
            case .quarterHour: "/data/4.0/onecall/timeline/15min"
            case .hour: "/data/4.0/onecall/timeline/1h"
            case .day: "/data/4.0/onecall/timeline/1day"
            }
        }

        /// The first and last record times there are at `now`.
        func reach(at now: Double, timezoneOffset: Double) -> ClosedRange<Double> {
            let lastHour = (now / 3600).rounded(.down) * 3600 + 47 * 3600
            return switch self {
            case .quarterHour: (now / 900).rounded(.down) * 900...lastHour
            case .hour: OneCallJSON.firstHistory...lastHour
            // Up to 1.5 years ahead.
            case .day: first(OneCallJSON.firstHistory, timezoneOffset: timezoneOffset)...(now + 47_336_400)
            }
        }

        /// The first record of a page asked from `start`: its quarter hour, hour or local noon.
        func first(_ start: Double, timezoneOffset: Double) -> Double {
            guard self == .day else { return (start / seconds).rounded(.down) * seconds }
            return OneCallJSON.dayStart(containing: start, timezoneOffset: timezoneOffset) + 43_200
        }
    }

    /// Where a page's links point and whose key they carry.
    struct Caller {
        var base: String
        var key: String
    }

    static let realBase = "https://api.openweathermap.org"

    private static func envelope(latitude: Double, longitude: Double, _ records: [String], links: String = "") -> String
    {
        let number = WeatherJSON.number
        return """
            {"lat":\(number(latitude)),"lon":\(number(longitude)),"timezone":"Etc/GMT",\
            "timezone_offset":\(number(WeatherModel.timezoneOffset(longitude: longitude))),\
            "data":[\(records.joined(separator: ","))]\(links)}
            """
    }

    /// `,"alerts":[...]` with the ID of the alert valid at `time`, or nothing.
    private static func alerts(latitude: Double, longitude: Double, at time: Double, always: Bool) -> String {
        guard let alert = OneCallJSON.alert(latitude: latitude, longitude: longitude, at: time, always: always),
            let id = AlertID.make(latitude: latitude, longitude: longitude, start: alert.start)
        else { return "" }
        return #","alerts":["\#(id)"]"#
    }

    /// `/current`: 3.0's `current`. `endlessRound`: the hostile alert mode's count of answers so far;
    /// the record then lists `endlessPerAnswer` IDs never listed before instead of the model's alert.
    static func current(
        latitude: Double, longitude: Double, at time: Double, alwaysAlert: Bool, endlessRound: Int? = nil
    ) -> String {
        let now = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
        let listed = endlessRound.map { round in
            #","alerts":["#
                + (0..<endlessPerAnswer).map { #""\#(endlessPrefix)\#(round)-\#($0)""# }.joined(separator: ",") + "]"
        }
        let record =
            OneCallJSON.moment(now, latitude: latitude, at: now.observationTime)
            + (listed ?? alerts(latitude: latitude, longitude: longitude, at: now.observationTime, always: alwaysAlert))
        return envelope(latitude: latitude, longitude: longitude, ["{" + record + "}"])
    }

    /// `/timeline/1min`: 3.0's `minutely`, 60 minutes from the one holding now.
    static func minutes(
        latitude: Double, longitude: Double, at time: Double, alwaysAlert: Bool, rainSoon: Bool
    ) -> String {
        let records = OneCallJSON.minutely(latitude: latitude, longitude: longitude, at: time, rainSoon: rainSoon)
            .prefix(60).map {
                #"{"dt":\#(WeatherJSON.number($0.time)),"precipitation":\#(WeatherJSON.number($0.precipitation))"#
                    + alerts(latitude: latitude, longitude: longitude, at: $0.time, always: alwaysAlert) + "}"
            }
        return envelope(latitude: latitude, longitude: longitude, records)
    }

    /// A page of `timeline` from `start` (nil: now).
    static func page(
        _ timeline: Timeline, latitude: Double, longitude: Double, at now: Double, start: Double?, alwaysAlert: Bool,
        caller: Caller
    ) -> String {
        let offset = WeatherModel.timezoneOffset(longitude: longitude)
        let reach = timeline.reach(at: now, timezoneOffset: offset)
        let first = timeline.first(start ?? now, timezoneOffset: offset)
        let step = timeline.seconds
        let issued = (now / 3600).rounded(.down) * 3600
        let records = (0..<timeline.count).map { first + Double($0) * step }.filter(reach.contains).map { time in
            let fields =
                switch timeline {
                case .hour:
                    OneCallJSON.fields(
                        OneCallJSON.hour(latitude: latitude, longitude: longitude, issued: issued, at: time))
                case .quarterHour:
                    OneCallJSON.fields(quarterHour(latitude: latitude, longitude: longitude, issued: issued, at: time))
                case .day: day(latitude: latitude, longitude: longitude, noon: time)
                }
            return "{" + fields + alerts(latitude: latitude, longitude: longitude, at: time, always: alwaysAlert) + "}"
        }
        let page = step * Double(timeline.count)
        var links = ""
        if first - step >= reach.lowerBound {
            links += #","prev":"\#(link(timeline, latitude, longitude, start: first - page, caller))""#
        }
        if first + page <= reach.upperBound {
            links += #","next":"\#(link(timeline, latitude, longitude, start: first + page, caller))""#
        }
        return envelope(latitude: latitude, longitude: longitude, records, links: links)
    }

    /// As the fixtures' links: `cnt` for hours and days, coordinates to 4 decimals, the key last.
    private static func link(
        _ timeline: Timeline, _ latitude: Double, _ longitude: Double, start: Double, _ caller: Caller
    ) -> String {
        let count = timeline == .quarterHour ? "" : "cnt=\(timeline.count)&"
        return "\(caller.base)\(timeline.path)?\(count)lat=\(fixed4(latitude))&lon=\(fixed4(longitude))"
            + "&start=\(WeatherJSON.number(start))&appid=\(PercentEncoding.encoded(caller.key))"
    }

    /// `36.1540`.
    static func fixed4(_ value: Double) -> String {
        let units = Int64((abs(value) * 10_000).rounded())
        let fraction = String(units % 10_000)
        return (value < 0 && units > 0 ? "-" : "") + "\(units / 10_000)."
            + String(repeating: "0", count: 4 - fraction.count) + fraction
    }

    /// On the hour, the hour's record; between, the smooth values drawn straight between the hours
    /// around it, the sky (clouds, precipitation, condition) the model's then: its spells change on the hour.
    static func quarterHour(latitude: Double, longitude: Double, issued: Double, at time: Double) -> OneCallJSON.Step {
        let hour = (time / 3600).rounded(.down) * 3600
        let before = OneCallJSON.hour(latitude: latitude, longitude: longitude, issued: issued, at: hour)
        guard time > hour else { return before }
        let after = OneCallJSON.hour(latitude: latitude, longitude: longitude, issued: issued, at: hour + 3600)
        let fraction = (time - hour) / 3600
        func between(_ path: KeyPath<OneCallJSON.Step, Double>, _ places: Int) -> Double {
            (before[keyPath: path] + (after[keyPath: path] - before[keyPath: path]) * fraction).rounded(to: places)
        }
        var reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
        reading.temperature = between(\.reading.temperature, 2)
        reading.feelsLike = between(\.reading.feelsLike, 2)
        reading.pressure = between(\.reading.pressure, 0)
        reading.humidity = between(\.reading.humidity, 0)
        reading.windSpeed = between(\.reading.windSpeed, 2)
        reading.windGust = between(\.reading.windGust, 2)
        // The shorter way round the compass.
        let turn =
            (after.reading.windDirection - before.reading.windDirection + 540).truncatingRemainder(dividingBy: 360)
            - 180
        reading.windDirection =
            ((before.reading.windDirection + turn * fraction + 360).truncatingRemainder(dividingBy: 360)).rounded()
        return OneCallJSON.Step(
            time: time, reading: reading, dewPoint: between(\.dewPoint, 2), uvi: between(\.uvi, 2),
            pop: OneCallJSON.pop(reading))
    }

    /// 3.0's day with 4.0's further fields: sunrise, sunset, the moon, and the temperatures of
    /// morning (06:00), evening (18:00) and night (00:00); `rain` only when some falls.
    private static func day(latitude: Double, longitude: Double, noon time: Double) -> String {
        let number = WeatherJSON.number
        let day = OneCallJSON.day(latitude: latitude, longitude: longitude, start: time - 43_200)
        let (temperatures, noon, hours) = (day.temperatures, day.noon, day.hours)
        // Synodic months since the new moon of 6 January 2000, 18:14 UTC; the moon rises with the sun
        // when new, and about 50 minutes later each day.
        let months = (time - 947_182_440) / 2_551_443
        let phase = months - months.rounded(.down)
        let moonrise = day.start + (21_600 + phase * 86_400).truncatingRemainder(dividingBy: 86_400)
        var text = #""dt":\#(number(time)),"#
        if let sunrise = noon.sunrise, let sunset = noon.sunset {
            text += #""sunrise":\#(number(sunrise)),"sunset":\#(number(sunset)),"#
        }
        text += """
            "moonrise":\(number(moonrise.rounded())),"moonset":\(number((moonrise + 44_700).rounded())),\
            "moon_phase":\(number(phase.rounded(to: 2))),\
            "temp":{"day":\(number(temperatures[12])),"min":\(number(temperatures.min()!)),\
            "max":\(number(temperatures.max()!)),\
            "night":\(number(temperatures[0])),"eve":\(number(temperatures[18])),"morn":\(number(temperatures[6]))},\
            "feels_like":{"day":\(number(noon.feelsLike)),"night":\(number(hours[0].feelsLike)),\
            "eve":\(number(hours[18].feelsLike)),\
            "morn":\(number(hours[6].feelsLike))},"pressure":\(number(noon.pressure)),\
            "humidity":\(number(noon.humidity)),\
            "dew_point":\(number(OneCallJSON.dewPoint(noon.temperature, humidity: noon.humidity))),\
            "wind_speed":\(number(noon.windSpeed)),\
            "wind_deg":\(number(noon.windDirection)),"wind_gust":\(number(noon.windGust)),\
            "weather":[{"id":\(noon.conditionID),"main":"\(noon.conditionMain)",\
            "description":"\(noon.conditionDescription)","icon":"\(noon.icon)"}],\
            "clouds":\(number(noon.clouds)),"pop":\(number(day.pop)),\
            "uvi":\(number(OneCallJSON.uvIndex(noon, latitude: latitude, at: time)))
            """
        if day.rain > 0 { text += #","rain":\#(number(day.rain.rounded(to: 2)))"# }
        return text
    }

    /// The hostile alert mode (`alerts=endless`): new IDs in every current answer, each a 200 KB text
    /// in force until 2100, as an upstream that meant harm could send (issue 27).
    static let endlessPrefix = "ENDLESS-"
    static let endlessPerAnswer = 16

    static func endlessAlert(id: String, at time: Double) -> String? {
        guard id.hasPrefix(endlessPrefix), id.utf8.count <= 64 else { return nil }
        let text = String(repeating: "Flooding without end. ", count: 200_000 / 22)
        return """
            {"id":"\(id)","sender_name":"\(OneCallJSON.sender)","event":"Endless Warning",\
            "start":\(WeatherJSON.number(time.rounded(.down))),\
            "end":4102444800,"description":"\(text)"}
            """
    }

    /// `/alert/{id}`: the alert in full, or nil for an ID no alert has (now, in this alert mode).
    static func alert(id: String, alwaysAlert: Bool) -> String? {
        guard let place = AlertID.parse(id),
            let alert = OneCallJSON.alert(
                latitude: place.latitude, longitude: place.longitude, at: place.start, always: alwaysAlert),
            alert.start == place.start
        else { return nil }
        let number = WeatherJSON.number
        let description =
            #"...\#(alert.event.uppercased()) IN EFFECT FOR 6 HOURS...\n* WHAT...Simulated.\n"#
            + #"* WHERE...\#(fixed4(place.latitude)), \#(fixed4(place.longitude))."#
        return """
            {"id":"\(AlertID.make(latitude: place.latitude, longitude: place.longitude, start: place.start) ?? id)",\
            "sender_name":"\(OneCallJSON.sender)","event":"\(alert.event)","start":\(number(alert.start)),\
            "end":\(number(alert.end)),\
            "description":"\(description)"}
            """
    }
}
