import CTLS
import Glibc
import Platform

/// An OpenSSL client context: which servers to trust. It is configured once, before it is shared,
/// and OpenSSL allows concurrent SSL_new on a context that is no longer modified. The server's
/// `TLSServerContext` is another role (its own certificate, rebuilt when the files rotate); the two
/// share only `SSL_CTX_free`.
final class TLSClientContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Created on first https use, so the trust store is read only when needed.
    /// The default trust paths honour SSL_CERT_FILE and SSL_CERT_DIR at that moment.
    static let shared: Result<TLSClientContext, HTTPClientError> = Result { () throws(HTTPClientError) in
        try TLSClientContext(extraCAFile: nil)
    }

    /// `extraCAFile` adds a PEM file of trusted roots to the default ones.
    init(extraCAFile: String?) throws(HTTPClientError) {
        // OpenSSL's reason for a missing file is a bare "system lib"; say which file instead.
        if let extraCAFile, access(extraCAFile, R_OK) != 0 {
            throw .tls("cannot read CA file \(extraCAFile): \(errnoText(errno))")
        }
        ERR_clear_error()
        let created: OpaquePointer? = if let extraCAFile {
            ctls_client_context_new(extraCAFile)
        } else {
            ctls_client_context_new(nil)
        }
        guard let created else { throw .tls("cannot create the TLS context: \(openSSLErrorQueueText())") }
        pointer = created
    }

    deinit { SSL_CTX_free(pointer) }
}

/// Drains this thread's OpenSSL error queue into one line; the queue must be
/// left empty so the next operation on this thread is not misreported.
func openSSLErrorQueueText() -> String {
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
    return reasons.isEmpty ? "unknown error" : reasons.joined(separator: "; ")
}
