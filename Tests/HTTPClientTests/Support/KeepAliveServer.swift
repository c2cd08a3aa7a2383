import Dispatch
import Glibc
import Locking
import Platform
import Synchronization
import TestSupport

/// A loopback HTTP/1.1 origin that keeps connections open, one thread per connection, and
/// counts what it sees. Every wait is bounded, so a client bug fails a test instead of hanging it.
final class KeepAliveServer: Sendable {
    struct Behaviour: Sendable {
        /// Closes the connection after this many answers on it, without saying so.
        var closeAfter = Int.max
        /// Closes a connection that waited this long for its next request.
        var idleClose: Duration = .seconds(5)
        /// Answers with `Connection: close` and closes.
        var sayClose = false
        /// Reads the n-th request of a connection (1-based) and closes without answering.
        var dropRequest: Int?
    }

    let port: UInt16
    private let listener: Int32
    private let behaviour: Behaviour
    private let stats = Locked((connections: 0, requests: 0, closed: 0, heads: [String]()))
    private let stopped = Atomic<Bool>(false)

    init(_ behaviour: Behaviour = Behaviour()) throws {
        self.behaviour = behaviour
        (listener, port) = try LoopbackHTTP.listen(backlog: 64)
        acceptConnections(
            on: listener, until: { [self] in stopped.load(ordering: .relaxed) },
            accepted: { [self] in stats.withLock { $0.connections += 1 } },
            closed: { [self] in stats.withLock { $0.closed += 1 } },
            serve: { [self] fd in serve(fd) })
    }

    deinit {
        stopped.store(true, ordering: .relaxed)
    }

    /// Stops accepting; connections end at their idle limit.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    var connections: Int { stats.withLock { $0.connections } }
    var requests: Int { stats.withLock { $0.requests } }
    /// Connections this server has closed.
    var closed: Int { stats.withLock { $0.closed } }
    var heads: [String] { stats.withLock { $0.heads } }

    private func serve(_ fd: Int32) {
        var answered = 0
        var pending: [UInt8] = []
        let idleMilliseconds = Int32(
            behaviour.idleClose.components.seconds * 1000 + behaviour.idleClose.components.attoseconds
                / 1_000_000_000_000_000)
        while answered < behaviour.closeAfter {
            while findHeadEnd(pending) == nil {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, idleMilliseconds) == 1 else { return }
                var buffer = [UInt8](repeating: 0, count: 16384)
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { return }
                pending += buffer[..<n]
            }
            let end = findHeadEnd(pending)!
            let head = String(decoding: pending[..<end], as: UTF8.self)
            pending.removeFirst(end + 4)
            stats.withLock {
                $0.requests += 1
                $0.heads.append(head)
            }
            if behaviour.dropRequest == answered + 1 { return }
            let body = #"{"n":\#(answered + 1)}"#
            let response =
                "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n"
                + (behaviour.sayClose ? "Connection: close\r\n" : "") + "\r\n" + body
            guard sendAll(fd, Array(response.utf8)) else { return }
            answered += 1
            if behaviour.sayClose { return }
        }
    }

    private func findHeadEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first {
            bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10
        }
    }
}

/// The accept loop of the test servers here: accepts on `listener` until `stopped()` (checked every
/// 100 ms), then closes it; each connection gets a detached thread of its own that runs `serve` and
/// closes the connection. `accepted` runs on the accepting thread, `closed` once the connection is closed.
func acceptConnections(
    on listener: Int32, until stopped: @escaping @Sendable () -> Bool,
    accepted: @escaping @Sendable () -> Void = {}, closed: @escaping @Sendable () -> Void = {},
    serve: @escaping @Sendable (Int32) -> Void
) {
    DispatchQueue.global().async {
        defer { close(listener) }
        while !stopped() {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) >= 0 else { return }
            guard entry.revents != 0 else { continue }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            accepted()
            // A thread of its own, so a blocking test server does not occupy a Dispatch worker.
            Threads.spawn(name: "test server connection") {
                serve(fd)
                close(fd)
                closed()
            }
        }
    }
}

func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var sent = 0
    while sent < bytes.count {
        let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { return false }
        sent += n
    }
    return true
}
