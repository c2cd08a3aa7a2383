/// A way for the simulated API to misbehave, for tests and failure drills.
public struct Fault: Sendable, Equatable {
    public enum Response: Sendable, Equatable {
        /// The usual plausible answer.
        case normal
        /// This status with OpenWeather's real error body for it (an HTML page for 5xx), and a
        /// `Retry-After` header sent as given (a hostile upstream's `1e19` too).
        case status(Int, retryAfter: String? = nil)
        /// A 200 whose body is broken in the given way.
        case malformed(Malformation)
        /// A 200 with a valid start and `bytes` of padding: an answer far too large.
        case huge(bytes: Int)
        /// The normal body, sent a few bytes at a time with `interval` between them.
        case trickle(interval: Duration)
        /// Close the connection without answering.
        case close
        /// A 200 with exactly this body (a captured real response, say).
        case body(String)
        /// This status with exactly this body: an upstream (or a proxy) that echoes the request, the
        /// key altered, in its error (the fault API: `status=` with a body).
        case answer(status: Int, body: String)
    }

    public enum Malformation: String, Sendable, CaseIterable {
        /// Cut in the middle.
        case truncated
        /// An HTML page instead of JSON.
        case notJSON
        /// Numbers sent as strings.
        case wrongTypes
        /// No `main` object (weather, air pollution), `list` (forecast) or `lat` (geocoding): a field the
        /// answer cannot be read without.
        case missingFields
        /// A temperature no planet of ours has, an index of 9, a latitude of 999.
        case absurdNumbers
        /// `"temp": NaN` (or `aqi`, `lat`), which is not JSON.
        case nan
        /// Nothing at all.
        case empty
    }

    /// Waited before answering.
    public var delay: Duration
    public var response: Response
    /// Only requests for this latitude (to 0.01°) are affected; nil: all.
    public var latitude: Double?
    /// Only requests for this endpoint (`/data/2.5/air_pollution`) are affected; nil: all.
    public var path: String?

    public init(delay: Duration = .zero, response: Response = .normal, latitude: Double? = nil, path: String? = nil) {
        self.delay = delay
        self.response = response
        self.latitude = latitude
        self.path = path
    }

    func matches(latitude requested: Double, path requestedPath: String) -> Bool {
        if let path, path != requestedPath { return false }
        guard let latitude else { return true }
        return abs(latitude - requested) < 0.005
    }
}
