import Dispatch
import Glibc
import HTTPServer

/// Answers the simulated API and the `/_simulator/` control paths.
struct SimulatorHandler: HTTPHandler {
    let state: Simulator.Shared

    private static let json = [(name: "Content-Type", value: "application/json; charset=utf-8")]

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        let query = Self.parameters(request.query)
        switch (request.method, request.path) {
        case ("GET", "/data/2.5/weather"), ("HEAD", "/data/2.5/weather"):
            weather(query, responder: responder)
        case ("POST", "/_simulator/fault"):
            guard var fault = Self.fault(from: query) else {
                responder.respond(Self.text(400, "unknown fault; see Simulator.swift for the parameters\n"))
                return
            }
            if !request.body.isEmpty { fault.response = .body(String(decoding: request.body, as: UTF8.self)) }
            state.withLock { $0.faults.append(fault) }
            responder.respond(Self.text(200, "fault added\n"))
        case ("DELETE", "/_simulator/fault"):
            state.withLock { $0.faults = [] }
            responder.respond(Self.text(200, "faults cleared\n"))
        case ("GET", "/_simulator/requests"):
            let lines = state.withLock { $0.requests }.map { "\($0.time) \($0.latitude) \($0.longitude) \($0.status)\n" }
            responder.respond(Self.text(200, lines.joined()))
        default:
            responder.respond(Self.respondJSON(404, ErrorBodies.body(for: 404).text))
        }
    }

    private func weather(_ query: [String: String], responder: HTTPResponder) {
        let now = Clock.monotonic()
        let latitude = query["lat"].flatMap(Double.init)
        let longitude = query["lon"].flatMap(Double.init)
        let (fault, accepted) = state.withLock { state in
            (state.faults.first { $0.matches(latitude: latitude ?? .nan) },
             state.acceptedKeys.map { keys in query["appid"].map(keys.contains) ?? false } ?? !(query["appid"] ?? "").isEmpty)
        }
        let response: Fault.Response
        let body: String
        if !accepted {
            response = .status(401)
            body = ErrorBodies.body(for: 401).text
        } else if let latitude, let longitude, (-90...90).contains(latitude), (-180...180).contains(longitude) {
            response = fault?.response ?? .normal
            let reading = WeatherModel.reading(latitude: latitude, longitude: longitude, at: Clock.wall())
            body = WeatherJSON.render(reading, units: query["units"] ?? "standard", cityID: Int(abs(latitude * 1000 + longitude)))
        } else {
            response = .status(400)
            body = ErrorBodies.wrongParameter(latitude.map { (-90...90).contains($0) } == true ? "wrong longitude" : "wrong latitude")
        }
        var status = 200
        if case .status(let code, _) = response { status = code }
        state.withLock {
            if $0.requests.count < 1_000_000 {
                $0.requests.append(.init(time: now, latitude: latitude ?? .nan, longitude: longitude ?? .nan, status: status))
            }
        }
        if let delay = fault?.delay, delay > .zero {
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.dispatchInterval(delay)) {
                Self.send(response, body: body, responder: responder)
            }
        } else {
            Self.send(response, body: body, responder: responder)
        }
    }

    private static func send(_ response: Fault.Response, body: String, responder: HTTPResponder) {
        switch response {
        case .normal:
            responder.respond(respondJSON(200, body))
        case .status(let code, let retryAfter):
            // A 400 or 401 decided above carries its own body; a fault's status gets the stock one.
            let error = body.contains("\"cod\":200") ? ErrorBodies.body(for: code) : (contentType: "application/json; charset=utf-8", text: body)
            var headers = [(name: "Content-Type", value: error.contentType)]
            if let retryAfter { headers.append((name: "Retry-After", value: String(retryAfter))) }
            responder.respond(HTTPResponse(status: code, headers: headers, body: [Array(error.text.utf8)]))
        case .malformed(let kind):
            responder.respond(respondJSON(200, malformed(body, kind)))
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
        }
    }

    /// Eight bytes at a time, until the body is out or the client is gone.
    private static func trickle(_ rest: ArraySlice<UInt8>, every interval: Duration, responder: HTTPResponder) {
        guard !rest.isEmpty else { responder.end(); return }
        responder.writeBody(Array(rest.prefix(8)))
        DispatchQueue.global().asyncAfter(deadline: .now() + dispatchInterval(interval)) {
            trickle(rest.dropFirst(8), every: interval, responder: responder)
        }
    }

    static func malformed(_ body: String, _ kind: Fault.Malformation) -> String {
        switch kind {
        case .truncated: String(body.prefix(body.count / 2))
        case .notJSON: "<html><body><h1>Service Temporarily Unavailable</h1></body></html>"
        case .wrongTypes: body.replacing(#""temp":"#, with: #""temp":"warm","x":"#)
        case .missingFields: body.replacing(#""main":{"#, with: #""main_gone":{"#)
        case .absurdNumbers: body.replacing(#""temp":"#, with: #""temp":9999,"x":"#)
        case .nan: body.replacing(#""temp":"#, with: #""temp":NaN,"x":"#)
        case .empty: ""
        }
    }

    static func fault(from query: [String: String]) -> Fault? {
        var fault = Fault()
        fault.latitude = query["lat"].flatMap(Double.init)
        if let delay = query["delay"] {
            guard let parsed = duration(delay) else { return nil }
            fault.delay = parsed
        }
        if let status = query["status"] {
            guard let code = Int(status), (100...599).contains(code) else { return nil }
            fault.response = .status(code, retryAfterSeconds: query["retry_after"].flatMap { Int($0) })
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
        }
        return fault
    }

    /// `250ms`, `2s`, `1m`.
    private static func duration(_ text: String) -> Duration? {
        for (suffix, scale) in [("ms", 0.001), ("s", 1.0), ("m", 60.0)] where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value >= 0 { return .milliseconds(Int64(value * scale * 1000)) }
        }
        return nil
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        .nanoseconds(Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000))
    }

    static func parameters(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            result[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return result
    }

    private static func respondJSON(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: json, body: [Array(body.utf8)])
    }

    private static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")], body: [Array(body.utf8)])
    }
}

enum Clock {
    static func monotonic() -> Double { now(CLOCK_MONOTONIC) }
    static func wall() -> Double { now(CLOCK_REALTIME) }

    private static func now(_ clock: clockid_t) -> Double {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
