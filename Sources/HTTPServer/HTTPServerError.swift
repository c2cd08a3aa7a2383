import Glibc
import Platform

/// Why the server could not start listening, worded for the person who has to fix it.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        case addressInUse
        case permissionDenied
        case addressNotAvailable
        case badHost
        case inheritedSocket
        case resources
        case other
    }

    public let kind: Kind
    /// The address as the user would write it, e.g. "127.0.0.1:9755" or "[::]:9755".
    public let address: String
    public let description: String

    /// Maps a failed `socket`/`bind`/`listen` to a message that says what to do about it.
    static func listen(errno code: Int32, address: String, flag: String) -> HTTPServerError {
        let prefix = "cannot listen on \(address): "
        switch code {
        case EADDRINUSE:
            return .init(
                kind: .addressInUse, address: address,
                description: prefix + "address already in use; stop the other process or choose another \(flag)")
        case EACCES, EPERM:
            return .init(
                kind: .permissionDenied, address: address,
                description: prefix
                    + """
                    permission denied; ports below 1024 need root or CAP_NET_BIND_SERVICE, so choose a higher port \
                    in \(flag)
                    """
            )
        case EADDRNOTAVAIL:
            return .init(
                kind: .addressNotAvailable, address: address,
                description: prefix
                    + """
                    address not available on this machine; use an address of one of its interfaces in \(flag), or \
                    leave the host empty for all
                    """
            )
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
            return .init(
                kind: .resources, address: address,
                description: prefix
                    + "\(errnoText(code).lowercased()); raise the open-file limit (ulimit -n) or free memory")
        default:
            return .init(kind: .other, address: address, description: prefix + errnoText(code).lowercased())
        }
    }

    /// An inherited descriptor that cannot be served on; `origin` says who handed it over.
    static func inherited(fd: Int32, origin: String, reason: String) -> HTTPServerError {
        .init(
            kind: .inheritedSocket, address: "descriptor \(fd)",
            description: "cannot serve on descriptor \(fd) of \(origin): \(reason)")
    }

    static func badHost(_ host: String, reason: String, flag: String) -> HTTPServerError {
        .init(
            kind: .badHost, address: host,
            description:
                """
                cannot listen on host "\(host)": \(reason); use an IP address such as 127.0.0.1 or ::1, a resolvable \
                name, or an empty host for all interfaces in \(flag)
                """
        )
    }
}
