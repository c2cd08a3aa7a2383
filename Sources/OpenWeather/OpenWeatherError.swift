import HTTPClient

/// Why a request for one place failed. Descriptions are one line, carry
/// OpenWeather's own message where it sent one, and never the key.
public enum OpenWeatherError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A non-200 answer; `message` is OpenWeather's `message` field, or a short excerpt of the body.
    case http(status: Int, message: String, retryAfterSeconds: Double?)
    /// No usable HTTP answer: refused, timed out, TLS, DNS...
    case transport(HTTPClientError)
    /// A 200 whose body is not the weather we expect.
    case decode(String)
    /// A 200 that says there is nothing there: a place name the geocoder does not know.
    case noMatch(String)
    /// Not sent: a day's allowance had no room for it (a request past the room its poll held).
    case dailyLimit(String)

    /// The `code` label of `openweather_api_requests_total`.
    public var code: String {
        switch self {
        case .http(let status, _, _): String(status)
        case .transport(let error): error.kind
        case .decode: "decode"
        case .noMatch: "200"
        case .dailyLimit: "daily_limit"
        }
    }

    public var description: String {
        switch self {
        case .http(let status, let message, _):
            let text = message.isEmpty ? "" : ": \(message)"
            return "OpenWeather answered \(status)\(text)" + (hint.map { " (\($0))" } ?? "")
        case .transport(let error):
            return error.description
        case .decode(let reason):
            return "unusable response: \(reason)"
        case .noMatch(let reason):
            return reason
        case .dailyLimit(let reason):
            return "not sent: \(reason)"
        }
    }

    /// What a person can do about an HTTP answer. A 401 that names a subscription comes with a key that
    /// works (the other APIs take it): saying the key may be wrong would send them the wrong way.
    private var hint: String? {
        guard case .http(let status, let message, _) = self else { return nil }
        if status == 401, message.contains("subscription") {
            return "the key is valid, but not subscribed to this API"
        }
        return Self.hints[status]
    }

    private static let hints: [Int: String] = [
        401: "the API key is missing, wrong, or not active yet: a new key takes up to a couple of hours to work",
        429:
            """
        over the plan's rate limit: OpenWeather blocks the key for a while; lower \
        --openweather.max-requests-per-minute or raise the collectors' intervals
        """,
    ]
}
