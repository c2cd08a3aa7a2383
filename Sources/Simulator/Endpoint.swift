/// The OpenWeather endpoints the simulator answers, by path.
enum Endpoint: String, CaseIterable {
    case weather = "/data/2.5/weather"
    case airPollution = "/data/2.5/air_pollution"
    case airPollutionForecast = "/data/2.5/air_pollution/forecast"
    case forecast = "/data/2.5/forecast"
    case oneCall = "/data/3.0/onecall"
    case oneCallTimemachine = "/data/3.0/onecall/timemachine"
    case airPollutionHistory = "/data/2.5/air_pollution/history"
    case geocodingDirect = "/geo/1.0/direct"
    case geocodingZip = "/geo/1.0/zip"
    case oneCall4Current = "/data/4.0/onecall/current"
    case oneCall4Minutes = "/data/4.0/onecall/timeline/1min"
    case oneCall4QuarterHours = "/data/4.0/onecall/timeline/15min"
    case oneCall4Hours = "/data/4.0/onecall/timeline/1h"
    case oneCall4Days = "/data/4.0/onecall/timeline/1day"
    /// Followed by `/{alert_id}`.
    case oneCall4Alert = "/data/4.0/onecall/alert"

    /// The endpoint answering a request's path: its own, or `/data/4.0/onecall/alert/{alert_id}`.
    init?(path: String) {
        if let endpoint = Endpoint(rawValue: path) {
            self = endpoint
        } else if path.hasPrefix(Endpoint.oneCall4Alert.rawValue + "/") {
            self = .oneCall4Alert
        } else {
            return nil
        }
    }

