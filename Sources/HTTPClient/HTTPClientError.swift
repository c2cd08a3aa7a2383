/// Why a request produced no response. No case carries the URL's path or query,
/// which may hold an API key: at most scheme, host and port.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the URL, without echoing it.
    case invalidURL(String)
    /// Name resolution of `host` failed, with the resolver's reason.
    case dns(host: String, String)
    /// Connecting failed or the connection broke (refused, unreachable, reset), naming host:port.
    case connect(String)
    /// The proxy failed or refused: unreachable, refused the tunnel, asked for credentials, or
    /// closed it before the origin answered. Names the proxy's host:port, never its credentials.
    case proxy(String)
    /// The request's deadline passed.
    case timeout
    /// The TLS handshake or certificate verification failed, with OpenSSL's reason.
    case tls(String)
    /// The body is larger than the request's `maxBodyBytes`.
    case tooLarge(limit: Int)
    /// The response broke HTTP/1.1: bad status line, bad chunked encoding, truncated body, ...
    case malformed(String)

    public var description: String {
        switch self {
        case .invalidURL(let reason): "invalid URL: \(reason)"
        case .dns(let host, let reason): "DNS lookup of \(host) failed: \(reason)"
        case .connect(let reason): reason
        case .proxy(let reason): reason
        case .timeout: "request timed out: the deadline passed before the response was complete"
        case .tls(let reason): "TLS failed: \(reason)"
        case .tooLarge(let limit): "response body exceeds the limit of \(limit) bytes"
        case .malformed(let reason): "malformed response: \(reason)"
        }
    }

    /// Short word for a metric label.
    public var kind: String {
        switch self {
        case .invalidURL: "invalid_url"
        case .dns: "dns"
        case .connect: "connect"
        case .proxy: "proxy"
        case .timeout: "timeout"
        case .tls: "tls"
        case .tooLarge, .malformed: "decode"
        }
    }
}
