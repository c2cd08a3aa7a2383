public enum HTTPVersion: Sendable, Equatable {
    case http10, http11
}

/// A complete request as parsed from the wire; nothing is decoded beyond splitting path and query.
public struct HTTPRequest: Sendable {
    /// Token as sent, e.g. "GET".
    public let method: String
    /// Request-target as sent.
    public let target: String
    /// Target up to '?', not percent-decoded; for an absolute-form target, only its path.
    public let path: String
    /// After '?', "" if none.
    public let query: String
    public let version: HTTPVersion
    /// Names lowercased, values trimmed of surrounding whitespace, in the order sent.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(
        method: String, target: String, path: String, query: String, version: HTTPVersion,
        headers: [(name: String, value: String)], body: [UInt8]
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The first value of a header; pass the name in lowercase.
    public func header(_ lowercasedName: String) -> String? {
        for field in headers where field.name == lowercasedName {
            return field.value
        }
        return nil
    }
}

/// A whole response. The server adds Content-Length, Date and Connection; handlers never set those.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    /// Written in order with one gathered write and never copied, so a pre-rendered body can be shared.
    public var body: [[UInt8]]
    /// Written after `body`: bytes kept for many responses, which a plain socket is sent without a copy.
    public var kept: KeptBody?
    /// Close the connection once this response is written.
    public var closeConnection: Bool

    public init(
        status: Int, headers: [(name: String, value: String)] = [], body: [[UInt8]] = [], closeConnection: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closeConnection = closeConnection
    }

    public init(
        status: Int, headers: [(name: String, value: String)] = [], kept: KeptBody, closeConnection: Bool = false
    ) {
        self.init(status: status, headers: headers, closeConnection: closeConnection)
        self.kept = kept
    }
}
