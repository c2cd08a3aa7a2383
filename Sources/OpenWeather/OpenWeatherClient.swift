import HTTPClient
import JSON

/// Calls OpenWeather endpoints with the key. Blocking: the poller runs it on a worker thread.
public struct OpenWeatherClient: OpenWeatherTransport {
    public struct Settings: Sendable {
        /// Scheme, host, optional port and path prefix, without a trailing slash.
        public var baseURL: String
        public var apiKey: String
        public var language: String
        public var timeout: Duration
        /// A weather answer is about 1 KB; anything far larger is not one.
        public var maxBodyBytes: Int

        public init(
            baseURL: String, apiKey: String, language: String = "en",
            timeout: Duration = .seconds(10), maxBodyBytes: Int = 256 * 1024
        ) {
            self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
            self.apiKey = apiKey
            self.language = language
            self.timeout = timeout
            self.maxBodyBytes = maxBodyBytes
        }
    }

    public let settings: Settings
    private let http: HTTPClient

    public init(settings: Settings, userAgent: String) {
        self.settings = settings
        self.http = HTTPClient(userAgent: userAgent)
    }

    public func currentWeather(latitude: Double, longitude: Double) throws(OpenWeatherError) -> CurrentWeather {
        try WeatherDecoder.decode(get(CurrentWeather.request(latitude: latitude, longitude: longitude, language: settings.language)))
    }

    /// `GET` the request with the key added; the body of a 200, else the failure.
    public func get(_ request: APIRequest) throws(OpenWeatherError) -> [UInt8] {
        let http = HTTPClientRequest(
            url: url(request),
            headers: [(name: "Accept", value: "application/json")],
            timeout: settings.timeout,
            maxBodyBytes: settings.maxBodyBytes
        )
        let response: HTTPClientResponse
        do {
            response = try self.http.get(http)
        } catch {
            throw .transport(error)
        }
        guard response.status == 200 else {
            throw .http(
                status: response.status,
                message: Self.errorMessage(response.body, redacting: settings.apiKey),
                retryAfterSeconds: response.header("retry-after").flatMap(Self.retryAfter)
            )
        }
        return response.body
    }

    /// The request URL. It carries the key: never log it.
    func url(_ request: APIRequest) -> String {
        var url = settings.baseURL + request.path + "?"
        for item in request.query { url += "\(Self.percentEncoded(item.name))=\(Self.percentEncoded(item.value))&" }
        return url + "appid=\(Self.percentEncoded(settings.apiKey))"
    }

    /// OpenWeather's `message`, else the start of the body (an HTML 5xx page, say);
    /// the key is cut out in case an upstream or proxy echoes the request.
    static func errorMessage(_ body: [UInt8], redacting key: String) -> String {
        var text: String
        if let parsed = try? JSONParser.parse(body), case .string(let message)? = parsed["message"] {
            text = message
        } else {
            text = String(decoding: body.prefix(160), as: UTF8.self)
        }
        text = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        if !key.isEmpty { text = text.replacing(key, with: "<redacted>") }
        return String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    /// Retry-After in seconds; the HTTP-date form is rare from APIs and is ignored.
    static func retryAfter(_ value: String) -> Double? {
        guard let seconds = Double(value.filter { $0 != " " }), seconds >= 0, seconds.isFinite else {
            return nil
        }
        return seconds
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}
