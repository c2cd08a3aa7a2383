import Glibc
import Platform

/// Opens the listening sockets, or takes over inherited ones; every startup failure happens here, so
/// `HTTPServer.init` can report it.
enum Listener {
    static let backlog: Int32 = 4096

    /// Every listener of `configuration`, in its order; none is left open when one fails.
    static func open(_ configuration: HTTPServerConfiguration) throws(HTTPServerError) -> [(fd: Int32, port: UInt16)] {
        var opened: [(fd: Int32, port: UInt16)] = []
        for listen in configuration.listeners {
            do {
                switch listen {
                case .address(let host, let port):
                    opened.append(try open(host: host, port: port, flag: configuration.listenAddressFlag))
                case .socket(let fd, let origin):
                    opened.append((try adopt(fd, origin: origin), boundPort(fd)))
                }
            } catch {
                for listener in opened { close(listener.fd) }
                throw error
            }
        }
        return opened
    }

    /// Checks that `fd` is what a server can accept on (a listening IPv4 or IPv6 stream socket), then
    /// makes it non-blocking (the loops share it: one may find nothing left to accept) and
    /// close-on-exec, as a socket the server opened itself is.
    static func adopt(_ fd: Int32, origin: String) throws(HTTPServerError) -> Int32 {
        func refuse(_ reason: String) -> HTTPServerError { .inherited(fd: fd, origin: origin, reason: reason) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw refuse("it is not open (\(errnoText(errno).lowercased()))")
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            let kind =
                switch info.st_mode & S_IFMT {
                case S_IFREG: "a regular file"
                case S_IFIFO: "a pipe"
                case S_IFCHR: "a character device"
                case S_IFDIR: "a directory"
                default: "not a socket"
                }
            throw refuse("it is \(kind), not a socket")
        }
        func option(_ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard option(SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
            throw refuse("it is not a stream socket: the socket unit must use ListenStream=, not ListenDatagram=")
        }
        guard let domain = option(SO_DOMAIN), domain == AF_INET || domain == AF_INET6 else {
            throw refuse(
                """
                it is not a TCP socket (a Unix socket?): give ListenStream= a port or an address and port, such as \
                9755 or 127.0.0.1:9755
                """
            )
        }
        guard option(SO_ACCEPTCONN) == 1 else {
            throw refuse(
                """
                it is not listening: systemd hands over a listening socket only with Accept=no (the default) in the \
                socket unit
                """
            )
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
            throw refuse("it cannot be made non-blocking (\(errnoText(errno).lowercased()))")
        }
        return fd
    }

    private static func open(
        host: String, port: UInt16, flag: String
    ) throws(HTTPServerError) -> (
        fd: Int32, port: UInt16
    ) {
        if host.isEmpty {
            // Dual-stack first so one socket serves both families; plain IPv4 where the kernel has no IPv6.
            var any6 = sockaddr_in6()
            any6.sin6_family = sa_family_t(AF_INET6)
            any6.sin6_port = port.bigEndian
            any6.sin6_addr = in6addr_any
            switch bindAndListen(SocketAddress(any6)) {
            case .success(let fd):
                return (fd, boundPort(fd))
            case .failure(let e) where e.code == EAFNOSUPPORT || e.code == EADDRNOTAVAIL || e.code == EPROTONOSUPPORT:
                break
            case .failure(let e):
                throw .listen(errno: e.code, address: "[::]:\(port)", flag: flag)
            }
            var any4 = sockaddr_in()
            any4.sin_family = sa_family_t(AF_INET)
            any4.sin_port = port.bigEndian
            any4.sin_addr.s_addr = INADDR_ANY
            switch bindAndListen(SocketAddress(any4)) {
            case .success(let fd): return (fd, boundPort(fd))
            case .failure(let e): throw .listen(errno: e.code, address: "0.0.0.0:\(port)", flag: flag)
            }
        }

        var host = host
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 {
            host = String(host.dropFirst().dropLast())
        }
        let candidates = try resolve(host, port: port, flag: flag)
        var firstFailure: (code: Int32, address: String)?
        for candidate in candidates {
            switch bindAndListen(candidate) {
            case .success(let fd): return (fd, boundPort(fd))
            case .failure(let e):
                if firstFailure == nil { firstFailure = (e.code, candidate.description) }
            }
        }
        let failure = firstFailure ?? (EADDRNOTAVAIL, "\(host):\(port)")
        throw .listen(errno: failure.code, address: failure.address, flag: flag)
    }

    private static func resolve(_ host: String, port: UInt16, flag: String) throws(HTTPServerError) -> [SocketAddress] {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return [SocketAddress(v4)]
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            return [SocketAddress(v6)]
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, nil, &hints, &list)
        guard rc == 0, let list else {
            let reason = rc == 0 ? "no addresses" : String(cString: gai_strerror(rc)).lowercased()
            throw .badHost(host, reason: reason, flag: flag)
        }
        defer { freeaddrinfo(list) }
        var result: [SocketAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = list
        while let entry = node {
            if let address = entry.pointee.ai_addr {
                if entry.pointee.ai_family == AF_INET {
                    var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                    v4.sin_port = port.bigEndian
                    result.append(SocketAddress(v4))
                } else if entry.pointee.ai_family == AF_INET6 {
                    var v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                    v6.sin6_port = port.bigEndian
                    result.append(SocketAddress(v6))
                }
            }
            node = entry.pointee.ai_next
        }
        guard !result.isEmpty else { throw .badHost(host, reason: "no IPv4 or IPv6 address", flag: flag) }
        return result
    }

    private static func bindAndListen(_ address: SocketAddress) -> Result<Int32, Errno> {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Errno(errno)) }
        var on: Int32 = 1
        // Lets a restarted server bind while old connections sit in TIME_WAIT.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if address.family == AF_INET6 {
            // A v4-mapped address (::ffff:127.0.0.1) binds only with V6ONLY off; it serves that IPv4 address.
            var v6only: Int32 = address.isUnspecified || address.isV4Mapped ? 0 : 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &v6only, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        if bound != 0 || listen(fd, backlog) != 0 {
            let code = errno
            close(fd)
            return .failure(Errno(code))
        }
        return .success(fd)
    }

    /// The address `fd` is bound to as a user would write it (`[::]:9755`, `127.0.0.1:9755`).
    static func boundAddress(_ fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return "descriptor \(fd)" }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { SocketAddress($0.pointee) }
                    .description
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { SocketAddress($0.pointee) }
                .description
        }
    }

    static func boundPort(_ fd: Int32) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }
}

