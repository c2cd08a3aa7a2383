import CTLS
import Glibc
import Platform
import TLS

/// A TLS session over a connected socket, driven without blocking so every
/// wait honours the deadline. Frees its SSL object when released.
final class TLSStream {
    private let socket: Socket
    private let ssl: OpaquePointer

    /// Performs the handshake, verifying the certificate chain and that it names `url.host`;
    /// offers to resume `session` (from an earlier connection to the same origin) when given.
    init(
        socket: Socket, context: TLSContext, url: RequestURL, session: TLSSession?, deadline: Deadline
    ) throws(HTTPClientError) {
        ERR_clear_error()
        errno = 0
        guard let ssl = SSL_new(context.pointer) else {
            throw .tls("cannot create a TLS session: \(openSSLErrorQueueText())")
        }
        self.socket = socket
        self.ssl = ssl
        guard ctls_set_socket(ssl, socket.fd) == 1 else {
            throw .tls("cannot attach the socket: \(openSSLErrorQueueText())")
        }
        guard ctls_set_peer_name(ssl, url.host, url.hostIsIPAddress ? 1 : 0) == 1 else {
            throw .tls("cannot set the expected peer name: \(openSSLErrorQueueText())")
        }
        // A session that cannot be resumed only costs a full handshake.
        if let session { _ = SSL_set_session(ssl, session.pointer) }
        while true {
            ERR_clear_error()
            errno = 0
            let result = SSL_connect(ssl)
            if result == 1 { return }
            try waitOrThrow(result: result, deadline: deadline) { code, errorNumber throws(HTTPClientError) in
                throw handshakeFailure(code, errorNumber: errorNumber)
            }
        }
    }

    deinit {
        // Freed without a shutdown, OpenSSL marks the session unresumable, and it is the one kept
        // for the next connection. HTTP framing, not close_notify, says where an answer ends.
        SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN)
        SSL_free(ssl)
    }

    /// Whether the handshake resumed an earlier session instead of a full one.
    var resumed: Bool { SSL_session_reused(ssl) == 1 }

    /// For a connection that sat idle: whether it can carry the next request. Records that came
    /// meanwhile (a TLS 1.3 session ticket sent late, a key update) are processed; a close, an
    /// error or application data nobody asked for means it cannot.
    var isUsableAfterIdle: Bool {
        var byte: UInt8 = 0
        while socket.isReadableOrClosed || SSL_has_pending(ssl) == 1 {
            ERR_clear_error()
            errno = 0
            let n = SSL_read(ssl, &byte, 1)
            if n > 0 { return false }
            guard SSL_get_error(ssl, n) == SSL_ERROR_WANT_READ else {
                ERR_clear_error()
                return false
            }
        }
        return true
    }

    /// The session to offer on the next connection to this origin; with TLS 1.3 it exists
    /// once the server's ticket has been read, which happens while reading the response.
    func resumableSession() -> TLSSession? {
        guard let session = SSL_get1_session(ssl) else { return nil }
        guard SSL_SESSION_is_resumable(session) == 1 else {
            SSL_SESSION_free(session)
            return nil
        }
        return TLSSession(pointer: session)
    }

    /// Waits when OpenSSL asks for readiness; otherwise hands the failure to `fail`.
    private func waitOrThrow(
        result: Int32,
        deadline: Deadline,
        fail: (Int32, Int32) throws(HTTPClientError) -> Void
    ) throws(HTTPClientError) {
        let errorNumber = errno
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ: try socket.wait(for: Int16(POLLIN), deadline: deadline)
        case SSL_ERROR_WANT_WRITE: try socket.wait(for: Int16(POLLOUT), deadline: deadline)
        default: try fail(code, errorNumber)
        }
    }

    private func handshakeFailure(_ code: Int32, errorNumber: Int32) -> HTTPClientError {
        let verifyResult = SSL_get_verify_result(ssl)
        if verifyResult != X509_V_OK {
            ERR_clear_error()
            errno = 0
            return .tls("certificate verify failed: \(String(cString: X509_verify_cert_error_string(verifyResult)))")
        }
        if code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 {
            return errorNumber == 0
                ? .tls("connection to \(socket.endpoint) closed during the handshake")
                : .tls("handshake with \(socket.endpoint) failed: \(errnoText(errorNumber))")
        }
        return .tls("handshake with \(socket.endpoint) failed: \(openSSLErrorQueueText())")
    }

    private func ioFailure(_ code: Int32, errorNumber: Int32, while stage: String) -> HTTPClientError {
        if code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 {
            return socket.ioFailure(errorNumber, while: stage)
        }
        return .tls("\(stage): \(openSSLErrorQueueText())")
    }
}

extension TLSStream: ByteStream {
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline) throws(HTTPClientError) -> Int {
        let count = Int32(clamping: buffer.count)
        while true {
            ERR_clear_error()
            errno = 0
            let n = SSL_read(ssl, buffer.baseAddress, count)
            if n > 0 { return Int(n) }
            let errorNumber = errno
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_ZERO_RETURN: return 0
            case SSL_ERROR_WANT_READ: try socket.wait(for: Int16(POLLIN), deadline: deadline)
            case SSL_ERROR_WANT_WRITE: try socket.wait(for: Int16(POLLOUT), deadline: deadline)
            // With SSL_OP_IGNORE_UNEXPECTED_EOF a bare TCP close reads as a clean end of stream.
            case SSL_ERROR_SYSCALL where errorNumber == 0 && ERR_peek_error() == 0: return 0
            case let code: throw ioFailure(code, errorNumber: errorNumber, while: "reading the response")
            }
        }
    }

    func writeAll(_ bytes: [UInt8], deadline: Deadline) throws(HTTPClientError) {
        var sent = 0
        while sent < bytes.count {
            ERR_clear_error()
            errno = 0
            // A retry after WANT_* must repeat the same arguments, which this loop does.
            let n = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + sent, Int32(clamping: $0.count - sent)) }
            if n > 0 {
                sent += Int(n)
                continue
            }
            try waitOrThrow(result: n, deadline: deadline) { code, errorNumber throws(HTTPClientError) in
                throw ioFailure(code, errorNumber: errorNumber, while: "sending the request")
            }
        }
    }
}

/// A TLS session kept for resumption; freed when the last holder lets go.
final class TLSSession: @unchecked Sendable {
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) { self.pointer = pointer }

    deinit { SSL_SESSION_free(pointer) }
}
