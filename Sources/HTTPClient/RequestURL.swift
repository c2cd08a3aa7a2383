import Glibc

/// The parts of a request URL the client needs, parsed once: a caller that sends many requests to one
/// origin parses its base URL and gives each request its own target. Parse errors describe the
/// problem without quoting the input, whose query may hold an API key; the description is only
/// `host:port`, for the same reason.
public struct RequestURL: Sendable, Equatable, CustomStringConvertible {
    let isTLS: Bool
    /// Without brackets for IPv6.
    let host: String
    let port: UInt16
    /// Path and query, as sent on the request line.
    public let target: String
    let hostIsIPAddress: Bool

    /// `host:port` for messages: all of the URL that may be shown.
    var endpoint: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public var description: String { endpoint }

    /// The same origin with another path and query. Nothing is parsed: the target is only checked to
    /// be one that cannot break the request line.
    public func with(target: String) throws(HTTPClientError) -> RequestURL {
        guard target.utf8.first == UInt8(ascii: "/"),
            !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "#") })
        else {
            throw .invalidURL("the path must start with / and hold no spaces, control characters or #")
        }
        return RequestURL(isTLS: isTLS, host: host, port: port, target: target, hostIsIPAddress: hostIsIPAddress)
    }

    private init(isTLS: Bool, host: String, port: UInt16, target: String, hostIsIPAddress: Bool) {
        self.isTLS = isTLS
        self.host = host
        self.port = port
        self.target = target
        self.hostIsIPAddress = hostIsIPAddress
    }

    /// The Host header: the port only when it is not the scheme's default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isTLS ? 443 : 80) ? name : "\(name):\(port)"
    }

    public init(parsing url: String) throws(HTTPClientError) {
        let bytes = Array(url.utf8)
        guard !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .invalidURL("contains spaces or control characters")
        }
        guard let schemeEnd = Self.find(Array("://".utf8), in: bytes) else {
            throw .invalidURL("missing scheme (expected http:// or https://)")
        }
        let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
        switch scheme {
        case "http": isTLS = false
        case "https": isTLS = true
        default:
            let shown = scheme.count <= 16 && scheme.utf8.allSatisfy(Self.isSchemeByte) ? "'\(scheme)' " : ""
            throw .invalidURL("unsupported scheme \(shown)(expected http or https)")
        }

        let rest = bytes[(schemeEnd + 3)...]
        let authorityEnd =
            rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else {
            throw .invalidURL("credentials in the URL are not supported")
        }

        var hostBytes: ArraySlice<UInt8>
        var portBytes: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw .invalidURL("unterminated IPv6 address")
            }
            hostBytes = authority[(authority.startIndex + 1)..<close]
            let after = authority[(close + 1)...]
            if let colon = after.first {
                guard colon == UInt8(ascii: ":") else {
                    throw .invalidURL("unexpected characters after the IPv6 address")
                }
                portBytes = after.dropFirst()
            }
            guard Self.isIPv6(String(decoding: hostBytes, as: UTF8.self)) else {
                throw .invalidURL("invalid IPv6 address")
            }
            hostIsIPAddress = true
        } else {
            if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
                hostBytes = authority[..<colon]
                portBytes = authority[(colon + 1)...]
            } else {
                hostBytes = authority
            }
            guard hostBytes.allSatisfy(Self.isHostByte) else {
                throw .invalidURL("invalid character in host")
            }
            hostIsIPAddress = Self.isIPv4(String(decoding: hostBytes, as: UTF8.self))
        }
        guard !hostBytes.isEmpty else { throw .invalidURL("missing host") }
        host = String(decoding: hostBytes, as: UTF8.self).lowercased()

        if let portBytes {
            guard !portBytes.isEmpty, portBytes.count <= 5, portBytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(value)
            else {
                throw .invalidURL("port must be a number from 1 to 65535")
            }
            port = UInt16(value)
        } else {
            port = isTLS ? 443 : 80
        }

        // The fragment is for the client's eyes only and never goes on the wire.
        let path = rest[authorityEnd...].prefix { $0 != UInt8(ascii: "#") }
        target =
            path.first == UInt8(ascii: "/")
            ? String(decoding: path, as: UTF8.self)
            : "/" + String(decoding: path, as: UTF8.self)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    private static func isSchemeByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
            || b == UInt8(ascii: ".")
    }

    private static func isHostByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39)
            || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_")
    }

    static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }
}
