import Glibc

/// Where to listen and how much to tolerate from clients; the defaults suit a Prometheus exporter.
public struct HTTPServerConfiguration: Sendable {
    /// Where it listens: each listener serves the same handler under the same limits, TLS and headers.
    public var listeners: [Listen]
    /// Request line plus headers; beyond it 431 (or 414 when the request line alone is too long).
    public var maxRequestHeadBytes: Int = 16 * 1024
    /// Header fields per request; beyond it 431.
    public var maxHeaderCount: Int = 100
    /// Largest Content-Length accepted; beyond it 413.
    public var maxBodyBytes: Int = 64 * 1024
    /// From a connection's accept, or a request's first byte, until the request is complete.
    public var readTimeout: Duration = .seconds(10)
    /// Keep-alive wait between requests.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a response may make no progress because the client stopped reading.
    public var writeTimeout: Duration = .seconds(10)
    /// Open connections across all loops; at the limit the longest-idle connection is dropped, or the new one refused.
    public var maxConnections: Int = 4096
    /// How long without a refusal at `maxConnections` ends an episode there: one warning when refusals
    /// start, one with their count when they have stopped this long.
    public var limitQuietPeriod: Duration = .seconds(5)
    /// Event-loop threads, each with its own epoll.
    public var eventLoops: Int = HTTPServerConfiguration.onlineCPUs
    /// Rare server events worth a log line (accept failures, fd exhaustion); never per-request noise.
    public var onError: (@Sendable (String) -> Void)?
    /// A listener failed for good (another holder of an inherited socket shut it down) and was dropped;
    /// the others keep serving. Nil: `onError` hears of it.
    public var onListenerDropped: (@Sendable (String) -> Void)?
    /// Serve TLS with this context (nil: plain HTTP). A source, not a fixed configuration: it re-reads rotated
    /// certificates.
    public var tls: TLSContextSource?
    /// Fields added to every response, errors included.
    public var extraHeaders: ExtraResponseHeaders?
    /// The command-line flag named in listen errors, so the message tells the user what to change.
    public var listenAddressFlag: String = "--web.listen-address"

    /// One listener on `host:port`.
    public init(host: String = "", port: UInt16 = 0) {
        listeners = [.address(host: host, port: port)]
    }

    /// One place the server accepts connections.
    public enum Listen: Sendable, Equatable {
        /// `host` "" listens on all interfaces (dual-stack `[::]`, or `0.0.0.0` without IPv6), else an IP
        /// literal or a resolvable name; port 0 picks an ephemeral port (`HTTPServer.ports`).
        case address(host: String, port: UInt16)
        /// A listening TCP socket opened by another process and inherited (systemd's socket activation):
        /// checked, made non-blocking and close-on-exec, and closed with the server. `origin` names where
        /// it came from in errors (`LISTEN_FDS`).
        case socket(fd: Int32, origin: String)
    }

    static var onlineCPUs: Int {
        max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
