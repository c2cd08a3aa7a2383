import Glibc
import Platform

/// A non-blocking TCP socket that closes itself when released, so no error path leaks it.
final class Socket: @unchecked Sendable {
    let fd: Int32
    /// `host:port`, for error messages; through a proxy, it names both.
    var endpoint: String

    private init(fd: Int32, endpoint: String) {
        self.fd = fd
        self.endpoint = endpoint
    }

    deinit { close(fd) }

    /// Tries each address in order until one connects; `endpoint` (host:port) names the peer in errors.
    static func connect(
        to addresses: [ResolvedAddress], port: UInt16, endpoint: String, deadline: Deadline
    ) throws(HTTPClientError) -> Socket {
        var lastError = HTTPClientError.connect("connect to \(endpoint) failed: no addresses")
        for (index, address) in addresses.enumerated() {
            // Later addresses get a share of the time, so one black-holed address cannot use it all.
            let attemptsLeft = addresses.count - index
            let remaining = deadline.instant - ContinuousClock.now
            guard remaining > .zero else { throw .timeout }
            let attemptDeadline = attemptsLeft == 1 ? deadline : Deadline(after: remaining / attemptsLeft)
            do {
                return try attempt(address, port: port, endpoint: endpoint, deadline: attemptDeadline)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    private static func attempt(
        _ address: ResolvedAddress, port: UInt16, endpoint: String, deadline: Deadline
    ) throws(HTTPClientError) -> Socket {
        let fd = socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0)
        guard fd >= 0 else { throw .connect("connect to \(endpoint) failed: socket: \(errnoText(errno))") }
        let socket = Socket(fd: fd, endpoint: endpoint)
        // sin_port and sin6_port sit at the same offset, right after the family.
        var bytes = address.bytes
        withUnsafeBytes(of: port.bigEndian) { bytes.replaceSubrange(2..<4, with: $0) }
        let result = bytes.withUnsafeBytes { raw in
            Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if result == 0 { return socket }
        guard errno == EINPROGRESS else { throw socket.connectFailure(errno) }
        try socket.wait(for: Int16(POLLOUT), deadline: deadline)
        var soError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) == 0 else { throw socket.connectFailure(errno) }
        guard soError == 0 else { throw socket.connectFailure(soError) }
        var noDelay: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return socket
    }

    private func connectFailure(_ code: Int32) -> HTTPClientError {
        .connect("connect to \(endpoint) failed: \(errnoText(code))")
    }

    /// A broken connection after connecting is still a network failure, not a bad response.
    func ioFailure(_ code: Int32, while stage: String) -> HTTPClientError {
        .connect(
            "connection to \(endpoint) failed while \(stage): \(code == 0 ? "closed by the peer" : errnoText(code))")
    }

    /// True when the peer has closed, reset or sent something unasked: an idle
    /// keep-alive connection in any of these states cannot carry a request.
    var isReadableOrClosed: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }

    /// Waits until `events` are ready, or throws `.timeout` when the deadline passes.
    func wait(for events: Int16, deadline: Deadline) throws(HTTPClientError) {
        while true {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, try deadline.remainingMilliseconds())
            if ready > 0 { return }  // errors and hang-ups surface from the next call on the socket
            if ready < 0 && errno != EINTR { throw ioFailure(errno, while: "waiting") }
        }
    }
}

extension Socket: ByteStream {
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try wait(for: Int16(POLLIN), deadline: deadline)
            case let code: throw ioFailure(code, while: "reading the response")
            }
        }
    }

    func writeAll(_ bytes: [UInt8], deadline: Deadline) throws(HTTPClientError) {
        var sent = 0
        while sent < bytes.count {
            // MSG_NOSIGNAL: a peer that has gone must be an error, not a SIGPIPE.
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n >= 0 {
                sent += n
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try wait(for: Int16(POLLOUT), deadline: deadline)
            case let code: throw ioFailure(code, while: "sending the request")
            }
        }
    }
}
