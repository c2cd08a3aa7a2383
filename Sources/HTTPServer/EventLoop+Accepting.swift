import Glibc
import Platform
import Synchronization

extension EventLoop {
    // MARK: - Accepting

    func watchListener() {
        guard !listenerWatched else { return }
        for listenFD in listenFDs where !core.isDropped(listenFD) {
            // EPOLLEXCLUSIVE: each listener in every loop's epoll, without waking all loops per connection.
            var event = EpollEvent(
                events: Linux.EPOLLIN | Linux.EPOLLEXCLUSIVE, data: UInt64(UInt32(bitPattern: listenFD)))
            Linux.epollCtl(epollFD, Linux.EPOLL_CTL_ADD, listenFD, &event)
        }
        listenerWatched = true
    }

    func unwatchListener() {
        guard listenerWatched else { return }
        var event = EpollEvent()
        for listenFD in listenFDs { Linux.epollCtl(epollFD, Linux.EPOLL_CTL_DEL, listenFD, &event) }
        listenerWatched = false
    }

    func acceptConnections(on listenFD: Int32) {
        while !draining {
            let (fd, peer) = Linux.accept4(listenFD, flags: Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
            if fd < 0 {
                let code = errno
                switch code {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EINTR, ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH,
                    EOPNOTSUPP, ENETUNREACH:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    pauseAccepting(code)
                    return
                case EINVAL:
                    // Shut down: by `shutdown` for a graceful stop, or by another holder of an inherited socket.
                    if core.stopping.load(ordering: .acquiring) {
                        unwatchListener()
                    } else {
                        drop(listenFD)
                    }
                    return
                default:
                    core.report("accept failed: \(errnoText(code).lowercased())")
                    pauseAccepting(code)
                    return
                }
            }
            if acceptBackoff != 0 {
                acceptBackoff = 0
                core.acceptPausedReported.store(false, ordering: .relaxed)
            }

            var total = 0
            var target = handle
            var targetLoad = Int.max
            for loop in core.loops {
                let load = loop.load.load(ordering: .relaxed)
                total += load
                if load < targetLoad || (load == targetLoad && loop === handle) {
                    target = loop
                    targetLoad = load
                }
            }
            if total >= core.configuration.maxConnections && !evictLongestIdle() {
                Glibc.close(fd)
                refusedAtLimit()
                continue
            }

            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            target.load.add(1, ordering: .relaxed)
            if target === handle {
                adopt(fd, peer)
            } else {
                target.post(.adopt(fd, peer))
            }
        }
    }

    /// A listener that failed for good leaves this loop's epoll (each loop drops it when it finds it
    /// failed) and is reported once; the other listeners keep serving.
    func drop(_ listenFD: Int32) {
        var event = EpollEvent()
        Linux.epollCtl(epollFD, Linux.EPOLL_CTL_DEL, listenFD, &event)
        guard core.dropListener(listenFD) else { return }
        let message = """
            listener \(Listener.boundAddress(listenFD)) stopped accepting (accept: invalid argument: it was shut \
            down, by another process holding the socket?); it is dropped, the other listeners keep serving; restart \
            to listen there again
            """
        if let dropped = core.configuration.onListenerDropped { dropped(message) } else { core.report(message) }
    }

    /// The next pause of accepting, in nanoseconds, after one of `previous` (0: none yet): 100 ms,
    /// doubling to 1 s.
    static func acceptPause(after previous: Int64) -> Int64 {
        previous == 0 ? 100_000_000 : min(previous * 2, 1_000_000_000)
    }

    /// Out of file descriptors: stop watching the listener for a while instead of spinning on it.
    private func pauseAccepting(_ code: Int32) {
        unwatchListener()
        acceptBackoff = Self.acceptPause(after: acceptBackoff)
        listenerResumeAt = now + acceptBackoff
        if !core.acceptPausedReported.exchange(true, ordering: .relaxed) {
            core.report(
                """
                cannot accept connections: \(errnoText(code).lowercased()); pausing accepts and retrying, raise the \
                open-file limit (ulimit -n) or lower the connection limit
                """
            )
        }
    }

    /// One warning when refusals start and one when they have stopped for `limitQuietPeriod`, however
    /// fast a flood makes the count of connections swing around the limit.
    private func refusedAtLimit() {
        core.limitLastRefusal.store(now, ordering: .relaxed)
        if core.limitRefused.wrappingAdd(1, ordering: .relaxed).oldValue == 0 {
            core.report(
                """
                connection limit of \(core.configuration.maxConnections) reached with no idle connection to drop; \
                refusing new connections until some close
                """
            )
        }
    }

    func endLimitEpisodeIfQuiet() {
        guard core.limitRefused.load(ordering: .relaxed) > 0,
            now - core.limitLastRefusal.load(ordering: .relaxed) >= limitQuietPeriod
        else { return }
        let refused = core.limitRefused.exchange(0, ordering: .relaxed)
        if refused > 0 {
            core.report(
                """
                connection limit of \(core.configuration.maxConnections) no longer reached: \(refused) connections \
                were refused
                """
            )
        }
    }

    /// Drops the connection whose loss costs least, never one with a response in flight: first an idle
    /// keep-alive connection or one holding a request the handler marked droppable (it only waits, e.g.
    /// for a password check; under a flood of wrong passwords those are the flood's), the longest-waiting
    /// of them; else the one that has spent longest sending its request.
    private func evictLongestIdle() -> Bool {
        var oldest: Connection?
        var oldestSince = Int64.max
        var oldestCheap = false
        for case let connection? in connections {
            let waits =
                connection.state == .handling && connection.responder?.droppable.load(ordering: .relaxed) == true
            let idle = connection.state == .reading && connection.bufferedCount == 0 && connection.servedAny
            guard waits || connection.state == .reading else { continue }
            let cheap = waits || idle
            let since = idle ? connection.idleSince : connection.readStartedAt
            if cheap != oldestCheap ? cheap : since < oldestSince {
                oldest = connection
                oldestSince = since
                oldestCheap = cheap
            }
        }
        guard let oldest else { return false }
        close(oldest)
        return true
    }

    func adopt(_ fd: Int32, _ peer: PeerAddress) {
        if draining {
            Glibc.close(fd)
            handle.load.subtract(1, ordering: .relaxed)
            return
        }
        guard let transport = makeTransport(fd) else {
            Glibc.close(fd)
            handle.load.subtract(1, ordering: .relaxed)
            return
        }
        nextSerial = nextSerial == UInt32.max ? 1 : nextSerial + 1
        let connection = Connection(fd: fd, peer: peer, transport: transport, serial: nextSerial, now: now)
        let index = Int(fd)
        if index >= connections.count {
            connections.append(
                contentsOf: repeatElement(nil, count: max(index + 1 - connections.count, connections.count)))
        }
        // Edge-triggered with EPOLLOUT always on: no epoll_ctl per request or per partial write.
        var event = EpollEvent(
            events: Linux.EPOLLIN | Linux.EPOLLOUT | Linux.EPOLLRDHUP | Linux.EPOLLET,
            data: UInt64(UInt32(bitPattern: fd)) | UInt64(nextSerial) << 32)
        guard Linux.epollCtl(epollFD, Linux.EPOLL_CTL_ADD, fd, &event) == 0 else {
            transport.release()
            Glibc.close(fd)
            handle.load.subtract(1, ordering: .relaxed)
            return
        }
        connections[index] = connection
        openCount += 1
    }

    /// Plain, or TLS with the context current at accept time (so rotated certificates reach new connections).
    private func makeTransport(_ fd: Int32) -> ConnectionTransport? {
        guard let tls = core.tls else { return PlainTransport(fd: fd) }
        return TLSTransport(fd: fd, context: tls.context(now: now), scratch: tlsScratch)
    }
}
