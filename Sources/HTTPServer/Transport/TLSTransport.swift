import CTLS
import Glibc
import TLS

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
    /// A plain HTTP request came instead of a handshake and was answered; the rest is read and dropped.
    private var answeredPlainHTTP = false

    /// What Go's net/http answers to plain HTTP on a TLS port, byte for byte.
    static let plainHTTPAnswer = Array(
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n".utf8)

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
        if answeredPlainHTTP { return discard(buffer) }
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
                if total == 0 && ctls_error_is_http_request() == 1 {
                    answerPlainHTTP()
                    return discard(buffer)
                }
                // Not TLS, a failed handshake (version, client certificate) or a corrupt record.
                stop = -Int(EPROTO)
            }
            return total > 0 ? total : stop
        }
        return total
    }

    /// As Go's server does: a client that spoke plain HTTP learns why in a 400 it can read, instead of a
    /// connection closed without a word. Our side then ends; the loop closes when the client does (or
    /// at its read timeout), so the answer is not lost to a reset by unread input.
    private func answerPlainHTTP() {
        answeredPlainHTTP = true
        _ = Self.plainHTTPAnswer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads and drops what the socket holds: -EAGAIN when drained, 0 at the end of the stream.
    private func discard(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n > 0 { continue }
            if n == 0 { return 0 }
            if errno == EINTR { continue }
            return -Int(errno)
        }
    }

    /// Writes every byte of the iovecs as records of at most 16 KiB, until done or the socket is full. A
    /// response of several records is corked, so the client is woken once for all of them, not per record.
    func write(_ iov: UnsafeMutablePointer<iovec>, count: Int, total: Int, more: Bool) -> (written: Int, attempted: Int)
    {
        writeWaitsForReadable = false
        let corked = total > Self.recordSize && retryLength == 0
        if corked { setCork(true) }
        defer { if corked { setCork(false) } }
        var written = 0
        var index = 0
        var offset = 0
        while written < total {
            let length = retryLength > 0 ? min(retryLength, total - written) : min(total - written, Self.recordSize)
            let source = gather(iov, count: count, index: &index, offset: &offset, length: length)
            ERR_clear_error()
            let n = SSL_write(ssl, source, Int32(length))
            if n > 0 {
                retryLength = 0
                written += Int(n)
                continue
            }
            retryLength = length
            let failure: Int
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_WRITE:
                failure = -Int(EAGAIN)
            case SSL_ERROR_WANT_READ:
                writeWaitsForReadable = true
                failure = -Int(EAGAIN)
            case SSL_ERROR_SYSCALL:
                failure = -Int(errno == 0 ? EPIPE : errno)
            default:
                failure = -Int(EPROTO)
            }
            // Records already written count; the loop retries the rest (the same bytes first) on the next edge.
            return written > 0 && failure == -Int(EAGAIN) ? (written, total) : (failure, total)
        }
        return (written, total)
    }

    /// The next `length` bytes from iovec `index` at `offset`: in place when one iovec holds them all, else
    /// copied into the scratch buffer (a head and a short body become one record instead of two).
    private func gather(
        _ iov: UnsafeMutablePointer<iovec>, count: Int, index: inout Int, offset: inout Int, length: Int
    ) -> UnsafeRawPointer {
        while index < count && offset == iov[index].iov_len {
            index += 1
            offset = 0
        }
        if iov[index].iov_len - offset >= length, let base = iov[index].iov_base {
            offset += length
            return UnsafeRawPointer(base + offset - length)
        }
        var copied = 0
        while copied < length && index < count {
            let take = min(iov[index].iov_len - offset, length - copied)
            if take > 0, let base = iov[index].iov_base {
                (scratch.baseAddress! + copied).copyMemory(from: base + offset, byteCount: take)
            }
            copied += take
            offset += take
            if offset == iov[index].iov_len {
                index += 1
                offset = 0
            }
        }
        return UnsafeRawPointer(scratch.baseAddress!)
    }

    var sendsFiles: Bool { false }

    func sendFile(_ source: Int32, offset: Int, count: Int) -> Int {
        -Int(EINVAL)
    }

    private func setCork(_ on: Bool) {
        var value: Int32 = on ? 1 : 0
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
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
