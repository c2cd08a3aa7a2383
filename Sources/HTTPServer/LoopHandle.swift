import Glibc
import Locking
import Synchronization

/// What other threads may touch of an event loop: its inbox, the eventfd that wakes it, and its load.
final class LoopHandle: Sendable {
    enum Message: Sendable {
        /// A connection accepted by another loop and handed over for balance.
        case adopt(Int32, PeerAddress)
        case call(fd: Int32, token: UInt64, ResponderCall)
    }

    let index: Int
    let epollFD: Int32
    let wakeFD: Int32
    let inbox = Locked<[Message]>([])
    /// Set while a wake-up is pending, so a burst of calls costs one eventfd write.
    let wakePending = Atomic<Bool>(false)
    /// Connections owned or being handed over, for balancing and the global connection limit.
    let load = Atomic<Int>(0)
    /// The eventfd as other threads may write it: -1 once closed. A responder that
    /// answers after shutdown must not write into whatever reuses the number.
    private let wakeTarget: Locked<Int32>

    init(index: Int, epollFD: Int32, wakeFD: Int32) {
        self.index = index
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        self.wakeTarget = Locked(wakeFD)
    }

    func post(_ message: Message) {
        inbox.withLock { $0.append(message) }
        wake()
    }

    func wake() {
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            wakeTarget.withLock { fd in
                guard fd >= 0 else { return }
                var one: UInt64 = 1
                _ = write(fd, &one, 8)
            }
        }
    }

    /// Closes the eventfd; later wakes do nothing.
    func closeWake() {
        wakeTarget.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// On the loop's own thread a call goes straight to the connection; from anywhere else through the inbox.
    func submit(fd: Int32, token: UInt64, _ call: ResponderCall) {
        if let loop = EventLoop.current, loop.handle === self {
            loop.deliver(fd: fd, token: token, call)
        } else {
            post(.call(fd: fd, token: token, call))
        }
    }
}
