import CTLS
import Glibc

/// TLS over a non-blocking socket: the handshake runs inside the first reads; SSL_read and SSL_write report
/// WANT_READ / WANT_WRITE, which become -EAGAIN plus a hint of which readiness the loop should retry on.
final class TLSTransport: ConnectionTransport {
    /// The largest TLS record's plaintext; one SSL_write never asks for more, so a retry can repeat it exactly.
    static let recordSize = 16 * 1024

    private let ssl: OpaquePointer
    private let fd: Int32
    private let scratch: UnsafeMutableRawBufferPointer
    /// After a write returned -EAGAIN, OpenSSL wants the same length again (the loop re-gathers the same bytes).
    private var retryLength = 0
    private(set) var readWaitsForWritable = false
    private(set) var writeWaitsForReadable = false

    init?(fd: Int32, context: TLSContext, scratch: UnsafeMutableRawBufferPointer) {
        guard let ssl = SSL_new(context.pointer) else { return nil }
        guard ctls_server_attach(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        self.ssl = ssl
        self.fd = fd
        self.scratch = scratch
    }

    /// Reads records until the buffer is full or the socket has nothing more, so that a short result means
    /// "drained", as it does for a plain socket under edge-triggered epoll.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        readWaitsForWritable = false
        guard let base = buffer.baseAddress else { return 0 }
        var total = 0
        while total < buffer.count {
            ERR_clear_error()
            let n = SSL_read(ssl, base + total, Int32(clamping: buffer.count - total))
            if n > 0 {
                total += Int(n)
                // Read-ahead took everything the socket had: stop here rather than pay a recv for EAGAIN.
                if ctls_server_drained(ssl) == 1 { return total }
                continue
            }
            let stop: Int
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_READ:
                stop = -Int(EAGAIN)
            case SSL_ERROR_WANT_WRITE:
                readWaitsForWritable = true
                stop = -Int(EAGAIN)
            case SSL_ERROR_ZERO_RETURN:
                stop = 0
            case SSL_ERROR_SYSCALL:
                stop = errno == 0 ? 0 : -Int(errno)
            default:
                // Not TLS, a failed handshake (version, client certificate) or a corrupt record.
                stop = -Int(EPROTO)
            }
            return total > 0 ? total : stop
        }
        return total
    }

    func write(_ iov: UnsafeMutablePointer<iovec>, count: Int, total: Int) -> (written: Int, attempted: Int) {
        writeWaitsForReadable = false
        let length = retryLength > 0 ? min(retryLength, total) : min(total, Self.recordSize)
        guard length > 0 else { return (0, 0) }
        let source: UnsafeRawPointer
        if iov[0].iov_len >= length, let first = iov[0].iov_base {
            source = UnsafeRawPointer(first)
        } else {
            // Small pieces (the head and a short body) become one record instead of one record each.
            var copied = 0
            var k = 0
            while copied < length && k < count {
                let take = min(iov[k].iov_len, length - copied)
                if take > 0, let base = iov[k].iov_base {
                    (scratch.baseAddress! + copied).copyMemory(from: base, byteCount: take)
                }
                copied += take
                k += 1
            }
            source = UnsafeRawPointer(scratch.baseAddress!)
        }
        ERR_clear_error()
        let n = SSL_write(ssl, source, Int32(length))
        if n > 0 {
            retryLength = 0
            return (Int(n), Int(n))
        }
        retryLength = length
        switch SSL_get_error(ssl, n) {
        case SSL_ERROR_WANT_WRITE:
            return (-Int(EAGAIN), length)
        case SSL_ERROR_WANT_READ:
            writeWaitsForReadable = true
            return (-Int(EAGAIN), length)
        case SSL_ERROR_SYSCALL:
            return (-Int(errno == 0 ? EPIPE : errno), length)
        default:
            return (-Int(EPROTO), length)
        }
    }

    func shutdownWrite() {
        ERR_clear_error()
        // Best effort: a close_notify that does not fit now is not worth waiting for.
        _ = SSL_shutdown(ssl)
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    func release() {
        SSL_free(ssl)
        ERR_clear_error()
    }
}
