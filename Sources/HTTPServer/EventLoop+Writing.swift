import Glibc
import Synchronization

extension EventLoop {
    // MARK: - Responding

    /// A responder call, on this loop's thread; stale or out-of-order calls are dropped.
    func deliver(fd: Int32, token: UInt64, _ call: ResponderCall) {
        guard fd >= 0, Int(fd) < connections.count, let connection = connections[Int(fd)], connection.token == token
        else { return }
        switch call {
        case .respond(let response):
            guard connection.state == .handling else { return }
            if response.closeConnection { connection.closeAfter = true }
            var length = response.kept?.count ?? 0
            for chunk in response.body { length += chunk.count }
            send(
                connection, status: response.status, headers: response.headers, contentLength: length,
                body: response.body, kept: response.kept)
            finishResponse(connection)
        case .head(let status, let headers, let contentLength):
            guard connection.state == .handling else { return }
            connection.state = .streaming
            connection.streamRemaining = contentLength
            send(connection, status: status, headers: headers, contentLength: contentLength, body: [], kept: nil)
        case .body(let bytes, let whenWritten):
            guard connection.state == .streaming else { return }
            var chunk = connection.isHead ? [] : bytes
            if chunk.count > connection.streamRemaining {
                // More than announced would be read as the start of the next response.
                chunk = Array(chunk.prefix(connection.streamRemaining))
                connection.closeAfter = true
            }
            if let whenWritten {
                if let earlier = connection.whenWritten {
                    connection.whenWritten = { @Sendable in
                        earlier()
                        whenWritten()
                    }
                } else {
                    connection.whenWritten = whenWritten
                }
            } else if chunk.isEmpty {
                return
            }
            if !chunk.isEmpty {
                connection.streamRemaining -= chunk.count
                if !connection.hasPending { connection.lastWriteProgress = now }
                connection.pending.append(chunk)
            }
            flush(connection, prefix: UnsafeRawBufferPointer(start: nil, count: 0))
        case .end:
            guard connection.state == .streaming else { return }
            connection.whenWritten = nil
            if connection.streamRemaining > 0 && !connection.isHead {
                // Fewer bytes than announced: only closing tells the client the body is short.
                connection.closeAfter = true
            }
            finishResponse(connection)
        }
    }

    func send(
        _ connection: Connection, status: Int, headers: [(name: String, value: String)], contentLength: Int,
        body: [[UInt8]],
        kept: KeptBody?
    ) {
        let closing = connection.closeAfter || !connection.keepAlive || draining
        let header: ConnectionHeader = closing ? .close : (connection.version == .http10 ? .keepAlive : .omitted)
        head.build(
            status: status, headers: headers, contentLength: contentLength, date: date.bytes, connection: header,
            extra: core.extraHeaders?.bytes ?? [])
        if closing { connection.closeAfter = true }
        let hasBody = !connection.isHead && status >= 200 && status != 204 && status != 304
        if hasBody {
            for chunk in body where !chunk.isEmpty {
                connection.pending.append(chunk)
            }
            if let kept, kept.count > 0 {
                connection.kept = kept
                connection.keptOffset = 0
            }
        }
        connection.lastWriteProgress = now
        // The head stays in the loop's buffer unless the socket takes less than all of it. The state is not
        // `.draining` yet, so this flush cannot start the next request and rebuild `head` while it is borrowed.
        head.bytes.withUnsafeBytes { flush(connection, prefix: $0) }
    }

    /// Writes `prefix`, the queued chunks, then the kept body, until done or the socket is full: the chunks
    /// with gathered transport writes, the kept body with sendfile where `sendsFile` says so (else it is the
    /// last iovec of the gathered write). Once all is written, the next request starts, or a streamed
    /// response's producer is told (`HTTPResponder.writeBody(_:whenWritten:)`).
    func flush(_ connection: Connection, prefix: UnsafeRawBufferPointer) {
        var prefixWritten = 0
        let transport = connection.transport
        while prefixWritten < prefix.count || connection.hasPending {
            let result: Int
            let attempted: Int
            if prefixWritten == prefix.count && !connection.hasPendingChunks, let kept = connection.kept,
                Self.sendsFile(kept, transport)
            {
                attempted = kept.count - connection.keptOffset
                result = transport.sendFile(kept.fd, offset: connection.keptOffset, count: attempted)
                // Nothing sent of a body that has bytes left: the memfd cannot end early, so it is an error.
                if result == 0 {
                    close(connection)
                    return
                }
            } else {
                (result, attempted) = gatherWrite(
                    connection, prefix: UnsafeRawBufferPointer(rebasing: prefix[prefixWritten...]))
            }
            if result >= 0 {
                connection.lastWriteProgress = now
                let fromPrefix = min(result, prefix.count - prefixWritten)
                prefixWritten += fromPrefix
                connection.markWritten(result - fromPrefix)
                // A short write means the socket buffer is full; EPOLLOUT reports when it drains.
                if result < attempted { break }
            } else if result == -Int(EINTR) {
                continue
            } else if result == -Int(EAGAIN) || result == -Int(EWOULDBLOCK) {
                break
            } else {
                // EPIPE, ECONNRESET: the client went away mid-response.
                close(connection)
                return
            }
        }
        if prefixWritten < prefix.count {
            connection.pending.insert(Array(prefix[prefixWritten...]), at: connection.pendingIndex)
        }
        if !connection.hasPending {
            if connection.state == .draining {
                completeCycle(connection)
            } else if let whenWritten = connection.whenWritten {
                connection.whenWritten = nil
                whenWritten()
            }
        }
    }

