import Synchronization
import TLS

/// A blocking HTTP/1.1 GET client: keep-alive connections reused across requests (with TLS
/// session resumption), proxies as curl and Go read them, name resolution bounded by the
/// request's deadline, one deadline per exchange, capped body size. Meant to be called
/// from worker threads; one client is shared by all of them.
public final class HTTPClient: Sendable {
    public struct Configuration: Sendable {
        public var userAgent: String
        /// Which proxy each request goes through, if any.
        public var proxy: ProxyConfiguration
        /// A PEM file of roots trusted besides the system bundle (SSL_CERT_FILE / SSL_CERT_DIR honoured).
        public var trustedCAFile: String?
        /// Idle keep-alive connections kept per origin; 0 turns reuse off: a connection and a full
        /// TLS handshake per request, for a proxy or server that mishandles keep-alive or resumption.
        public var maxIdleConnections: Int
        /// An idle connection older than this is closed rather than reused: servers close
        /// theirs after a while, and a request must not be the one to find out.
        public var idleTimeout: Duration
        /// False only for a client that already knows which server it reaches (the health check, which
        /// asks the exporter's own listening socket): TLS without checking the certificate or the name.
        public var verifiesServer: Bool

        public init(
            userAgent: String = "openweather-exporter", proxy: ProxyConfiguration = .direct,
            trustedCAFile: String? = nil,
            maxIdleConnections: Int = 16, idleTimeout: Duration = .seconds(30), verifiesServer: Bool = true
        ) {
            self.userAgent = userAgent
            self.proxy = proxy
            self.trustedCAFile = trustedCAFile
            self.maxIdleConnections = maxIdleConnections
            self.idleTimeout = idleTimeout
            self.verifiesServer = verifiesServer
        }
    }

    private let configuration: Configuration
    /// nil means the process-wide context, created on first https use.
    private let tlsContext: Result<TLSContext, HTTPClientError>?
    private let pool: ConnectionPool
    private let resolver: Resolver
    private let connectionsOpened = Atomic<Int>(0)
    private let fullHandshakes = Atomic<Int>(0)
    private let resumedHandshakes = Atomic<Int>(0)

    public convenience init(userAgent: String = "openweather-exporter") {
        self.init(configuration: Configuration(userAgent: userAgent))
    }

    /// Trusts the roots in the PEM file `trustedCAFile` besides the system ones; for tests against a private CA.
    package convenience init(userAgent: String = "openweather-exporter", trustedCAFile: String) {
        self.init(configuration: Configuration(userAgent: userAgent, trustedCAFile: trustedCAFile))
    }

    public convenience init(configuration: Configuration) {
        self.init(configuration: configuration, resolver: .shared)
    }

    init(configuration: Configuration, resolver: Resolver) {
        self.configuration = configuration
        if !configuration.verifiesServer {
            self.tlsContext = Result { () throws(HTTPClientError) in
                try TLSContext.client(extraCAFile: nil, verifyingServer: false)
            }
        } else {
            self.tlsContext = configuration.trustedCAFile.map { file in
                Result { () throws(HTTPClientError) in try TLSContext.client(extraCAFile: file) }
            }
        }
        self.pool = ConnectionPool(maxIdle: configuration.maxIdleConnections, idleTimeout: configuration.idleTimeout)
        self.resolver = resolver
    }

    /// Connections opened and TLS handshakes done (full, resumed) so far.
    package var statistics: (connections: Int, fullHandshakes: Int, resumedHandshakes: Int) {
        (
            connectionsOpened.load(ordering: .relaxed), fullHandshakes.load(ordering: .relaxed),
            resumedHandshakes.load(ordering: .relaxed)
        )
    }

    /// Idle keep-alive connections in the pool.
    package var idleConnections: Int { pool.idleCount }

    /// Sends `request`, and once more on a new connection when a kept one broke before any answer.
    public func get(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        try get(request, resend: { true })
    }

