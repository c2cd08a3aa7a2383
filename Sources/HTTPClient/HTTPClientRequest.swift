/// One GET request and the limits it runs under.
public struct HTTPClientRequest: Sendable {
    /// `http://` or `https://` URL; the host may be a name, IPv4 or `[IPv6]`. The query may carry secrets and is never echoed.
    public var url: String
    /// Extra headers; a `User-Agent` here replaces the client's. Host, Connection, Accept-Encoding and framing headers are the client's own.
    public var headers: [(name: String, value: String)]
    /// One deadline for the whole exchange: name lookup, connect, proxy tunnel, TLS handshake, send and reading the full response.
    public var timeout: Duration
    /// A larger body fails with `.tooLarge` without being read in full.
    public var maxBodyBytes: Int

    public init(
        url: String,
        headers: [(name: String, value: String)] = [],
        timeout: Duration = .seconds(10),
        maxBodyBytes: Int = 1 << 20
    ) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
    }
}
