import CTLS
import Glibc
import Locking
import Platform
import TLS

/// What the server's TLS side is built from. Client-auth and version names are the Go crypto/tls ones that
/// Prometheus' exporter-toolkit uses, so a web config file maps onto this field by field.
public struct TLSServerConfiguration: Sendable, Equatable {
    public enum ClientAuth: String, Sendable, CaseIterable {
        case noClientCert = "NoClientCert"
        case requestClientCert = "RequestClientCert"
        case requireAnyClientCert = "RequireAnyClientCert"
        case verifyClientCertIfGiven = "VerifyClientCertIfGiven"
        case requireAndVerifyClientCert = "RequireAndVerifyClientCert"

        var mode: Int32 { Int32(Self.allCases.firstIndex(of: self)!) }
    }

    public enum Version: String, Sendable, CaseIterable, Comparable {
        case tls10 = "TLS10"
        case tls11 = "TLS11"
        case tls12 = "TLS12"
        case tls13 = "TLS13"

        var openSSL: Int32 {
            [TLS1_VERSION, TLS1_1_VERSION, TLS1_2_VERSION, TLS1_3_VERSION][Self.allCases.firstIndex(of: self)!]
        }

        public static func < (lhs: Version, rhs: Version) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// PEM certificate chain, leaf first.
    public var certFile: String
    /// PEM private key of the leaf certificate.
    public var keyFile: String
    /// PEM CA certificates that client certificates are verified against.
    public var clientCAFile: String?
    public var clientAuth: ClientAuth = .noClientCert
    public var minVersion: Version = .tls12
    public var maxVersion: Version = .tls13
    /// IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256), for TLS 1.2 and below; empty for Go's default suites.
    public var cipherSuites: [String] = []
    /// OpenSSL group names (X25519, P-256), in preference order; empty for the defaults.
    public var curves: [String] = []
    /// The server's cipher order wins over the client's.
    public var preferServerCipherSuites = true

    public init(certFile: String, keyFile: String) {
        self.certFile = certFile
        self.keyFile = keyFile
    }
}

/// Why a TLS context could not be built, worded for whoever edits the files.
public struct TLSSetupError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The server's current TLS context. Certificate, key and client CA files are checked for changes at most once
/// a second, on accept; a change builds a new context for new connections (rotation without a restart) while
/// open connections keep theirs. A change that does not load (a key written before its certificate) keeps
/// the previous context and is reported once through `onError` until it loads.
public final class TLSContextSource: Sendable {
    private struct State {
        var configuration: TLSServerConfiguration
        var context: TLSContext
        var stamps: [FileStamp]
        var checkedAt: Int64
        var failureReported: Bool
    }

    private let state: Locked<State>
    private let refresh = Locked<(@Sendable () -> Void)?>(nil)
    private let onError: (@Sendable (String) -> Void)?
    private static let checkInterval: Int64 = 1_000_000_000

    /// Loads everything now, so a bad file fails at start.
    public init(
        _ configuration: TLSServerConfiguration, onError: (@Sendable (String) -> Void)? = nil
    ) throws(TLSSetupError) {
        let stamps = Self.stamps(configuration)
        let context = try Self.build(configuration)
        state = Locked(
            State(
                configuration: configuration, context: context, stamps: stamps, checkedAt: monotonicNow(),
                failureReported: false))
        self.onError = onError
    }

    /// A new configuration (a reloaded web config); on failure the current context stays.
    public func update(_ configuration: TLSServerConfiguration) throws(TLSSetupError) {
        let stamps = Self.stamps(configuration)
        let context = try Self.build(configuration)
        state.withLock { state in
            state = State(
                configuration: configuration, context: context, stamps: stamps, checkedAt: monotonicNow(),
                failureReported: false)
        }
    }

    public var configuration: TLSServerConfiguration { state.withLock { $0.configuration } }

    /// Called (off the lock) before each once-a-second file check, so the owner can re-read its own configuration
    /// file and `update` first: a change that makes handshakes succeed again must not wait for a request.
    public func setRefresh(_ refresh: @escaping @Sendable () -> Void) {
        self.refresh.withLock { $0 = refresh }
    }

    func context(now: Int64) -> TLSContext {
        let due: Bool = state.withLock { state in
            guard now - state.checkedAt >= Self.checkInterval else { return false }
            state.checkedAt = now
            return true
        }
        if due, let refresh = refresh.withLock({ $0 }) { refresh() }
        let (context, report): (TLSContext, String?) = state.withLock { state in
            guard due else { return (state.context, nil) }
            let stamps = Self.stamps(state.configuration)
            guard stamps != state.stamps else { return (state.context, nil) }
            do throws(TLSSetupError) {
                state.context = try Self.build(state.configuration)
                state.stamps = stamps
                state.failureReported = false
                return (state.context, "TLS certificate files changed; new connections use the reloaded certificate")
            } catch {
                guard !state.failureReported else { return (state.context, nil) }
                state.failureReported = true
                return (
                    state.context,
                    """
                    TLS certificate files changed but do not load (\(error.description)); new connections keep the \
                    previous certificate until they do
                    """
                )
            }
        }
        if let report { onError?(report) }
        return context
    }

    // MARK: - Building

