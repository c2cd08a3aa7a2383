import Encoding
import Glibc
import HTTPClient
import JSON
import Platform

/// The OpenWeather API over one HTTP client, whose keep-alive connections every endpoint shares:
/// `get` for any `APIRequest`, `currentWeather` on top of it. Blocking: the poller runs it on worker
/// threads.
public struct OpenWeatherClient: OpenWeatherTransport {
    public struct Configuration: Sendable {
        /// Scheme, host, optional port and path prefix, without a trailing slash.
        public var baseURL: String
        public var apiKey: String
        public var language: String
        public var timeout: Duration
        /// A weather answer is about 1 KB; anything far larger is not one.
        public var maxBodyBytes: Int
        /// Proxies, trust, connection reuse.
        public var http: HTTPClient.Configuration
        /// What no error may show: the key and the proxies' credentials.
        var secrets: [String] { [apiKey] + http.proxy.secrets }

        public init(
            baseURL: String, apiKey: String, language: String = "en",
            timeout: Duration = .seconds(10), maxBodyBytes: Int = 256 * 1024,
            http: HTTPClient.Configuration = .init()
        ) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.apiKey = apiKey
            self.language = language
            self.timeout = timeout
            self.maxBodyBytes = maxBodyBytes
            self.http = http
        }
    }

    public let configuration: Configuration
    private let http: HTTPClient
    /// The base URL, parsed once; each request only puts its own target on it.
    private let base: RequestURL
    /// The base URL's path, without a trailing slash: what every request's path is appended to.
    private let pathPrefix: String

    /// Throws `.invalidURL` for a base URL that is not one (the reason, not the URL, which could hold credentials).
    public init(configuration: Configuration, userAgent: String) throws(HTTPClientError) {
        let base = try RequestURL(parsing: configuration.baseURL)
        guard !base.target.contains("?") else {
            throw .invalidURL("a base URL takes no query (?)")
        }
        self.base = base
        self.pathPrefix = String(base.target.reversed().drop { $0 == "/" }.reversed())
        self.configuration = configuration
        var http = configuration.http
        http.userAgent = userAgent
        self.http = HTTPClient(configuration: http)
    }

    public func currentWeather(latitude: Double, longitude: Double) throws(OpenWeatherError) -> CurrentWeather {
        try WeatherDecoder.decode(
            get(CurrentWeather.request(latitude: latitude, longitude: longitude, language: configuration.language)))
    }

    /// `GET` the request with the key added: the body of a 2xx answer. Any other status is `.http`
    /// with OpenWeather's message (a redirect: where to, as it is not followed), and a request that
    /// got no answer is `.transport`.
    public func get(_ request: APIRequest, resend: () -> Bool) throws(OpenWeatherError) -> [UInt8] {
        let response: HTTPClientResponse
        do {
            response = try self.http.get(try httpRequest(request), resend: resend)
        } catch {
            throw .transport(error)
        }
        guard (200...299).contains(response.status) else {
            var message = Self.errorMessage(response.body, redacting: configuration.secrets)
            if (300...399).contains(response.status), let location = response.header("location") {
                message =
                    """
                    redirect to \(Redaction.excerpt(location, maxBytes: 300, secrets: configuration.secrets)), not \
                    followed: check --openweather.url
                    """
            }
            throw .http(
                status: response.status, message: message,
                retryAfterSeconds: response.header("retry-after").flatMap {
                    RetryAfter.seconds($0, now: SystemClock.wallSeconds())
                })
        }
        return response.body
    }

    /// The HTTP request: the parsed base URL with this request's target. It carries the key: never log
    /// its target (a `RequestURL` shows only `host:port`).
    func httpRequest(_ request: APIRequest) throws(HTTPClientError) -> HTTPClientRequest {
        HTTPClientRequest(
            url: try base.with(target: target(request)),
            headers: [(name: "Accept", value: "application/json")],
            timeout: configuration.timeout,
            maxBodyBytes: configuration.maxBodyBytes
        )
    }

    /// Path and query as sent on the request line: the base URL's path, the request's, and its query
    /// with the key, percent-encoded. It carries the key: never log it.
    func target(_ request: APIRequest) -> String {
        let items = request.query.map { ($0.name, $0.value) } + [("appid", configuration.apiKey)]
        let path = request.path.hasPrefix("/") ? request.path : "/" + request.path
        return pathPrefix + path + "?"
            + items.map { "\(PercentEncoding.encoded($0.0))=\(PercentEncoding.encoded($0.1))" }.joined(separator: "&")
    }

    /// OpenWeather's `message` (its longest is about 200 bytes), else the start of the body (an HTML
    /// 5xx page, say); the secrets are cut out before the text is, in case an upstream or proxy
    /// echoes the request.
    static func errorMessage(_ body: [UInt8], redacting secrets: [String]) -> String {
        var text: String
        if let parsed = try? JSONParser.parse(body), case .string(let message)? = parsed["message"] {
            text = Redaction.excerpt(message, maxBytes: 400, secrets: secrets)
        } else {
            text = Redaction.excerpt(String(decoding: body, as: UTF8.self), maxBytes: 160, secrets: secrets)
        }
        text = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        return String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
