import Encoding
import Glibc

/// A forward proxy: `http://[user:password@]host[:port]` (port 80 by default). Only its host and
/// port are ever shown; the credentials go out only as `Proxy-Authorization`.
public struct ProxyServer: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable
{
    /// Without brackets for IPv6.
    let host: String
    let port: UInt16
    let hostIsIPAddress: Bool
    /// `Basic ...`, or nil without credentials.
    let authorization: String?
    /// The credentials in each form an echo may show them (see `secrets(user:password:)`).
    let secrets: [String]

    /// `host:port`: all of the proxy that may be shown.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    public var debugDescription: String { description }
    /// `dump` and debuggers see `host:port` only, never the credentials.
    public var customMirror: Mirror { Mirror(self, children: ["proxy": description]) }

    /// Accepts `http://` URLs and, like curl and Go, a bare `host:port`. `origin` names where
    /// the text came from (a flag, a variable) for the error, which never quotes the text itself.
    public init(parsing text: String, origin: String) throws(HTTPClientError) {
        var text = text
        if !text.contains("://") { text = "http://" + text }
        let schemeEnd = text.firstRange(of: "://")!
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" else {
            let shown =
                scheme.count <= 10 && scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
                ? "\(scheme):// " : ""
            let unset = origin.hasPrefix("$") ? ", or unset \(origin.dropFirst()) for the exporter" : ""
            throw .invalidURL(
                """
                \(origin): \(shown)proxies are not supported; give an http:// proxy such as \
                http://proxy.example:3128\(unset)
                """
            )
        }
        var rest = text[schemeEnd.upperBound...]
        rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var authorization: String?
        var secrets: [String] = []
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = PercentEncoding.decoded(parts[0]),
                let password = parts.count > 1 ? PercentEncoding.decoded(parts[1]) : ""
            else {
                throw .invalidURL("\(origin): the proxy credentials have a bad %-escape")
            }
            authorization = "Basic " + Base64.encoded("\(user):\(password)".utf8)
            secrets = Self.secrets(user: user, password: password)
        }
        // The rest is an authority like a request URL's; its parser checks host and port.
        let parsed: RequestURL
        do {
            parsed = try RequestURL(parsing: "http://\(rest)/")
        } catch .invalidURL(let reason) {
            throw .invalidURL("\(origin): not a proxy URL: \(reason); give one like http://proxy.example:3128")
        }
        host = parsed.host
        // Without a port, 80, as for any http:// URL (and as in Go).
        port = parsed.port
        hostIsIPAddress = parsed.hostIsIPAddress
        self.authorization = authorization
        self.secrets = secrets
    }

    /// What redaction looks for: `user:password` (its percent-encoded form, as in the URL, is found
    /// by the same search), the base64 of it that `Proxy-Authorization: Basic` carries, and the
    /// password alone. A password shorter than `Redaction.shortestPiece` alone would blank out
    /// common letters in every line; its other forms are still cut.
    static func secrets(user: String, password: String) -> [String] {
        let pair = "\(user):\(password)"
        return [pair, Base64.encoded(pair.utf8)] + (password.utf8.count >= Redaction.shortestPiece ? [password] : [])
    }

    public static func == (lhs: ProxyServer, rhs: ProxyServer) -> Bool {
        lhs.host == rhs.host && lhs.port == rhs.port && lhs.authorization == rhs.authorization
    }
}

/// Which proxy, if any, a request goes through: the way curl and Go read
/// `https_proxy`/`HTTPS_PROXY`, `http_proxy`/`HTTP_PROXY`, `ALL_PROXY` and
/// `no_proxy`/`NO_PROXY`, or one proxy for everything given explicitly.
public struct ProxyConfiguration: Sendable, Equatable {
    let httpProxy: ProxyServer?
    let httpsProxy: ProxyServer?
    let bypass: NoProxy

    /// Every request goes straight to its host.
    public static let direct = ProxyConfiguration(httpProxy: nil, httpsProxy: nil, bypass: NoProxy(""))

    /// `proxy` for every request; NO_PROXY does not apply to a proxy named explicitly.
    public init(proxy: ProxyServer) {
        self.init(httpProxy: proxy, httpsProxy: proxy, bypass: NoProxy(""))
    }

