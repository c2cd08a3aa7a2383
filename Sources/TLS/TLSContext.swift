import CTLS

/// One OpenSSL `SSL_CTX` in the client or the server role. Its owner configures it (trust for a client;
/// certificate, key and policy for a server) before it is shared, and OpenSSL allows concurrent `SSL_new`
/// on a context that is no longer modified. Each connection made from it holds its own reference (OpenSSL
/// counts them), so a context replaced while connections are open lives until the last one closes.
package final class TLSContext: @unchecked Sendable {
    package enum Role: Sendable {
        case client, server
    }

    package let pointer: OpaquePointer

    /// nil when OpenSSL cannot make one; the reason is then on this thread's error queue
    /// (`openSSLErrorQueueText`), which is emptied first so it holds only this failure.
    package init?(_ role: Role) {
        ERR_clear_error()
        guard let pointer = SSL_CTX_new(role == .client ? TLS_client_method() : TLS_server_method()) else { return nil }
        self.pointer = pointer
    }

    deinit { SSL_CTX_free(pointer) }
}

/// Drains this thread's OpenSSL error queue into one line; the queue must be left empty so the next
/// operation on this thread is not misreported.
package func openSSLErrorQueueText() -> String {
    var reasons: [String] = []
    while case let code = ERR_get_error(), code != 0 {
        if let reason = ERR_reason_error_string(code) {
            reasons.append(String(cString: reason))
        } else {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }
    return reasons.isEmpty ? "unknown OpenSSL error" : reasons.joined(separator: "; ")
}
