import Dispatch
import Glibc
import Locking
import Platform
import TestSupport

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
    /// How long it waits for each next connection before it stops serving.
    private let acceptMilliseconds: Int32

    /// `acceptWait`: longer for a test whose client does other work between this server's
    /// connections, which a busy machine can stretch past the default.
    init(_ steps: [Step], connections: Int = 1, acceptWait: Duration = .milliseconds(5000)) throws {
        self.steps = steps
        self.connections = connections
        acceptMilliseconds = Int32(clamping: acceptWait.components.seconds * 1000)
        (listener, port) = try LoopbackHTTP.listen(backlog: 64)
        // A thread of its own: a blocked worker of Dispatch's global queue may wait long for a
        // thread of its own on a machine whose cores are busy, and the client's deadlines run.
        Threads.spawn(name: "scripted server") { [self] in
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

    private func serve() {
        defer { close(listener) }
        for _ in 0..<connections {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, acceptMilliseconds) == 1 else { return }
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

extension Array where Element: Equatable {
    func ends(with suffix: [Element]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}