    /// The answer once the key is accepted: 200 with the data, or the endpoint's own 400 or 404.
    /// `alwaysAlert`: One Call has an official alert in force at every place; `rainSoon`: its minute
    /// forecast has rain starting in 10 minutes everywhere (both for end-to-end tests). `path`: the
    /// request's (it holds an alert's ID); `linkBase`: where One Call 4.0's page links point;
    /// `endlessRound`: the hostile alert mode is on, this many current answers given before.
    func answer(
        _ query: [String: String], latitude: Double?, longitude: Double?, at time: Double, alwaysAlert: Bool = false,
        rainSoon: Bool = false,
        path: String? = nil, linkBase: String = OneCall4JSON.realBase, endlessRound: Int? = nil
    ) -> (status: Int, body: String) {
        /// A page of a One Call 4.0 timeline, placed by `start=`.
        func page(_ timeline: OneCall4JSON.Timeline) -> (status: Int, body: String) {
            Self.atPlace(latitude, longitude) { latitude, longitude in
                var start: Double?
                if let text = query["start"] {
                    guard let parsed = Double(text), parsed.isFinite else {
                        return (400, ErrorBodies.oneCallInvalid("start"))
                    }
                    start = parsed
                }
                return (
                    200,
                    OneCall4JSON.page(
                        timeline, latitude: latitude, longitude: longitude, at: time, start: start,
                        alwaysAlert: alwaysAlert,
                        caller: .init(base: linkBase, key: query["appid"] ?? ""))
                )
            }
        }
        // One case per endpoint and no default: a new endpoint does not build until it is answered here.
        switch self {
        case .weather:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
                return (
                    200,
                    WeatherJSON.render(
                        reading, units: query["units"] ?? "standard", cityID: Int(abs(latitude * 1000 + longitude)))
                )
            }
        case .forecast:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                (
                    200,
                    ForecastJSON.render(
                        latitude: latitude, longitude: longitude, at: time, units: query["units"] ?? "standard")
                )
            }
        case .airPollution:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                let reading = AirPollutionModel.reading(latitude: latitude, longitude: longitude, at: time)
                return (200, AirPollutionJSON.render(reading, latitude: latitude, longitude: longitude))
            }
        case .airPollutionForecast:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                (
                    200,
                    AirPollutionJSON.render(
                        AirPollutionModel.forecast(latitude: latitude, longitude: longitude, at: time),
                        latitude: latitude, longitude: longitude)
                )
            }
        case .airPollutionHistory:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                guard let start = query["start"].flatMap(Double.init), let end = query["end"].flatMap(Double.init),
                    start <= end
                else {
                    return (400, ErrorBodies.wrongParameter("start and end are required, start not after end"))
                }
                return (
                    200,
                    AirPollutionJSON.render(
                        AirPollutionModel.history(
                            latitude: latitude, longitude: longitude, from: start, to: min(end, time)),
                        latitude: latitude, longitude: longitude)
                )
            }
        case .oneCall:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                let exclude = Set((query["exclude"] ?? "").split(separator: ",").map(String.init))
                return (
                    200,
                    OneCallJSON.render(
                        latitude: latitude, longitude: longitude, at: time, alwaysAlert: alwaysAlert,
                        rainSoon: rainSoon, exclude: exclude)
                )
            }
        case .oneCallTimemachine:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                // OpenWeather's range: from 1979 to 4 days ahead.
                guard let moment = query["dt"].flatMap(Double.init), moment >= OneCallJSON.firstHistory,
                    moment <= time + 4 * 86_400
                else {
                    return (400, ErrorBodies.oneCallInvalidDate)
                }
                return (200, OneCallJSON.timemachine(latitude: latitude, longitude: longitude, at: moment))
            }
        case .oneCall4Current:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                (
                    200,
                    OneCall4JSON.current(
                        latitude: latitude, longitude: longitude, at: time, alwaysAlert: alwaysAlert,
                        endlessRound: endlessRound)
                )
            }
        case .oneCall4Minutes:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                (
                    200,
                    OneCall4JSON.minutes(
                        latitude: latitude, longitude: longitude, at: time, alwaysAlert: alwaysAlert, rainSoon: rainSoon
                    )
                )
            }
        case .oneCall4QuarterHours: return page(.quarterHour)
        case .oneCall4Hours: return page(.hour)
        case .oneCall4Days: return page(.day)
        case .geocodingDirect:
            guard let name = query["q"], !name.allSatisfy({ $0 == " " || $0 == "," }) else {
                return (400, ErrorBodies.wrongParameter("Nothing to geocode"))
            }
            // OpenWeather answers at most five; without `limit`, one.
            let limit = min(max(query["limit"].flatMap { Int($0) } ?? 1, 1), 5)
            return (200, GeocodingJSON.direct(Array(Places.matching(name).prefix(limit))))
        case .geocodingZip:
            guard let code = query["zip"], !code.isEmpty else {
                return (400, ErrorBodies.wrongParameter("Nothing to geocode"))
            }
            guard let found = Places.zip(code) else { return (404, ErrorBodies.zipNotFound) }
            return (200, GeocodingJSON.zip(found.code, found.place))
        case .oneCall4Alert:
            let id = String((path ?? "").dropFirst(rawValue.count + 1))
            if endlessRound != nil, let detail = OneCall4JSON.endlessAlert(id: id, at: time) { return (200, detail) }
            guard let detail = OneCall4JSON.alert(id: id, alwaysAlert: alwaysAlert) else {
                return (404, ErrorBodies.oneCallAlertNotFound)
            }
            return (200, detail)
        }
    }

    /// An endpoint of one place: OpenWeather's 400 for coordinates missing or out of range, else `answer`.
    private static func atPlace(
        _ latitude: Double?, _ longitude: Double?, _ answer: (Double, Double) -> (status: Int, body: String)
    ) -> (status: Int, body: String) {
        guard let latitude, (-90...90).contains(latitude) else {
            return (400, ErrorBodies.wrongParameter("wrong latitude"))
        }
        guard let longitude, (-180...180).contains(longitude) else {
            return (400, ErrorBodies.wrongParameter("wrong longitude"))
        }
        return answer(latitude, longitude)
    }

    /// Answered only for a key with the One Call subscription (401 otherwise).
    var needsOneCall: Bool {
        self == .oneCall || self == .oneCallTimemachine || rawValue.hasPrefix("/data/4.0/onecall/")
    }

    /// For `Fault.Malformation`: a number field, a value that is absurd for it, and a field
    /// whose absence makes the answer unusable.
    var breakable: (number: String, absurd: String, required: String) {
        switch self {
        case .weather: ("temp", "9999", "main")
        case .airPollution, .airPollutionForecast, .airPollutionHistory: ("aqi", "9", "main")
        case .forecast: ("temp", "9999", "list")
        case .oneCall: ("temp", "9999", "current")
        case .oneCallTimemachine: ("temp", "9999", "data")
        case .geocodingDirect, .geocodingZip: ("lat", "999", "lat")
        case .oneCall4Current, .oneCall4QuarterHours, .oneCall4Hours, .oneCall4Days: ("temp", "9999", "data")
        case .oneCall4Minutes: ("precipitation", "9999", "data")
        case .oneCall4Alert: ("start", "-1", "event")
        }
    }
}