    init(httpProxy: ProxyServer?, httpsProxy: ProxyServer?, bypass: NoProxy) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.bypass = bypass
    }

    /// The lowercase name wins over the uppercase one, as in curl; `ALL_PROXY` is the
    /// fallback for both schemes. Empty values count as unset.
    public init(environment: [String: String]) throws(HTTPClientError) {
        func value(_ name: String) -> (name: String, text: String)? {
            for candidate in [name.lowercased(), name.uppercased()] {
                if let text = environment[candidate], !text.isEmpty { return (candidate, text) }
            }
            return nil
        }
        func server(_ name: String) throws(HTTPClientError) -> ProxyServer? {
            guard let found = value(name) ?? value("all_proxy") else { return nil }
            return try ProxyServer(parsing: found.text, origin: "$\(found.name)")
        }
        self.init(
            httpProxy: try server("http_proxy"), httpsProxy: try server("https_proxy"),
            bypass: NoProxy(value("no_proxy")?.text ?? ""))
    }

    /// Every proxy's credentials in every form an echo may show them, for redaction.
    public var secrets: [String] {
        (httpProxy?.secrets ?? []) + (httpsProxy == httpProxy ? [] : httpsProxy?.secrets ?? [])
    }

    /// The names of the variables `init(environment:)` reads, for messages and docs.
    public static let environmentNames = [
        "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
    ]

    /// The proxy for `url`, or nil to connect directly.
    func proxy(for url: RequestURL) -> ProxyServer? {
        guard let proxy = url.isTLS ? httpsProxy : httpProxy else { return nil }
        return bypass.matches(host: url.host, port: url.port) ? nil : proxy
    }
}

/// A `NO_PROXY` list: comma- or space-separated entries, each `*` (no proxy at all), a host
/// name (itself and its subdomains; a leading dot is optional), an IP address, a CIDR block,
/// any of them with `:port` to match that port only. IP entries match IP literals in URLs, not
/// names that resolve to them, as in Go.
struct NoProxy: Sendable, Equatable {
    enum Rule: Sendable, Equatable {
        case everything
        case domain(String, port: UInt16?)
        case network(bytes: [UInt8], prefixBits: Int, port: UInt16?)
    }

    let rules: [Rule]

    init(_ text: String) {
        var rules: [Rule] = []
        for raw in text.split(whereSeparator: { $0 == "," || $0 == " " }) {
            var entry = raw.lowercased()
            if entry == "*" {
                rules.append(.everything)
                continue
            }
            var port: UInt16?
            // host:port and [v6]:port; a bare IPv6 address has more than one colon.
            if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
                let after = entry[entry.index(after: close)...]
                if after.hasPrefix(":") { port = UInt16(after.dropFirst()) }
                entry = String(entry[entry.index(after: entry.startIndex)..<close])
            } else if entry.filter({ $0 == ":" }).count == 1, let colon = entry.firstIndex(of: ":") {
                port = UInt16(entry[entry.index(after: colon)...])
                entry = String(entry[..<colon])
            }
            if let slash = entry.firstIndex(of: "/") {
                if let address = Self.addressBytes(String(entry[..<slash])),
                    let bits = Int(entry[entry.index(after: slash)...]),
                    (0...(address.count * 8)).contains(bits)
                {
                    rules.append(.network(bytes: address, prefixBits: bits, port: port))
                }
                continue
            }
            if let address = Self.addressBytes(entry) {
                rules.append(.network(bytes: address, prefixBits: address.count * 8, port: port))
                continue
            }
            while entry.hasPrefix(".") || entry.hasPrefix("*.") { entry.removeFirst(entry.hasPrefix(".") ? 1 : 2) }
            if !entry.isEmpty { rules.append(.domain(entry, port: port)) }
        }
        self.rules = rules
    }

    func matches(host: String, port: UInt16) -> Bool {
        let address = Self.addressBytes(host)
        return rules.contains { rule in
            switch rule {
            case .everything:
                return true
            case .domain(let name, let rulePort):
                guard rulePort == nil || rulePort == port else { return false }
                return host == name || host.hasSuffix("." + name)
            case .network(let bytes, let bits, let rulePort):
                guard rulePort == nil || rulePort == port, let address, address.count == bytes.count else {
                    return false
                }
                for bit in 0..<bits where (address[bit / 8] ^ bytes[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 {
                    return false
                }
                return true
            }
        }
    }

    /// 4 bytes for IPv4, 16 for IPv6, nil for a name.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }
}
