import HTTPClient
import JSON

/// Calls `GET /data/2.5/weather` for one place. Blocking: the poller runs it on a worker thread.
public struct OpenWeatherClient: Sendable {
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
        let request = HTTPClientRequest(
            url: url(latitude: latitude, longitude: longitude),
            headers: [(name: "Accept", value: "application/json")],
            timeout: settings.timeout,
            maxBodyBytes: settings.maxBodyBytes
        )
        let response: HTTPClientResponse
        do {
            response = try http.get(request)
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
        return try WeatherDecoder.decode(response.body)
    }

    /// The request URL. It carries the key: never log it.
    func url(latitude: Double, longitude: Double) -> String {
        "\(settings.baseURL)/data/2.5/weather?lat=\(latitude)&lon=\(longitude)&units=metric"
            + "&lang=\(Self.percentEncoded(settings.language))&appid=\(Self.percentEncoded(settings.apiKey))"
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
