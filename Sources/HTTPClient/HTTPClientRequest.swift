/// One GET request and the limits it runs under.
public struct HTTPClientRequest: Sendable {
    /// Where it goes, parsed beforehand (`RequestURL(parsing:)`, then `with(target:)` per request). The
    /// query may carry secrets and is never echoed.
    public var url: RequestURL
    /// Extra headers; a `User-Agent` here replaces the client's. Host, Connection, Accept-Encoding and framing headers
    /// are the client's own.
    public var headers: [(name: String, value: String)]
    /// One deadline for the whole exchange: name lookup, connect, proxy tunnel, TLS handshake, send and reading the
    /// full response.
    public var timeout: Duration
    /// A larger body fails with `.tooLarge` without being read in full.
    public var maxBodyBytes: Int

    public init(
        url: RequestURL,
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
