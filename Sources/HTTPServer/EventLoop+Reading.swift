import Glibc

extension EventLoop {
    // MARK: - Reading and parsing

    func onEvent(_ connection: Connection, _ flags: UInt32) {
        if flags & Linux.EPOLLERR != 0 {
            close(connection)
            return
        }
        let transport = connection.transport
        let readable = flags & (Linux.EPOLLIN | Linux.EPOLLRDHUP | Linux.EPOLLHUP) != 0
        let writable = flags & Linux.EPOLLOUT != 0
        if connection.hasPending && (writable || (readable && transport.writeWaitsForReadable)) {
            flush(connection, prefix: UnsafeRawBufferPointer(start: nil, count: 0))
            if connection.state == .closed { return }
        }
        if readable || (writable && transport.readWaitsForWritable) {
            // The peer's FIN is already reported: no later edge will come, so read on to the end of stream.
            readAvailable(connection, toEnd: flags & (Linux.EPOLLRDHUP | Linux.EPOLLHUP) != 0)
            if connection.state == .reading {
                process(connection)
            }
        }
    }

    /// Reads until the socket is drained (edge-triggered) or the buffer is at its limit.
    private func readAvailable(_ connection: Connection, toEnd: Bool = false) {
        if connection.state == .lingering {
            discardInput(connection)
            return
        }
        while connection.state != .closed && !connection.peerClosed {
            let space = connection.readSpace(limit: bufferLimit)
            if space.count == 0 {
                connection.readPaused = true
                return
            }
            let n = connection.transport.read(into: space)
            if n > 0 {
                if connection.state == .reading && connection.bufferedCount == 0 {
                    connection.readStartedAt = now
                }
                connection.didRead(n)
                // A short read drained the socket; a new edge reports anything that arrives later.
                if n < space.count && !toEnd { return }
            } else if n == 0 {
                connection.peerClosed = true
                // Before its response starts, a client that sent FIN has given up (as nginx takes it): the
                // handler's work is wasted and the descriptor would sit in CLOSE_WAIT until it answered.
                if (connection.state == .reading && connection.bufferedCount == 0) || connection.state == .handling {
                    close(connection)
                }
                return
            } else if n == -Int(EAGAIN) || n == -Int(EWOULDBLOCK) {
                return
            } else {
                close(connection)
                return
            }
        }
    }

    func discardInput(_ connection: Connection) {
        while true {
            let n = connection.transport.read(into: discard)
            if n > 0 { continue }
            if n == -Int(EAGAIN) || n == -Int(EWOULDBLOCK) { return }
            close(connection)
            return
        }
    }

    /// Parses and dispatches buffered requests one at a time, while the connection is free for the next.
    func process(_ connection: Connection) {
        // A handler answering synchronously lands here again; the outer call carries on instead.
        guard !connection.inProcess else { return }
        connection.inProcess = true
        defer { connection.inProcess = false }
        while connection.state == .reading {
            if connection.readPaused {
                connection.readPaused = false
                readAvailable(connection)
                if connection.state != .reading { return }
            }
            if connection.bufferedCount < connection.needBytes {
                if connection.peerClosed { close(connection) }
                return
            }
            switch RequestParser.parse(connection.buffered, limits: limits, scanFrom: connection.scanned) {
            case .incomplete(let scanned, let needBytes):
                connection.scanned = scanned
                connection.needBytes = needBytes
            case .invalid(let error):
                respondWithError(connection, error)
                return
            case .complete(let parsed):
                connection.consume(parsed.consumed)
                connection.scanned = 0
                connection.needBytes = 1
                dispatch(connection, parsed)
            }
        }
    }

    private func dispatch(_ connection: Connection, _ parsed: ParsedRequest) {
        connection.state = .handling
        connection.keepAlive = parsed.keepAlive && !draining
        connection.isHead = parsed.isHead
        connection.version = parsed.request.version
        connection.servedAny = true
        nextToken += 1
        let responder = connection.responder(for: nextToken, loop: handle)
        handler.handle(parsed.request, responder: responder)
        // The FIN came with the request: no later edge reports it, so the answer-pending check is here.
        if connection.peerClosed && connection.state == .handling {
            close(connection)
        }
    }

    private func respondWithError(_ connection: Connection, _ error: ParseError) {
        connection.state = .handling
        connection.keepAlive = false
        connection.isHead = false
        connection.version = .http11
        connection.lingerOnClose = true
        let body = Array(error.message.utf8) + [0x0A]
        send(
            connection, status: error.status, headers: [("Content-Type", "text/plain; charset=utf-8")],
            contentLength: body.count, body: [body], kept: nil)
        finishResponse(connection)
    }
}