/// An errno value as an Error, so bind results can travel in a `Result`.
struct Errno: Error, Equatable {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}

/// An IPv4 or IPv6 socket address with the text a user would write for it.
struct SocketAddress {
    private var storage = sockaddr_storage()
    let family: Int32
    private let length: socklen_t
    let description: String
    let isUnspecified: Bool
    /// An IPv6 address that stands for an IPv4 one (`::ffff:a.b.c.d`).
    var isV4Mapped = false

    init(_ v4: sockaddr_in) {
        family = AF_INET
        length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee = v4 }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var addr = v4.sin_addr
        inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
        description = "\(cText(text)):\(UInt16(bigEndian: v4.sin_port))"
        isUnspecified = v4.sin_addr.s_addr == INADDR_ANY
    }

    init(_ v6: sockaddr_in6) {
        family = AF_INET6
        length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee = v6 }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var addr = v6.sin6_addr
        inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
        description = "[\(cText(text))]:\(UInt16(bigEndian: v6.sin6_port))"
        var any = in6addr_any
        isUnspecified = memcmp(&addr, &any, MemoryLayout<in6_addr>.size) == 0
        isV4Mapped = withUnsafeBytes(of: addr) {
            $0.prefix(10).allSatisfy { $0 == 0 } && $0[10] == 0xFF && $0[11] == 0xFF
        }
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var copy = storage
        return withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}

private func cText(_ chars: [CChar]) -> String {
    chars.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
