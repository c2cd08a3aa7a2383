import Dispatch
import Encoding
import Glibc
import HTTPServer
import Platform

/// Answers the simulated API and the `/_simulator/` control paths.
struct SimulatorHandler: HTTPHandler {
    let state: Simulator.Shared

    private static let json = [(name: "Content-Type", value: "application/json; charset=utf-8")]

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        let query = Self.parameters(request.query)
        if request.method == "GET" || request.method == "HEAD", let endpoint = Endpoint(path: request.path) {
            api(endpoint, query, request: request, responder: responder)
            return
        }
        switch (request.method, request.path) {
        case ("POST", "/_simulator/fault"):
            responder.respond(addFault(query, body: request.body))
        case ("POST", "/_simulator/onecall"):
            responder.respond(setOneCall(query))
        case ("GET", "/_simulator/"), ("GET", "/_simulator"):
            responder.respond(Self.text(200, Simulator.controls(base: Self.linkBase(host: request.header("host")))))
        case ("POST", "/_simulator/weather"):
            responder.respond(shiftTemperatures(query))
        case ("DELETE", "/_simulator/weather"):
            responder.respond(clearShifts(query))
        case ("DELETE", "/_simulator/fault"):
            state.withLock { $0.faults = [] }
            responder.respond(Self.text(200, "faults cleared\n"))
        case ("GET", "/_simulator/requests"):
            let lines = state.withLock { $0.requests }.map {
                "\($0.time) \($0.latitude) \($0.longitude) \($0.status) \($0.path)\n"
            }
            responder.respond(Self.text(200, lines.joined()))
        default:
            responder.respond(Self.respondJSON(404, ErrorBodies.body(for: 404).text))
        }
    }

    /// POST /_simulator/fault: a fault for the coming requests; a body given replaces the answer's.
    private func addFault(_ query: [String: String], body: [UInt8]) -> HTTPResponse {
        guard var fault = Self.fault(from: query) else {
            return Self.text(400, "unknown fault; GET /_simulator/ lists the parameters\n")
        }
        if !body.isEmpty {
            let text = String(decoding: body, as: UTF8.self)
            if case .status(let code, _) = fault.response {
                fault.response = .answer(status: code, body: text)
            } else {
                fault.response = .body(text)
            }
        }
        if let refused = state.withLock({ $0.add(fault) }) { return Self.text(400, refused + "\n") }
        return Self.text(200, "fault added\n")
    }

    /// POST /_simulator/onecall: the subscription, the alert mode and the rain mode, each left alone when not given.
    private func setOneCall(_ query: [String: String]) -> HTTPResponse {
        let subscribed = query["subscribed"].flatMap(Bool.init)
        let endless = query["alerts"] == "endless"
        let alerts = query["alerts"].flatMap { ["always": true, "sometimes": false, "endless": false][$0] }
        let rain = query["rain"].flatMap { ["soon": true, "model": false][$0] }
        guard subscribed != nil || alerts != nil || rain != nil, query["subscribed"] == nil || subscribed != nil,
            query["alerts"] == nil || alerts != nil, query["rain"] == nil || rain != nil
        else {
            return Self.text(
                400, "give subscribed=true|false, alerts=always|sometimes|endless and/or rain=soon|model\n")
        }
        state.withLock { state in
            if let subscribed { state.oneCallSubscribed = subscribed }
            if let alerts {
                state.oneCallAlwaysAlert = alerts
                state.oneCallEndlessAlerts = endless
            }
            if let rain { state.oneCallRainSoon = rain }
        }
        return Self.text(
            200,
            """
            One Call: subscription \(subscribed.map { $0 ? "on" : "off" } ?? "unchanged"), alerts \
            \(query["alerts"] ?? "unchanged"), rain \(query["rain"] ?? "unchanged")\n
            """
        )
    }

    /// POST /_simulator/weather: temperatures shifted at one place or everywhere, optionally in forecasts only.
    private func shiftTemperatures(_ query: [String: String]) -> HTTPResponse {
        let hours = query["ahead_hours"].flatMap(Double.init)
        let place = Self.place(query)
        guard let shift = query["shift"].flatMap(Double.init), shift.isFinite, abs(shift) <= 100,
            case .success(let (latitude, longitude)) = place,
            query["ahead_hours"] == nil || hours.map({ (0...240).contains($0) }) == true
        else {
            let why = if case .failure(let refusal) = place { refusal.why + "; " } else { "" }
            return Self.text(
                400,
                """
                \(why)give shift=C (degrees to add, -100 to 100; negative for colder) and optionally \
                lat=LATITUDE (-90 to 90), lon=LONGITUDE (-180 to 180) and ahead_hours=H (forecasts only, \
                from H hours ahead; 0 to 240)\n
                """
            )
        }
        let ahead = hours.map { $0 * 3600 }
        let refused = state.withLock {
            $0.add(TemperatureShift(latitude: latitude, longitude: longitude, celsius: shift, ahead: ahead))
        }
        if let refused {
            return Self.text(400, refused + "\n")
        }
        let when = hours.map { " from \($0) hours ahead (forecasts only)" } ?? ""
        return Self.text(
            200, "temperatures \(Self.describe(latitude, longitude)) shifted by \(shift) °C\(when)\n"
        )
    }

    /// DELETE /_simulator/weather: every shift cleared, or one place's.
    private func clearShifts(_ query: [String: String]) -> HTTPResponse {
        // With lat=/lon=: that place's own shifts only; shifts made for every place stay.
        guard case .success(let (latitude, longitude)) = Self.place(query) else {
            return Self.text(
                400,
                """
                give lat=LATITUDE (-90 to 90) and/or lon=LONGITUDE (-180 to 180) to clear one place's shifts, \
                or neither for all\n
                """
            )
        }
        let (cleared, left) = state.withLock { state in
            let before = state.shifts.count
            if latitude == nil && longitude == nil {
                state.shifts = []
            } else {
                state.shifts.removeAll { $0.isLocal && $0.matches(latitude: latitude, longitude: longitude) }
            }
            return (before - state.shifts.count, state.shifts.count)
        }
        return Self.text(
            200,
            "\(cleared) temperature shifts cleared \(Self.describe(latitude, longitude)); \(left) left\n")
    }

    /// Why a control's `lat=` or `lon=` names no place.
    struct Refusal: Error {
        let why: String
    }

    /// A control's `lat=` and `lon=`, each nil when not given; refused when one given is not a coordinate
    /// (not a number, not finite, or past ±90° or ±180°).
    private static func place(_ query: [String: String]) -> Result<(latitude: Double?, longitude: Double?), Refusal> {
        func coordinate(_ name: String, _ limit: Double) -> Result<Double?, Refusal> {
            guard let text = query[name] else { return .success(nil) }
            guard let value = Double(text), value.isFinite, abs(value) <= limit else {
                return .failure(
                    Refusal(why: "\(name)=\(text.prefix(40)) is not a place: give -\(Int(limit)) to \(Int(limit))"))
            }
            return .success(value)
        }
        return coordinate("lat", 90).flatMap { latitude in coordinate("lon", 180).map { (latitude, $0) } }
    }

    private static func describe(_ latitude: Double?, _ longitude: Double?) -> String {
        switch (latitude, longitude) {
        case (nil, nil): "everywhere"
        case (let latitude?, nil): "at latitude \(latitude)"
        case (nil, let longitude?): "at longitude \(longitude)"
        case (let latitude?, let longitude?): "at \(latitude), \(longitude)"
        }
    }

    /// Every endpoint alike: the key check, the faults, the request log; then the endpoint's own answer.
    private func api(_ endpoint: Endpoint, _ query: [String: String], request: HTTPRequest, responder: HTTPResponder) {
        let now = SystemClock.monotonicSeconds()
        let latitude = query["lat"].flatMap(Double.init)
        let longitude = query["lon"].flatMap(Double.init)
        let wall = SystemClock.wallSeconds()
        let shifts = state.withLock { $0.shifts }.map { $0.at(now: wall) }
        let (fault, accepted, subscribed, alwaysAlert, rainSoon, endlessRound) = state.withLock { state in
            var round: Int?
            if state.oneCallEndlessAlerts {
                round = state.endlessRound
                if endpoint == .oneCall4Current { state.endlessRound += 1 }
            }
            return (
                state.faults.first {
                    $0.matches(latitude: latitude ?? .nan, path: endpoint.rawValue)
                        || $0.matches(latitude: latitude ?? .nan, path: request.path)
                },
                state.acceptedKeys.map { keys in query["appid"].map(keys.contains) ?? false } ?? !(query["appid"] ?? "")
                    .isEmpty,
                state.oneCallSubscribed, state.oneCallAlwaysAlert, state.oneCallRainSoon, round
            )
        }
        var response: Fault.Response
        var body: (contentType: String, text: String)
        if !accepted {
            response = .status(401)
            body = ErrorBodies.body(for: 401)
        } else if endpoint.needsOneCall && !subscribed {
            response = .status(401)
            body = (ErrorBodies.json, ErrorBodies.oneCallNoSubscription)
        } else {
            let answer = WeatherModel.$shifts.withValue(shifts) {
                endpoint.answer(
                    query, latitude: latitude, longitude: longitude, at: wall,
                    alwaysAlert: alwaysAlert, rainSoon: rainSoon,
                    path: request.path, linkBase: Self.linkBase(host: request.header("host")),
                    endlessRound: endlessRound)
            }
            body = (ErrorBodies.json, answer.body)
            response = answer.status == 200 ? fault?.response ?? .normal : .status(answer.status)
            // A fault's status gets OpenWeather's stock body for it; an answer's own error keeps its body.
            if answer.status == 200, case .status(let code, _) = response { body = ErrorBodies.body(for: code) }
        }
        var status = 200
        if case .status(let code, _) = response { status = code }
        state.withLock {
            if $0.requests.count < 1_000_000 {
                $0.requests.append(
                    .init(
                        time: now, latitude: latitude ?? .nan, longitude: longitude ?? .nan, status: status,
                        path: request.path))
            }
        }
        if let delay = fault?.delay, delay > .zero {
            Self.timed.asyncAfter(deadline: .now() + Self.dispatchInterval(delay)) { [body, response] in
                Self.send(response, body: body, endpoint: endpoint, responder: responder)
            }
        } else {
            Self.send(response, body: body, endpoint: endpoint, responder: responder)
        }
    }

    /// Page links point back here, as the real API's point at itself: at the host the client
    /// named, when that is a plain host (it goes into JSON unescaped).
    static func linkBase(host: String?) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        guard let host, !host.isEmpty, host.allSatisfy(plain.contains) else { return OneCall4JSON.realBase }
        return "http://" + host
    }

    private static func send(
        _ response: Fault.Response, body typedBody: (contentType: String, text: String), endpoint: Endpoint,
        responder: HTTPResponder
    ) {
        let body = typedBody.text
        switch response {
        case .normal:
            responder.respond(respondJSON(200, body))
        case .status(let code, let retryAfter):
            var headers = [(name: "Content-Type", value: typedBody.contentType)]
            if let retryAfter { headers.append((name: "Retry-After", value: retryAfter)) }
            responder.respond(HTTPResponse(status: code, headers: headers, body: [Array(body.utf8)]))
        case .malformed(let kind):
            responder.respond(respondJSON(200, malformed(body, kind, endpoint)))
        case .huge(let bytes):
            var payload = Array("{\"padding\":\"".utf8)
            payload += [UInt8](repeating: UInt8(ascii: "x"), count: max(bytes - payload.count - 2, 0))
            payload += Array("\"}".utf8)
            responder.respond(HTTPResponse(status: 200, headers: json, body: [payload]))
        case .trickle(let interval):
            let bytes = Array(body.utf8)
            responder.writeHead(status: 200, headers: json, contentLength: bytes.count)
            trickle(bytes[...], every: interval, responder: responder)
        case .close:
            responder.respond(HTTPResponse(status: 200, body: [], closeConnection: true))
        case .body(let text):
            responder.respond(respondJSON(200, text))
        case .answer(let code, let text):
            responder.respond(respondJSON(code, text))
        }
    }

    /// Where delayed and trickled answers are sent from: a queue of its own gets a thread of its own,
    /// so they go out on time even while CPU-bound work holds every thread of the global queue (a
    /// 100 ms delay once came 30 s late in a full test run).
    private static let timed = DispatchQueue(label: "simulator-timed-answers")

    /// Eight bytes at a time, until the body is out or the client is gone.
    private static func trickle(_ rest: ArraySlice<UInt8>, every interval: Duration, responder: HTTPResponder) {
        guard !rest.isEmpty else {
            responder.end()
            return
        }
        responder.writeBody(Array(rest.prefix(8)))
        timed.asyncAfter(deadline: .now() + dispatchInterval(interval)) {
            trickle(rest.dropFirst(8), every: interval, responder: responder)
        }
    }

    /// The endpoint's body broken in one way; the value it replaced stays behind under `"x"`.
    static func malformed(_ body: String, _ kind: Fault.Malformation, _ endpoint: Endpoint) -> String {
        let (number, absurd, required) = endpoint.breakable
        return switch kind {
        case .truncated: String(body.prefix(body.count / 2))
        case .notJSON: "<html><body><h1>Service Temporarily Unavailable</h1></body></html>"
        case .wrongTypes: body.replacing(#""\#(number)":"#, with: #""\#(number)":"\#(absurd)","x":"#)
        case .missingFields: body.replacing(#""\#(required)":"#, with: #""\#(required)_gone":"#)
        case .absurdNumbers: body.replacing(#""\#(number)":"#, with: #""\#(number)":\#(absurd),"x":"#)
        case .nan: body.replacing(#""\#(number)":"#, with: #""\#(number)":NaN,"x":"#)
        case .empty: ""
        }
    }

    static func fault(from query: [String: String]) -> Fault? {
        var fault = Fault()
        fault.latitude = query["lat"].flatMap(Double.init)
        if let path = query["path"] {
            guard Endpoint(path: path) != nil else { return nil }
            fault.path = path
        }
        if let delay = query["delay"] {
            guard let parsed = duration(delay) else { return nil }
            fault.delay = parsed
        }
        if let status = query["status"] {
            guard let code = Int(status), (100...599).contains(code) else { return nil }
            // As given, so the simulator can play a hostile upstream (`1e19`, a date in the year 9999);
            // a control character would end the header, so none is taken.
            let retryAfter = query["retry_after"]
            guard retryAfter?.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) ?? true else {
                return nil
            }
            fault.response = .status(code, retryAfter: retryAfter)
        } else if let kind = query["malformed"] {
            guard let malformation = Fault.Malformation(rawValue: kind) else { return nil }
            fault.response = .malformed(malformation)
        } else if let size = query["huge"] {
            guard let bytes = Int(size), bytes > 0 else { return nil }
            fault.response = .huge(bytes: bytes)
        } else if let interval = query["trickle"] {
            guard let parsed = duration(interval) else { return nil }
            fault.response = .trickle(interval: parsed)
        } else if query["close"] != nil {
            fault.response = .close
        } else if let text = query["body"] {
            fault.response = .body(text)
        }
        return fault
    }

    /// `250ms`, `2s`, `1m`.
    private static func duration(_ text: String) -> Duration? {
        for (suffix, scale) in [("ms", 0.001), ("s", 1.0), ("m", 60.0)] where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value >= 0 {
                return .milliseconds(Int64(value * scale * 1000))
            }
        }
        return nil
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        .nanoseconds(
            Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000))
    }

    static func parameters(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            result[formDecoded(parts[0])] = parts.count > 1 ? formDecoded(parts[1]) : ""
        }
        return result
    }

    /// `%2C` and `+` as a form sends them; a broken escape stays as written.
    private static func formDecoded(_ text: Substring) -> String {
        PercentEncoding.decoded(text, plusAsSpace: true, broken: .keep)!
    }

    private static func respondJSON(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: json, body: [Array(body.utf8)])
    }

    private static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
            body: [Array(body.utf8)])
    }
}
