import CTLS
import Glibc
import Platform
import TLS

/// The client's side of a `TLSContext`: which servers to trust. The server's certificate and policy are
/// set up in HTTPServer; the context type, its lifetime and OpenSSL's error text are shared.
extension TLSContext {
    /// Created on first https use, so the trust store is read only when needed.
    /// The default trust paths honour SSL_CERT_FILE and SSL_CERT_DIR at that moment.
    static let sharedClient: Result<TLSContext, HTTPClientError> = Result { () throws(HTTPClientError) in
        try TLSContext.client(extraCAFile: nil)
    }

    /// `extraCAFile` adds a PEM file of trusted roots to the default ones.
    /// `verifyingServer: false`: the handshake completes whatever certificate the server shows.
    static func client(extraCAFile: String?, verifyingServer: Bool = true) throws(HTTPClientError) -> TLSContext {
        // OpenSSL's reason for a missing file is a bare "system lib"; say which file instead.
        if let extraCAFile, access(extraCAFile, R_OK) != 0 {
            throw .tls("cannot read CA file \(extraCAFile): \(errnoText(errno))")
        }
        guard let context = TLSContext(.client) else {
            throw .tls("cannot create the TLS context: \(openSSLErrorQueueText())")
        }
        let configured =
            if let extraCAFile {
                ctls_client_configure(context.pointer, extraCAFile, verifyingServer ? 1 : 0)
            } else {
                ctls_client_configure(context.pointer, nil, verifyingServer ? 1 : 0)
            }
        guard configured == 1 else { throw .tls("cannot create the TLS context: \(openSSLErrorQueueText())") }
        return context
    }
}
