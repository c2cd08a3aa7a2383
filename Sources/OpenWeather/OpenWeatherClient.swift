import HTTPClient
import JSON

/// The OpenWeather API over one HTTP client, whose keep-alive connections every endpoint shares:
/// `get` for any `APIRequest`, `currentWeather` on top of it. Blocking: the poller runs it on worker
/// threads.
public struct OpenWeatherClient: OpenWeatherTransport {
    public struct Settings: Sendable {
        /// Scheme, host, optional port and path prefix, without a trailing slash.
        public var baseURL: String
        public var apiKey: String
        public var language: String
        public var timeout: Duration
        /// A weather answer is about 1 KB; anything far larger is not one.
        public var maxBodyBytes: Int
        /// Proxies, trust, connection reuse.
        public var http: HTTPClient.Configuration

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

    public let settings: Settings
    private let http: HTTPClient

    public init(settings: Settings, userAgent: String) {
        self.settings = settings
        var configuration = settings.http
        configuration.userAgent = userAgent
        self.http = HTTPClient(configuration: configuration)
    }

    public func currentWeather(latitude: Double, longitude: Double) throws(OpenWeatherError) -> CurrentWeather {
        try WeatherDecoder.decode(get(CurrentWeather.request(latitude: latitude, longitude: longitude, language: settings.language)))
    }

    /// `GET` the request with the key added: the body of a 2xx answer. Any other status is `.http`
    /// with OpenWeather's message (a redirect: where to, as it is not followed), and a request that
    /// got no answer is `.transport`.
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
        guard (200...299).contains(response.status) else {
            var message = Self.errorMessage(response.body, redacting: settings.apiKey)
            if (300...399).contains(response.status), let location = response.header("location") {
                message = "redirect to \(Self.redacted(String(location.prefix(300)), key: settings.apiKey)), not followed: check --openweather.url"
            }
            throw .http(
                status: response.status, message: message,
                retryAfterSeconds: response.header("retry-after").flatMap(Self.retryAfter))
        }
        return response.body
    }

    /// The request URL. It carries the key: never log it.
    func url(_ request: APIRequest) -> String {
        let items = request.query.map { ($0.name, $0.value) } + [("appid", settings.apiKey)]
        let path = request.path.hasPrefix("/") ? request.path : "/" + request.path
        return settings.baseURL + path + "?" + items.map { "\(Self.percentEncoded($0.0))=\(Self.percentEncoded($0.1))" }.joined(separator: "&")
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
        text = redacted(String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 }), key: key)
        return String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    /// `text` without the key, whether it is echoed raw or percent-encoded (either hex case,
    /// `+` for a space, escapes mixed with plain characters), as an upstream may echo the URL.
    static func redacted(_ text: String, key: String) -> String {
        let keyBytes = Array(key.utf8)
        guard !keyBytes.isEmpty else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if let end = keyEnd(in: bytes, from: index, key: keyBytes) {
                out += "<redacted>".utf8
                index = end
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Where the key ends if it starts at `start`, reading each of its bytes in any encoded form.
    private static func keyEnd(in bytes: [UInt8], from start: Int, key: [UInt8]) -> Int? {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var index = start
        for expected in key {
            guard index < bytes.count else { return nil }
            if bytes[index] == expected {
                index += 1
            } else if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                      let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]), high << 4 | low == expected {
                index += 3
            } else if expected == UInt8(ascii: " "), bytes[index] == UInt8(ascii: "+") {
                index += 1
            } else {
                return nil
            }
        }
        return index
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