    /// Below this a kept body goes out with the head in one gathered write, read from its mapping: for a
    /// small body the copy costs less than sendfile's second call and page handling (measured at 20 KB,
    /// sendfile served 0.4–0.7x the requests of the copy; at 85 KB it served about twice as many).
    static let sendFileFrom = 64 * 1024

    /// A kept body goes out with sendfile: on a plain socket, from `sendFileFrom` bytes on.
    private static func sendsFile(_ kept: KeptBody, _ transport: ConnectionTransport) -> Bool {
        transport.sendsFiles && kept.count >= sendFileFrom
    }

    /// One transport write over the prefix, up to `iovCapacity` queued chunks and, when they all fit and the
    /// kept body is not sent as a file, the kept body's mapping; each chunk is pinned by a nested
    /// `withUnsafeBytes` so no pointer outlives its array. Returns bytes written or -errno, and bytes attempted.
    private func gatherWrite(_ connection: Connection, prefix: UnsafeRawBufferPointer) -> (Int, Int) {
        var used = 0
        var attempted = 0
        if let base = prefix.baseAddress, prefix.count > 0 {
            iov[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: prefix.count)
            used = 1
            attempted = prefix.count
        }
        let first = connection.pendingIndex
        let last = min(connection.pending.count, first + iovCapacity - 1 - used)
        let transport = connection.transport
        let iov = self.iov
        let firstOffset = connection.pendingOffset
        // The kept body follows: as a file once these bytes are out, or read from its mapping in this write.
        let kept = last == connection.pending.count ? connection.kept : nil
        let viaFile = kept.map { Self.sendsFile($0, transport) } ?? false
        let more = viaFile

        func pin(_ index: Int, _ used: Int, _ attempted: Int) -> (Int, Int) {
            if index == last {
                var used = used
                var attempted = attempted
                // `connection.kept` holds the body (and so its mapping) until it is written.
                if let kept, !viaFile, let bytes = kept.bytes {
                    let skip = connection.keptOffset
                    iov[used] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: bytes + skip), iov_len: kept.count - skip)
                    used += 1
                    attempted += kept.count - skip
                }
                guard used > 0 else { return (0, 0) }
                while true {
                    let result = transport.write(iov, count: used, total: attempted, more: more)
                    if result.written != -Int(EINTR) { return result }
                }
            }
            return connection.pending[index].withUnsafeBytes { bytes in
                let skip = index == first ? firstOffset : 0
                iov[used] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + skip), iov_len: bytes.count - skip)
                return pin(index + 1, used + 1, attempted + bytes.count - skip)
            }
        }
        return pin(first, used, attempted)
    }

    func finishResponse(_ connection: Connection) {
        guard connection.state != .closed else { return }
        connection.state = .draining
        if !connection.hasPending {
            completeCycle(connection)
        }
    }

    /// The response is written: close, or go back to reading the next request.
    private func completeCycle(_ connection: Connection) {
        if connection.closeAfter || draining {
            closeAfterResponse(connection)
            return
        }
        connection.state = .reading
        if connection.bufferedCount > 0 {
            connection.readStartedAt = now
        } else {
            connection.idleSince = now
        }
        process(connection)
    }

    /// After an error the client may still be sending; closing with unread input would reset the connection
    /// and could destroy the error response, so shut down our side and drain for a moment first.
    private func closeAfterResponse(_ connection: Connection) {
        guard connection.lingerOnClose || connection.bufferedCount > 0, !connection.peerClosed, !draining else {
            close(connection)
            return
        }
        connection.transport.shutdownWrite()
        connection.state = .lingering
        connection.lingerDeadline = now + lingerTimeout
        connection.consume(connection.bufferedCount)
        discardInput(connection)
    }

    /// `reset` drops unsent data at once instead of leaving the kernel to push it to a client that stopped reading.
    func close(_ connection: Connection, reset: Bool = false) {
        guard connection.state != .closed else { return }
        connection.state = .closed
        // Before the descriptor goes: whoever sees the close from outside must find the flag set.
        connection.responder?.closed.store(true, ordering: .relaxed)
        if reset {
            var abortive = linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
        }
        connection.transport.release()
        Glibc.close(connection.fd)
        connections[Int(connection.fd)] = nil
        connection.releaseBuffers()
        openCount -= 1
        handle.load.subtract(1, ordering: .relaxed)
    }
}
