import Dispatch
import Glibc
import Locking

/// A loopback TCP server that plays a fixed script to each connection it accepts.
/// Every wait inside is bounded, so a client bug fails a test instead of hanging it.
final class ScriptedServer: Sendable {
    enum Step: Sendable {
        /// Reads until the end of a request head (or EOF).
        case readRequest
        /// Reads whatever arrives first, e.g. a TLS ClientHello.
        case readAny
        case send(String)
        case sendBytes([UInt8])
        case pause(Duration)
        /// Sends one byte at a time with a pause before each; stops when the client has gone.
        case trickle(String, every: Duration)
        /// Keeps the connection open until the client closes it.
        case holdOpen
    }

    let port: UInt16
    private let listener: Int32
    private let steps: [Step]
    private let connections: Int
    private let requests = Locked<[String]>([])
    private let done = DispatchSemaphore(value: 0)

    /// Upper bound for any single wait of the server, far above any test's deadline.
    private static let safetyMilliseconds: Int32 = 5000

    init(_ steps: [Step], connections: Int = 1) throws {
        self.steps = steps
        self.connections = connections
        (listener, port) = try Self.listen(backlog: 64)
        DispatchQueue.global().async { [self] in
            serve()
            done.signal()
        }
    }

    /// The request heads received so far, in order.
    var receivedRequests: [String] { requests.withLock { $0 } }

    /// Waits for the script to end on every connection; bounded.
    func finish() {
        _ = done.wait(timeout: .now() + .seconds(10))
    }

    /// A bound, listening socket on 127.0.0.1 with an ephemeral port. Never accepting
    /// on it gives a peer that completes the TCP handshake and then says nothing.
    static func listen(backlog: Int32) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && Glibc.listen(fd, backlog) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard ok else { close(fd); throw TestFailure("bind/listen: \(errno)") }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A port on 127.0.0.1 that nobody listens on, for "connection refused". The socket
    /// stays bound (without listening) for the life of the process: a port that was
    /// merely closed could be handed to another test's listener running in parallel.
    static func closedPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard ok else { close(fd); throw TestFailure("bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    private func serve() {
        defer { close(listener) }
        for _ in 0..<connections {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Self.safetyMilliseconds) == 1 else { return }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            run(on: connection)
            close(connection)
        }
    }

    private func run(on fd: Int32) {
        for step in steps {
            switch step {
            case .readRequest:
                var head: [UInt8] = []
                while !head.ends(with: Array("\r\n\r\n".utf8)), let bytes = receive(fd) { head += bytes }
                let text = String(decoding: head, as: UTF8.self)
                requests.withLock { $0.append(text) }
            case .readAny:
                _ = receive(fd)
            case .send(let text):
                guard sendAll(fd, Array(text.utf8)) else { return }
            case .sendBytes(let bytes):
                guard sendAll(fd, bytes) else { return }
            case .pause(let duration):
                sleep(for: duration)
            case .trickle(let text, let interval):
                for byte in text.utf8 {
                    sleep(for: interval)
                    guard sendAll(fd, [byte]) else { return }
                }
            case .holdOpen:
                while receive(fd) != nil {}
            }
        }
    }

    /// nil on EOF, error or the safety timeout.
    private func receive(_ fd: Int32) -> [UInt8]? {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, Self.safetyMilliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n > 0 ? Array(buffer[..<n]) : nil
    }
}

func sleep(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element: Equatable {
    func ends(with suffix: [Element]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
