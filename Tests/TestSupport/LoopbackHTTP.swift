import Glibc

/// A deliberately simple HTTP/1.1 client for tests: one request per
/// connection, bounded by a receive timeout so no test can hang.
public struct LoopbackResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name == name.lowercased() }?.value
    }
}

public enum LoopbackHTTP {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Opens a TCP connection to 127.0.0.1:`port` with a send and receive timeout.
    public static func connect(port: UInt16, timeoutSeconds: Double = 5) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        let whole = Int(timeoutSeconds)
        var timeout = timeval(tv_sec: whole, tv_usec: Int((timeoutSeconds - Double(whole)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect to port \(port): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    public static func send(_ fd: Int32, _ text: String) throws {
        var bytes = Array(text.utf8)
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed: \(errno)") }
            bytes.removeFirst(sent)
        }
    }

    /// Everything until the peer closes (or the timeout passes).
    public static func readAll(_ fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return out }
            out += buffer[0..<count]
        }
    }

    /// One request with `Connection: close`; the response is parsed by Content-Length.
    public static func request(
        port: UInt16, method: String = "GET", path: String, body: String = "", timeoutSeconds: Double = 5
    ) throws -> LoopbackResponse {
        let fd = try connect(port: port, timeoutSeconds: timeoutSeconds)
        defer { close(fd) }
        try send(fd, "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        return try parse(readAll(fd), method: method)
    }

    public static func parse(_ bytes: [UInt8], method: String = "GET") throws -> LoopbackResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw Failure(description: "no complete response head in \(bytes.count) bytes")
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n")
        let statusLine = head.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line") }
        let headers = head.dropFirst().map { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (name: parts[0].lowercased(), value: parts.count > 1 ? String(parts[1].drop { $0 == " " }) : "")
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers.first(where: { $0.name == "content-length" }).flatMap({ Int($0.value) }) {
            if method == "HEAD" { body = [] } else { body = Array(body.prefix(length)) }
        }
        return LoopbackResponse(status: status, headers: headers, body: body)
    }
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass.
public func waitUntil(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    let deadline = Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9 + seconds
    while true {
        if condition() { return true }
        clock_gettime(CLOCK_MONOTONIC, &spec)
        if Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9 > deadline { return false }
        usleep(10_000)
    }
}

/// Captures log lines for assertions.
public final class LogCapture: @unchecked Sendable {
    private var lines: [String] = []
    private var lock = pthread_mutex_t()

    public init() { pthread_mutex_init(&lock, nil) }

    public func append(_ line: String) {
        pthread_mutex_lock(&lock)
        lines.append(line)
        pthread_mutex_unlock(&lock)
    }

    public var all: [String] {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        return lines
    }
}
