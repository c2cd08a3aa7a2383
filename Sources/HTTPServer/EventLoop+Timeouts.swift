import Synchronization

extension EventLoop {
    // MARK: - Timeouts and shutdown

    /// Stalled clients cost nothing between sweeps; a sweep closes whoever is over its deadline.
    func sweep() {
        for index in connections.indices {
            guard let connection = connections[index] else { continue }
            switch connection.state {
            case .reading:
                if connection.bufferedCount == 0 && connection.servedAny {
                    if now - connection.idleSince >= idleTimeout { close(connection) }
                } else if now - connection.readStartedAt >= readTimeout {
                    close(connection)
                }
            case .handling, .streaming, .draining:
                if connection.hasPending && now - connection.lastWriteProgress >= writeTimeout {
                    close(connection, reset: true)
                }
            case .lingering:
                if now >= connection.lingerDeadline { close(connection) }
            case .closed:
                break
            }
        }
    }

    /// Stop accepting, drop connections with no request in flight, and let the rest finish their responses.
    func enterDrain() {
        draining = true
        drainDeadline = core.drainDeadline.load(ordering: .relaxed)
        unwatchListener()
        listenerResumeAt = 0
        for index in connections.indices {
            guard let connection = connections[index] else { continue }
            switch connection.state {
            case .reading, .lingering:
                close(connection)
            case .handling, .streaming, .draining:
                connection.closeAfter = true
            case .closed:
                break
            }
        }
    }
}
