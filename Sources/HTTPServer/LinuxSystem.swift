import Glibc

/// Swift's Glibc module leaves out <sys/epoll.h>, <sys/eventfd.h> and the GNU `accept4`, and this target
/// has no C shim, so these are bound once through dlsym, called with the C calling convention.
enum Linux {
    nonisolated(unsafe) static let epollCreate1: @convention(c) (Int32) -> Int32 = symbol("epoll_create1")
    nonisolated(unsafe) private static let epollCtlC: @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = symbol("epoll_ctl")
    nonisolated(unsafe) private static let epollWaitC: @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32 = symbol("epoll_wait")
    nonisolated(unsafe) static let setThreadName: @convention(c) (pthread_t, UnsafePointer<CChar>?) -> Int32 = symbol("pthread_setname_np")
    nonisolated(unsafe) static let eventfd: @convention(c) (UInt32, Int32) -> Int32 = symbol("eventfd")
    nonisolated(unsafe) static let accept4: @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32 = symbol("accept4")

    @discardableResult
    static func epollCtl(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, _ event: UnsafeMutablePointer<EpollEvent>) -> Int32 {
        epollCtlC(epollFD, operation, fd, UnsafeMutableRawPointer(event))
    }

    static func epollWait(_ epollFD: Int32, _ events: UnsafeMutablePointer<EpollEvent>, _ capacity: Int32, _ timeoutMilliseconds: Int32) -> Int32 {
        epollWaitC(epollFD, UnsafeMutableRawPointer(events), capacity, timeoutMilliseconds)
    }

    // Values from the kernel's uapi headers; stable ABI.
    static let EPOLLIN: UInt32 = 0x001
    static let EPOLLOUT: UInt32 = 0x004
    static let EPOLLERR: UInt32 = 0x008
    static let EPOLLHUP: UInt32 = 0x010
    static let EPOLLRDHUP: UInt32 = 0x2000
    static let EPOLLEXCLUSIVE: UInt32 = 1 << 28
    static let EPOLLET: UInt32 = 1 << 31
    static let EPOLL_CTL_ADD: Int32 = 1
    static let EPOLL_CTL_DEL: Int32 = 2
    static let EPOLL_CLOEXEC = Int32(O_CLOEXEC)
    static let EFD_NONBLOCK = Int32(O_NONBLOCK)
    static let EFD_CLOEXEC = Int32(O_CLOEXEC)
}

/// `struct epoll_event`: packed on x86_64 (12 bytes), naturally aligned elsewhere.
struct EpollEvent {
    #if arch(x86_64)
    var events: UInt32 = 0
    private var low: UInt32 = 0
    private var high: UInt32 = 0
    var data: UInt64 {
        get { UInt64(low) | UInt64(high) << 32 }
        set {
            low = UInt32(truncatingIfNeeded: newValue)
            high = UInt32(truncatingIfNeeded: newValue >> 32)
        }
    }
    #else
    var events: UInt32 = 0
    private var padding: UInt32 = 0
    var data: UInt64 = 0
    #endif

    init(events: UInt32 = 0, data: UInt64 = 0) {
        self.events = events
        self.data = data
    }
}

private func symbol<Function>(_ name: String) -> Function {
    guard let address = dlsym(nil, name) else {
        fatalError("the C library lacks \(name); this server needs Linux with glibc")
    }
    return unsafeBitCast(address, to: Function.self)
}
