/// One call to an OpenWeather endpoint, without the key: the client adds `appid` itself, so
/// nothing that builds or logs a request ever holds the key.
public struct APIRequest: Sendable, Equatable {
    public struct Item: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// `/data/2.5/weather`.
    public var path: String
    /// Sent in this order, percent-encoded by the client.
    public var query: [Item]

    public init(path: String, query: [Item]) {
        self.path = path
        self.query = query
    }
}

/// What answers an `APIRequest`: the OpenWeather client, or a fake in tests that serves fixture bodies.
public protocol OpenWeatherTransport: Sendable {
    /// The body of a 200 answer; any other answer or failure throws. `resend` is asked right before
    /// the request would go out again (the client's resend after a kept connection closed, which
    /// OpenWeather may bill): it counts that request and says whether it may go.
    func get(_ request: APIRequest, resend: () -> Bool) throws(OpenWeatherError) -> [UInt8]
}

extension OpenWeatherTransport {
    /// A request whose resends no budget counts: for callers outside the poller and backfill (tools, tests).
    public func get(_ request: APIRequest) throws(OpenWeatherError) -> [UInt8] {
        try get(request, resend: { true })
    }
}

extension CurrentWeather {
    /// `/data/2.5/weather` for one place, in metric units.
    public static func request(latitude: Double, longitude: Double, language: String) -> APIRequest {
        APIRequest(
            path: "/data/2.5/weather",
            query: [
                .init("lat", String(latitude)), .init("lon", String(longitude)), .init("units", "metric"),
                .init("lang", language),
            ])
    }
}
