import CLinux
import Glibc

/// How an event loop moves one connection's bytes: plain socket calls, or TLS records over them.
/// The loop never touches the socket's data path except through this; it still owns the fd (epoll, close).
protocol ConnectionTransport: AnyObject {
    /// Fills `buffer` as far as possible without blocking: bytes read, 0 at the end of the stream, or -errno
    /// (-EAGAIN when nothing is readable now). Fewer bytes than asked means the next readiness edge will tell.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int

    /// Writes from `count` iovecs holding `total` bytes. Returns bytes written (or -errno) and bytes attempted:
    /// fewer written than attempted means the socket is full until the next readiness edge. A write that
    /// returned -EAGAIN must be retried with the same bytes at the front. `more`: a file follows at once
    /// (`sendFile`), so a partly filled segment waits for it instead of going out alone.
    func write(_ iov: UnsafeMutablePointer<iovec>, count: Int, total: Int, more: Bool) -> (written: Int, attempted: Int)

    /// Whether `sendFile` works: on a plain socket; TLS encrypts in user space and reads the bytes instead.
    var sendsFiles: Bool { get }

    /// Up to `count` bytes of the file `source` from `offset`, sent from its pages without a copy: bytes
    /// written (fewer than `count`: the socket is full until the next readiness edge) or -errno.
    func sendFile(_ source: Int32, offset: Int, count: Int) -> Int

    /// The last read stopped because the socket must become writable first (TLS handshake output).
    var readWaitsForWritable: Bool { get }
    /// The last write stopped because the socket must become readable first (TLS key update).
    var writeWaitsForReadable: Bool { get }

    /// Ends our direction (TLS: close_notify first) while still reading what the peer sends.
    func shutdownWrite()

    /// Frees what the transport holds; the loop closes the fd afterwards.
    func release()
}

/// Plain TCP: read(2), sendmsg(2) and sendfile(2) straight on the socket.
final class PlainTransport: ConnectionTransport {
    private let fd: Int32

    init(fd: Int32) {
        self.fd = fd
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { return -Int(errno) }
        }
    }

    func write(_ iov: UnsafeMutablePointer<iovec>, count: Int, total: Int, more: Bool) -> (written: Int, attempted: Int)
    {
        var message = msghdr()
        message.msg_iov = iov
        message.msg_iovlen = count
        let n = sendmsg(fd, &message, Int32(MSG_NOSIGNAL) | (more ? Int32(MSG_MORE) : 0))
        return (n >= 0 ? n : -Int(errno), total)
    }

    var sendsFiles: Bool { true }

    func sendFile(_ source: Int32, offset: Int, count: Int) -> Int {
        // sendfile takes no MSG_NOSIGNAL: the loop's thread blocks SIGPIPE instead (EventLoop.run).
        var position = offset
        while true {
            let n = clinux_sendfile(fd, source, &position, count)
            if n >= 0 { return n }
            if errno != EINTR { return -Int(errno) }
        }
    }

    var readWaitsForWritable: Bool { false }
    var writeWaitsForReadable: Bool { false }

    func shutdownWrite() {
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    func release() {}
}
