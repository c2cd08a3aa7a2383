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
        let units = query["units"] ?? "standard"
        /// A page of a One Call 4.0 timeline, with its links for the caller's key.
        func page(_ timeline: OneCall4JSON.Timeline) -> (status: Int, body: String) {
            Self.atPlace(latitude, longitude) {
                Self.timelinePage(
                    timeline, query, latitude: $0, longitude: $1, at: time, alwaysAlert: alwaysAlert,
                    caller: .init(base: linkBase, key: query["appid"] ?? ""))
            }
        }
        // One case per endpoint and no default: a new endpoint does not build until it is answered here.
        switch self {
        case .weather:
            return Self.atPlace(latitude, longitude) { latitude, longitude in
                let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: time)
                return (200, WeatherJSON.render(reading, units: units, cityID: Int(abs(latitude * 1000 + longitude))))
            }
        case .forecast:
            return Self.atPlace(latitude, longitude) {
                (200, ForecastJSON.render(latitude: $0, longitude: $1, at: time, units: units))
            }
        case .airPollution:
            return Self.atPlace(latitude, longitude) {
                let reading = AirPollutionModel.reading(latitude: $0, longitude: $1, at: time)
                return (200, AirPollutionJSON.render(reading, latitude: $0, longitude: $1))
            }
        case .airPollutionForecast:
            return Self.atPlace(latitude, longitude) {
                let readings = AirPollutionModel.forecast(latitude: $0, longitude: $1, at: time)
                return (200, AirPollutionJSON.render(readings, latitude: $0, longitude: $1))
            }
        case .airPollutionHistory:
            return Self.atPlace(latitude, longitude) { Self.airHistory(query, latitude: $0, longitude: $1, at: time) }
        case .oneCall:
            return Self.atPlace(latitude, longitude) {
                let exclude = Set((query["exclude"] ?? "").split(separator: ",").map(String.init))
                return (
                    200,
                    OneCallJSON.render(
                        latitude: $0, longitude: $1, at: time, alwaysAlert: alwaysAlert, rainSoon: rainSoon,
                        exclude: exclude)
                )
            }
        case .oneCallTimemachine:
            return Self.atPlace(latitude, longitude) { Self.timemachine(query, latitude: $0, longitude: $1, at: time) }
        case .oneCall4Current:
            return Self.atPlace(latitude, longitude) {
                let body = OneCall4JSON.current(
                    latitude: $0, longitude: $1, at: time, alwaysAlert: alwaysAlert, endlessRound: endlessRound)
                return (200, body)
            }
        case .oneCall4Minutes:
            return Self.atPlace(latitude, longitude) {
                let body = OneCall4JSON.minutes(
                    latitude: $0, longitude: $1, at: time, alwaysAlert: alwaysAlert, rainSoon: rainSoon)
                return (200, body)
            }
        case .oneCall4QuarterHours: return page(.quarterHour)
        case .oneCall4Hours: return page(.hour)
        case .oneCall4Days: return page(.day)
        case .geocodingDirect: return Self.geocodeName(query)
        case .geocodingZip: return Self.geocodeZip(query)
        case .oneCall4Alert:
            let id = String((path ?? "").dropFirst(rawValue.count + 1))
            return Self.alertDetail(id: id, at: time, alwaysAlert: alwaysAlert, endless: endlessRound != nil)
        }
    }

    /// A One Call 4.0 timeline page, placed by `start=` (400 when it is not a number).
    private static func timelinePage(
        _ timeline: OneCall4JSON.Timeline, _ query: [String: String], latitude: Double, longitude: Double,
        at time: Double, alwaysAlert: Bool, caller: OneCall4JSON.Caller
    ) -> (status: Int, body: String) {
        var start: Double?
        if let text = query["start"] {
            guard let parsed = Double(text), parsed.isFinite else {
                return (400, ErrorBodies.oneCallInvalid("start"))
            }
            start = parsed
        }
        let body = OneCall4JSON.page(
            timeline, latitude: latitude, longitude: longitude, at: time, start: start, alwaysAlert: alwaysAlert,
            caller: caller)
        return (200, body)
    }

    /// Air pollution between `start=` and `end=`, never past now.
    private static func airHistory(
        _ query: [String: String], latitude: Double, longitude: Double, at time: Double
    ) -> (status: Int, body: String) {
        guard let start = query["start"].flatMap(Double.init), let end = query["end"].flatMap(Double.init),
            start <= end
        else {
            return (400, ErrorBodies.wrongParameter("start and end are required, start not after end"))
        }
        let readings = AirPollutionModel.history(
            latitude: latitude, longitude: longitude, from: start, to: min(end, time))
        return (200, AirPollutionJSON.render(readings, latitude: latitude, longitude: longitude))
    }

    /// One Call's weather at `dt=`, within OpenWeather's range: from 1979 to 4 days ahead.
    private static func timemachine(
        _ query: [String: String], latitude: Double, longitude: Double, at time: Double
    ) -> (status: Int, body: String) {
        guard let moment = query["dt"].flatMap(Double.init), moment >= OneCallJSON.firstHistory,
            moment <= time + 4 * 86_400
        else {
            return (400, ErrorBodies.oneCallInvalidDate)
        }
        return (200, OneCallJSON.timemachine(latitude: latitude, longitude: longitude, at: moment))
    }

    /// The places matching `q=`: OpenWeather answers at most five; without `limit`, one.
    private static func geocodeName(_ query: [String: String]) -> (status: Int, body: String) {
        guard let name = query["q"], !name.allSatisfy({ $0 == " " || $0 == "," }) else {
            return (400, ErrorBodies.wrongParameter("Nothing to geocode"))
        }
        let limit = min(max(query["limit"].flatMap { Int($0) } ?? 1, 1), 5)
        return (200, GeocodingJSON.direct(Array(Places.matching(name).prefix(limit))))
    }

    /// The place of `zip=`, or OpenWeather's 404.
    private static func geocodeZip(_ query: [String: String]) -> (status: Int, body: String) {
        guard let code = query["zip"], !code.isEmpty else {
            return (400, ErrorBodies.wrongParameter("Nothing to geocode"))
        }
        guard let found = Places.zip(code) else { return (404, ErrorBodies.zipNotFound) }
        return (200, GeocodingJSON.zip(found.code, found.place))
    }

    /// An alert's text by ID; `endless`: the hostile mode's made-up alerts are answered too.
    private static func alertDetail(
        id: String, at time: Double, alwaysAlert: Bool, endless: Bool
    ) -> (status: Int, body: String) {
        if endless, let detail = OneCall4JSON.endlessAlert(id: id, at: time) { return (200, detail) }
        guard let detail = OneCall4JSON.alert(id: id, alwaysAlert: alwaysAlert) else {
            return (404, ErrorBodies.oneCallAlertNotFound)
        }
        return (200, detail)
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