    /// As `get(_:)`; `resend` is asked right before the request goes out a second time (a kept
    /// connection the server closed as it was sent, which the server may still have counted): it
    /// counts that request and says whether it may go. False fails the request with the first error.
    public func get(_ request: HTTPClientRequest, resend: () -> Bool) throws(HTTPClientError) -> HTTPClientResponse {
        let deadline = Deadline(after: request.timeout)
        let url = request.url
        let proxy = configuration.proxy.proxy(for: url)
        let head = try requestHead(url: url, proxy: proxy, extraHeaders: request.headers)
        let maxBodyBytes = max(0, request.maxBodyBytes)
        let route = Self.route(url: url, proxy: proxy)

        let response: HTTPClientResponse
        if let reused = pool.take(route) {
            do throws(ExchangeFailure) {
                response = try exchangeOnce(
                    head, on: reused, route: route, maxBodyBytes: maxBodyBytes, deadline: deadline, isNew: false)
            } catch {
                // The server closed the idle connection as the request went out: nothing of an
                // answer came back and a GET may be sent again, once, on a new connection.
                guard error.retryable, resend() else { throw error.error }
                response = try exchange(
                    head, on: try connect(url, proxy: proxy, route: route, deadline: deadline),
                    route: route, maxBodyBytes: maxBodyBytes, deadline: deadline, isNew: true)
            }
        } else {
            response = try exchange(
                head, on: try connect(url, proxy: proxy, route: route, deadline: deadline),
                route: route, maxBodyBytes: maxBodyBytes, deadline: deadline, isNew: true)
        }
        if let proxy, response.status == 407 {
            throw .proxy(
                "proxy \(proxy) asks for credentials (407): put them in the proxy URL, http://user:password@host:port")
        }
        return response
    }

    /// Why an exchange failed, and whether sending the request again on a new connection is safe.
    private struct ExchangeFailure: Error {
        let error: HTTPClientError
        let retryable: Bool
    }

    private func exchange(
        _ head: [UInt8], on connection: Connection, route: String, maxBodyBytes: Int, deadline: Deadline, isNew: Bool
    ) throws(HTTPClientError) -> HTTPClientResponse {
        do throws(ExchangeFailure) {
            return try exchangeOnce(
                head, on: connection, route: route, maxBodyBytes: maxBodyBytes, deadline: deadline, isNew: isNew)
        } catch {
            throw error.error
        }
    }

    private func exchangeOnce(
        _ head: [UInt8], on connection: Connection, route: String, maxBodyBytes: Int, deadline: Deadline, isNew: Bool
    ) throws(ExchangeFailure) -> HTTPClientResponse {
        var reader = ResponseReader(stream: connection.stream, deadline: deadline, maxBodyBytes: maxBodyBytes)
        let response: HTTPClientResponse
        do {
            try connection.stream.writeAll(head, deadline: deadline)
            response = try reader.readResponse()
        } catch {
            let retryable = !isNew && error != .timeout && !reader.receivedAny
            throw ExchangeFailure(error: error, retryable: retryable)
        }
        if isNew, let tls = connection.tls, let session = tls.resumableSession() {
            pool.keep(session, for: route)
        }
        if reader.reusable { pool.put(connection, route: route) }
        return response
    }

    /// Where a connection leads: requests on the same route can share connections.
    private static func route(url: RequestURL, proxy: ProxyServer?) -> String {
        switch (url.isTLS, proxy) {
        case (true, nil): "https://\(url.endpoint)"
        case (false, nil): "http://\(url.endpoint)"
        // The tunnel ends at the origin: one route per origin and proxy.
        case (true, let proxy?): "https://\(url.endpoint) via \(proxy)"
        // The proxy fetches any http:// URL: one route per proxy.
        case (false, let proxy?): "http proxy \(proxy)"
        }
    }

    // MARK: Connecting

    private func connect(
        _ url: RequestURL, proxy: ProxyServer?, route: String, deadline: Deadline
    ) throws(HTTPClientError) -> Connection {
        // An unusable trust store is known before any connection is made.
        let context = url.isTLS ? try (tlsContext ?? TLSContext.sharedClient).get() : nil
        let socket: Socket
        if let proxy {
            socket = try Self.throughProxy(proxy) { () throws(HTTPClientError) in
                try Socket.connect(
                    to: try addresses(of: proxy.host, deadline: deadline), port: proxy.port, endpoint: "proxy \(proxy)",
                    deadline: deadline)
            }
            if url.isTLS {
                try tunnel(socket, to: url, via: proxy, deadline: deadline)
            }
            socket.endpoint = "\(url.endpoint) through proxy \(proxy)"
        } else {
            socket = try Socket.connect(
                to: try addresses(of: url.host, deadline: deadline), port: url.port, endpoint: url.endpoint,
                deadline: deadline)
        }
        connectionsOpened.add(1, ordering: .relaxed)
        guard let context else { return Connection(socket: socket, tls: nil) }
        let tls = try TLSStream(
            socket: socket, context: context, url: url, session: pool.session(for: route), deadline: deadline)
        if tls.resumed {
            resumedHandshakes.add(1, ordering: .relaxed)
        } else {
            fullHandshakes.add(1, ordering: .relaxed)
        }
        return Connection(socket: socket, tls: tls)
    }

