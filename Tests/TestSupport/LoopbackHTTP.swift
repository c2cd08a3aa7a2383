import Glibc
import Platform

/// One HTTP response as a test client saw it.
public struct LoopbackResponse: Sendable {
    public var status: Int
    /// Names lowercased, in the order received.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }

    /// Takes one response off the front of `buffer`: nil while it is incomplete. A body without
    /// Content-Length runs to the end of the stream, so it is complete only `atEndOfStream`.
    /// `head: true` for the answer to a HEAD request (no body whatever the headers say).
    public static func take(
        from buffer: inout [UInt8], head: Bool = false, atEndOfStream: Bool = false
    ) throws -> LoopbackResponse? {
        guard let parsed = try parseHead(buffer) else {
            if atEndOfStream && !buffer.isEmpty {
                throw TestFailure("no complete response head in \(buffer.count) bytes")
            }
            return nil
        }
        let length: Int
        if head {
            length = 0
        } else if let declared = parsed.contentLength {
            length = declared
        } else if atEndOfStream {
            length = buffer.count - parsed.bodyStart
        } else {
            return nil
        }
        guard buffer.count >= parsed.bodyStart + length else { return nil }
        let response = LoopbackResponse(
            status: parsed.status, headers: parsed.headers,
            body: Array(buffer[parsed.bodyStart..<parsed.bodyStart + length]))
        buffer.removeFirst(parsed.bodyStart + length)
        return response
    }

    /// The head at the start of `bytes`, with where the body starts; nil while it is incomplete.
    public static func parseHead(
        _ bytes: [UInt8]
    ) throws -> (status: Int, headers: [(name: String, value: String)], contentLength: Int?, bodyStart: Int)? {
        guard let end = headEnd(bytes) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n")
        let statusLine = lines.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let status = Int(statusLine[1]) else {
            throw TestFailure("bad status line: \(lines.first ?? "")")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw TestFailure("bad header line: \(line)") }
            headers.append((line[..<colon].lowercased(), String(line[line.index(after: colon)...].drop { $0 == " " })))
        }
        var contentLength: Int?
        if let declared = headers.first(where: { $0.name == "content-length" }) {
            guard let value = Int(declared.value), value >= 0 else {
                throw TestFailure("bad Content-Length: \(declared.value)")
            }
            contentLength = value
        }
        return (status, headers, contentLength, end + 4)
    }

    /// Where the blank line that ends a head starts, if it arrived.
    public static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first {
            bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10
        }
    }
}

