import CLinux
import Glibc

/// epoll, eventfd, accept4 and thread names from the real headers (the CLinux target), in the shapes the
/// event loop uses; flags are converted once here.
enum Linux {
    static func epollCreate1(_ flags: Int32) -> Int32 { epoll_create1(flags) }
    static func eventfd(_ initial: UInt32, _ flags: Int32) -> Int32 { CLinux.eventfd(initial, flags) }

    /// The new connection's descriptor (or -1) and its client's address.
    static func accept4(_ fd: Int32, flags: Int32) -> (fd: Int32, peer: PeerAddress) {
        var words: (UInt64, UInt64) = (0, 0)
        let client = withUnsafeMutableBytes(of: &words) {
            clinux_accept4(fd, flags, $0.baseAddress!.assumingMemoryBound(to: UInt64.self))
        }
        return (client, PeerAddress(high: words.0, low: words.1))
    }

    static func setThreadName(_ thread: pthread_t, _ name: String) {
        _ = clinux_set_thread_name(thread, name)
    }

    @discardableResult
    static func epollCtl(
        _ epollFD: Int32, _ operation: Int32, _ fd: Int32, _ event: UnsafeMutablePointer<EpollEvent>
    ) -> Int32 {
        epoll_ctl(epollFD, operation, fd, event)
    }

    static func epollWait(
        _ epollFD: Int32, _ events: UnsafeMutablePointer<EpollEvent>, _ capacity: Int32, _ timeoutMilliseconds: Int32
    ) -> Int32 {
        epoll_wait(epollFD, events, capacity, timeoutMilliseconds)
    }

    // The C names, so the event loop reads as the man pages do.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLLIN = UInt32(CLinux.EPOLLIN.rawValue)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLLOUT = UInt32(CLinux.EPOLLOUT.rawValue)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLLERR = UInt32(CLinux.EPOLLERR.rawValue)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLLHUP = UInt32(CLinux.EPOLLHUP.rawValue)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLLRDHUP = UInt32(CLinux.EPOLLRDHUP.rawValue)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLLEXCLUSIVE = UInt32(CLinux.EPOLLEXCLUSIVE.rawValue)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLLET = UInt32(CLinux.EPOLLET.rawValue)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLL_CTL_ADD = CLinux.EPOLL_CTL_ADD
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLL_CTL_DEL = CLinux.EPOLL_CTL_DEL
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EPOLL_CLOEXEC = Int32(CLinux.EPOLL_CLOEXEC)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EFD_NONBLOCK = Int32(CLinux.EFD_NONBLOCK)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    static let EFD_CLOEXEC = Int32(CLinux.EFD_CLOEXEC)
}

typealias EpollEvent = epoll_event

extension epoll_event {
    init(events: UInt32 = 0, data: UInt64 = 0) {
        self = clinux_epoll_event(events, data)
    }

    var flags: UInt32 {
        var copy = self
        return clinux_epoll_event_flags(&copy)
    }

    var payload: UInt64 {
        var copy = self
        return clinux_epoll_event_data(&copy)
    }
}
