/// A blocking HTTP/1.1 GET client: one connection per request, one deadline per
/// exchange, capped body size. Meant to be called from worker threads.
public struct HTTPClient: Sendable {
    private let userAgent: String
    /// nil means the process-wide context, created on first https use.
    private let tlsContext: Result<TLSContext, HTTPClientError>?

    public init(userAgent: String = "openweather-exporter") {
        self.userAgent = userAgent
        self.tlsContext = nil
    }

    /// Trusts the roots in the PEM file `trustedCAFile` besides the system ones; for tests against a private CA.
    package init(userAgent: String = "openweather-exporter", trustedCAFile: String) {
        self.userAgent = userAgent
        self.tlsContext = Result { () throws(HTTPClientError) in try TLSContext(extraCAFile: trustedCAFile) }
    }

    public func get(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        let deadline = Deadline(after: request.timeout)
        let url = try RequestURL(parsing: request.url)
        let head = try requestHead(url: url, extraHeaders: request.headers)
        let context = url.isTLS ? try (tlsContext ?? TLSContext.shared).get() : nil

        let socket = try Socket.connect(to: url, deadline: deadline)
        let stream: any ByteStream = if let context {
            try TLSStream(socket: socket, context: context, url: url, deadline: deadline)
        } else {
            socket
        }
        try stream.writeAll(head, deadline: deadline)
        var reader = ResponseReader(stream: stream, deadline: deadline, maxBodyBytes: max(0, request.maxBodyBytes))
        return try reader.readResponse()
    }

    /// Headers that decide framing, encoding or routing stay the client's own.
    private static let reservedHeaders: Set<String> = [
        "host", "connection", "accept-encoding", "content-length", "transfer-encoding", "user-agent",
    ]

    private func requestHead(url: RequestURL, extraHeaders: [(name: String, value: String)]) throws(HTTPClientError) -> [UInt8] {
        var agent = userAgent
        var extra = ""
        for header in extraHeaders {
            // Header values may carry credentials, so neither values nor names are echoed.
            guard !header.name.isEmpty, header.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }),
                  !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
            else {
                throw .invalidURL("a request header has an invalid name or a line break in its value")
            }
            let name = header.name.lowercased()
            if name == "user-agent" { agent = header.value }
            if Self.reservedHeaders.contains(name) { continue }
            extra += "\(header.name): \(header.value)\r\n"
        }
        let head = "GET \(url.target) HTTP/1.1\r\n"
            + "Host: \(url.hostHeader)\r\n"
            + "User-Agent: \(agent)\r\n"
            + "Accept-Encoding: identity\r\n"
            + "Connection: close\r\n"
            + extra
            + "\r\n"
        return Array(head.utf8)
    }
}