/// A deliberately simple HTTP/1.1 client for tests over loopback, bounded by socket timeouts so no
/// test can hang.
public enum LoopbackHTTP {
    /// Opens a TCP connection to `host` (`127.0.0.1` or `::1`) with a send and receive timeout; from the
    /// IPv4 address `source` (e.g. `127.0.0.2`, any of 127/8 is loopback) when given. With `maxSegment`
    /// (e.g. 1400, as across Ethernet) the server sends in segments that small: loopback's own are 64 KiB,
    /// and its send buffer for a client that does not read grows with them, to about 4 MiB.
    public static func connect(
        port: UInt16, host: String = "127.0.0.1", source: String? = nil, maxSegment: Int32? = nil,
        timeoutSeconds: Double = 5
    ) throws -> Int32 {
        let v6 = host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errnoText(errno))") }
        if var maxSegment {
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_MAXSEG, &maxSegment, socklen_t(MemoryLayout<Int32>.size))
        }
        let whole = Int(timeoutSeconds)
        var timeout = timeval(tv_sec: whole, tv_usec: Int((timeoutSeconds - Double(whole)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            guard !v6, inet_pton(AF_INET, source, &local.sin_addr) == 1 else {
                close(fd)
                throw TestFailure("bad source address \(source)")
            }
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                throw TestFailure("bind to \(source): \(reason)")
            }
        }
        let result: Int32
        if v6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                close(fd)
                throw TestFailure("bad address \(host)")
            }
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                close(fd)
                throw TestFailure("bad address \(host)")
            }
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let reason = errnoText(errno)
            close(fd)
            throw TestFailure("connect to [\(host)]:\(port): \(reason)")
        }
        return fd
    }

    /// A bound, listening socket on 127.0.0.1 with a port of the kernel's choosing. Never accepting
    /// on it gives a peer that completes the TCP handshake and then says nothing.
    public static func listen(backlog: Int32) throws -> (fd: Int32, port: UInt16) {
        try tcpSocket(listening: backlog)
    }

    /// A port on 127.0.0.1 that nobody listens on, for "connection refused". The socket stays bound
    /// (without listening) for the life of the process: a port that was merely closed could be
    /// handed to another test's listener running in parallel.
    public static func closedPort() throws -> UInt16 {
        try tcpSocket(listening: nil).port
    }

    /// A blocking TCP socket bound to 127.0.0.1 on a port of the kernel's choosing, listening when
    /// given a backlog. `closeOnExec: false` makes it as systemd hands one over, for what a server
    /// does with an inherited socket.
    public static func tcpSocket(
        listening backlog: Int32?, closeOnExec: Bool = true
    ) throws -> (fd: Int32, port: UInt16) {
        let type = Int32(SOCK_STREAM.rawValue) | (closeOnExec ? Int32(SOCK_CLOEXEC.rawValue) : 0)
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errnoText(errno))") }
        guard let port = bindLoopback(fd, listening: backlog) else {
            let reason = errnoText(errno)
            close(fd)
            throw TestFailure("\(backlog == nil ? "bind" : "bind and listen") on 127.0.0.1: \(reason)")
        }
        return (fd, port)
    }

    /// Binds `fd` to 127.0.0.1 on a port of the kernel's choosing, listens when given a backlog,
    /// and returns the port (nil with errno set on failure).
    private static func bindLoopback(_ fd: Int32, listening backlog: Int32?) -> UInt16? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && backlog.map { Glibc.listen(fd, $0) == 0 } != false
                    && getsockname(fd, generic, &length) == 0
            }
        }
        return bound ? UInt16(bigEndian: address.sin_port) : nil
    }

    /// True when this machine can listen and connect on `::1` (containers often have no IPv6).
    public static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        } == 0
    }()

    public static func send(_ fd: Int32, _ text: String) throws {
        try send(fd, Array(text.utf8))
    }

    public static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw TestFailure("send: \(errnoText(errno))") }
            sent += count
        }
    }

    /// Reads more into `buffer`; false on end of stream, error or timeout.
    public static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        return true
    }

    /// Everything until the peer closes (or the timeout passes).
    public static func readAll(_ fd: Int32) -> [UInt8] {
        readUntilClosed(fd).bytes
    }

    /// Everything until the peer closes; `timedOut` when the receive timeout ended it instead.
    static func readUntilClosed(_ fd: Int32) -> (bytes: [UInt8], timedOut: Bool) {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let code = errno
            if count > 0 {
                out += chunk[0..<count]
                continue
            }
            return (out, count < 0 && (code == EAGAIN || code == EWOULDBLOCK))
        }
    }

    /// One request with `Connection: close`.
    public static func request(
        port: UInt16, host: String = "127.0.0.1", method: String = "GET", path: String, headers: [String] = [],
        body: String = "", timeoutSeconds: Double = 5
    ) throws -> LoopbackResponse {
        let fd = try connect(port: port, host: host, timeoutSeconds: timeoutSeconds)
        defer { close(fd) }
        let extra = headers.map { "\($0)\r\n" }.joined()
        try send(
            fd,
            """
            \(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
            \(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)
            """
        )
        let (bytes, timedOut) = readUntilClosed(fd)
        // A server too slow to answer is not one that closed the connection: say which it was.
        if timedOut, (try? parse(bytes, method: method)) == nil {
            throw TestFailure("no whole answer to \(method) \(path) within \(timeoutSeconds) s (\(bytes.count) bytes)")
        }
        return try parse(bytes, method: method)
    }

    /// The first response in everything a connection received until it closed.
    public static func parse(_ bytes: [UInt8], method: String = "GET") throws -> LoopbackResponse {
        var buffer = bytes
        guard let response = try LoopbackResponse.take(from: &buffer, head: method == "HEAD", atEndOfStream: true)
        else {
            throw TestFailure("the connection closed in the middle of a response (\(bytes.count) bytes)")
        }
        return response
    }
}