    /// The server's side of a `TLSContext`: its certificate and key, which clients it asks for a certificate
    /// and trusts, and the versions, suites and curves of the web config.
    static func build(_ configuration: TLSServerConfiguration) throws(TLSSetupError) -> TLSContext {
        guard configuration.minVersion <= configuration.maxVersion else {
            throw TLSSetupError(
                """
                min_version \(configuration.minVersion.rawValue) is above max_version \
                \(configuration.maxVersion.rawValue); lower one or raise the other
                """
            )
        }
        try readable(configuration.certFile, "certificate")
        try readable(configuration.keyFile, "key")
        guard let context = TLSContext(.server) else {
            throw TLSSetupError("cannot create a TLS context: \(openSSLErrorQueueText())")
        }
        let pointer = context.pointer
        guard ctls_server_configure(pointer, configuration.minVersion.openSSL, configuration.maxVersion.openSSL) == 1
        else {
            throw TLSSetupError("cannot create a TLS context: \(openSSLErrorQueueText())")
        }
        try loadCertificateAndKey(pointer, configuration)
        try trustClients(pointer, configuration)
        try chooseCiphersAndCurves(pointer, configuration)
        ERR_clear_error()
        return context
    }

    private static func loadCertificateAndKey(
        _ pointer: OpaquePointer, _ configuration: TLSServerConfiguration
    ) throws(TLSSetupError) {
        guard SSL_CTX_use_certificate_chain_file(pointer, configuration.certFile) == 1 else {
            throw TLSSetupError(
                """
                cannot load the certificate from \(configuration.certFile): \(openSSLErrorQueueText()); it must hold \
                PEM certificates (BEGIN CERTIFICATE), leaf first
                """
            )
        }
        guard SSL_CTX_use_PrivateKey_file(pointer, configuration.keyFile, SSL_FILETYPE_PEM) == 1 else {
            let reason = openSSLErrorQueueText()
            if reason.contains("key values mismatch") { throw mismatch(configuration) }
            throw TLSSetupError(
                """
                cannot load the private key from \(configuration.keyFile): \(reason); it must hold an unencrypted PEM \
                key (BEGIN PRIVATE KEY)
                """
            )
        }
        guard SSL_CTX_check_private_key(pointer) == 1 else {
            ERR_clear_error()
            throw mismatch(configuration)
        }
    }

    /// Which clients are asked for a certificate, and which CAs their certificates must chain to.
    private static func trustClients(
        _ pointer: OpaquePointer, _ configuration: TLSServerConfiguration
    ) throws(TLSSetupError) {
        if let caFile = configuration.clientCAFile {
            try readable(caFile, "client CA")
            guard SSL_CTX_load_verify_locations(pointer, caFile, nil) == 1 else {
                throw TLSSetupError(
                    """
                    cannot load client CA certificates from \(caFile): \(openSSLErrorQueueText()); it must hold PEM \
                    certificates
                    """
                )
            }
            if let names = SSL_load_client_CA_file(caFile) {
                SSL_CTX_set_client_CA_list(pointer, names)
            }
        } else if configuration.clientAuth == .verifyClientCertIfGiven
            || configuration.clientAuth == .requireAndVerifyClientCert
        {
            // As Go does without ClientCAs: verify against the system's roots.
            SSL_CTX_set_default_verify_paths(pointer)
        }
        ctls_server_set_client_auth(pointer, configuration.clientAuth.mode)
    }

    private static func chooseCiphersAndCurves(
        _ pointer: OpaquePointer, _ configuration: TLSServerConfiguration
    ) throws(TLSSetupError) {
        if !configuration.cipherSuites.isEmpty {
            var names: [String] = []
            for suite in configuration.cipherSuites {
                guard let name = OPENSSL_cipher_name(suite), String(cString: name) != "(NONE)" else {
                    throw TLSSetupError(
                        "unknown cipher suite \(suite); use IANA names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
                }
                names.append(String(cString: name))
            }
            guard SSL_CTX_set_cipher_list(pointer, names.joined(separator: ":")) == 1 else {
                throw TLSSetupError(
                    "none of the cipher suites \(configuration.cipherSuites) is available: \(openSSLErrorQueueText())")
            }
        }
        if configuration.preferServerCipherSuites {
            ctls_prefer_server_ciphers(pointer)
        }
        if !configuration.curves.isEmpty {
            guard ctls_set_groups(pointer, configuration.curves.joined(separator: ":")) == 1 else {
                throw TLSSetupError("cannot use the curves \(configuration.curves): \(openSSLErrorQueueText())")
            }
        }
    }

    /// OpenSSL opens the files itself, by path and blocking: each is first opened here without blocking and
    /// checked to be a regular file, so a FIFO put in its place is an error, not a hung accept.
    private static func readable(_ path: String, _ what: String) throws(TLSSetupError) {
        do {
            close(try RegularFile.open(path).fd)
        } catch {
            throw TLSSetupError(
                """
                cannot read the \(what) file \(path): \
                \(error.code == 0 ? error.description : errnoText(error.code).lowercased())
                """
            )
        }
    }

    private static func mismatch(_ configuration: TLSServerConfiguration) -> TLSSetupError {
        TLSSetupError(
            """
            the key in \(configuration.keyFile) does not belong to the certificate in \(configuration.certFile); use \
            the key the certificate was issued for
            """
        )
    }

    // MARK: - Change detection

    struct FileStamp: Equatable {
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var size: Int64 = -1
        var modified: Int64 = 0
        var changed: Int64 = 0
    }

    /// Inode, size and times: a rename over the file (how most tools rotate) changes the inode even when the
    /// times are coarse.
    static func stamps(_ configuration: TLSServerConfiguration) -> [FileStamp] {
        [configuration.certFile, configuration.keyFile, configuration.clientCAFile].map { path in
            guard let path else { return FileStamp() }
            var info = stat()
            guard stat(path, &info) == 0 else { return FileStamp() }
            return FileStamp(
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
        }
    }
}