    private func addresses(of host: String, deadline: Deadline) throws(HTTPClientError) -> [ResolvedAddress] {
        if let literal = Resolver.literal(host) { return [literal] }
        return try resolver.resolve(host, deadline: deadline)
    }

    /// Failures on the way to the proxy are the proxy's: `.proxy`, naming it. A timeout stays a timeout.
    private static func throughProxy<T>(
        _ proxy: ProxyServer, _ body: () throws(HTTPClientError) -> T
    ) throws(HTTPClientError) -> T {
        do {
            return try body()
        } catch .timeout {
            throw .timeout
        } catch .proxy(let reason) {
            throw .proxy(reason)
        } catch .dns(let host, let reason) {
            throw .proxy("proxy \(proxy): DNS lookup of \(host) failed: \(reason)")
        } catch {
            throw .proxy(error.description)
        }
    }

    /// Asks the proxy for a tunnel to the origin (`CONNECT host:port`); TLS then runs through it end to end.
    private func tunnel(
        _ socket: Socket, to url: RequestURL, via proxy: ProxyServer, deadline: Deadline
    ) throws(HTTPClientError) {
        var head =
            "CONNECT \(url.endpoint) HTTP/1.1\r\nHost: \(url.endpoint)\r\nUser-Agent: \(configuration.userAgent)\r\n"
        if let authorization = proxy.authorization { head += "Proxy-Authorization: \(authorization)\r\n" }
        head += "\r\n"
        let status = try Self.throughProxy(proxy) { () throws(HTTPClientError) -> Int in
            try socket.writeAll(Array(head.utf8), deadline: deadline)
            var reader = ResponseReader(stream: socket, deadline: deadline, maxBodyBytes: 0)
            do throws(HTTPClientError) {
                return try reader.readConnectResponse().status
            } catch {
                guard case .malformed(let reason) = error else { throw error }
                throw .proxy("proxy \(proxy) gave no usable answer to CONNECT \(url.endpoint): \(reason)")
            }
        }
        switch status {
        case 200...299: return
        case 407:
            throw .proxy(
                "proxy \(proxy) refused the tunnel to \(url.endpoint): 407, "
                    + (proxy.authorization == nil
                        ? "it wants credentials: give them in the proxy URL, http://user:password@host:port"
                        : "it rejects the credentials in the proxy URL"))
        default:
            throw .proxy("proxy \(proxy) refused the tunnel to \(url.endpoint): \(status)")
        }
    }

    // MARK: The request

    /// Headers that decide framing, encoding or routing stay the client's own.
    private static let reservedHeaders: Set<String> = [
        "host", "connection", "accept-encoding", "content-length", "transfer-encoding", "user-agent",
        "proxy-authorization",
    ]

    private func requestHead(
        url: RequestURL, proxy: ProxyServer?, extraHeaders: [(name: String, value: String)]
    ) throws(HTTPClientError) -> [UInt8] {
        var agent = configuration.userAgent
        var extra = ""
        for header in extraHeaders {
            // Header values may carry credentials, so neither values nor names are echoed.
            guard !header.name.isEmpty,
                header.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }),
                !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
            else {
                throw .invalidURL("a request header has an invalid name or a line break in its value")
            }
            let name = header.name.lowercased()
            if name == "user-agent" { agent = header.value }
            if Self.reservedHeaders.contains(name) { continue }
            extra += "\(header.name): \(header.value)\r\n"
        }
        // An http:// request through a proxy names the whole URL and carries the proxy's credentials.
        var target = url.target
        if let proxy, !url.isTLS {
            target = "http://\(url.hostHeader)\(url.target)"
            if let authorization = proxy.authorization { extra += "Proxy-Authorization: \(authorization)\r\n" }
        }
        let head =
            "GET \(target) HTTP/1.1\r\n"
            + "Host: \(url.hostHeader)\r\n"
            + "User-Agent: \(agent)\r\n"
            + "Accept-Encoding: identity\r\n"
            + extra
            + "\r\n"
        return Array(head.utf8)
    }
}
