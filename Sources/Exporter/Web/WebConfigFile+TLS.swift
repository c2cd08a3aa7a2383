import HTTPServer
import YAML

/// The `tls_server_config` section; what this exporter does not support (inline PEM, client_allowed_sans) is an error.
extension WebConfigReader {
    mutating func tls(_ node: YAMLNode) throws(ConfigError) -> TLSServerConfiguration? {
        let known = [
            "cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version", "max_version",
            "cipher_suites", "curve_preferences", "prefer_server_cipher_suites", "cert", "key", "client_ca",
            "client_allowed_sans",
        ]
        var values: [String: (YAMLNode, String)] = [:]
        var tls = TLSServerConfiguration(certFile: "", keyFile: "")
        for entry in try entries(node, "tls_server_config", known: known) {
            switch entry.key {
            case "cert", "key", "client_ca":
                throw failKey(
                    entry,
                    """
                    inline PEM (\(entry.key)) is not supported by this exporter; put it in a file and name it with \
                    \(entry.key)_file
                    """
                )
            case "client_allowed_sans":
                throw failKey(
                    entry,
                    """
                    client_allowed_sans is not supported by this exporter; issue client certificates from a CA that \
                    only signs allowed clients and set client_ca_file
                    """
                )
            case "cipher_suites":
                tls.cipherSuites = try cipherSuites(entry)
            case "curve_preferences":
                tls.curves += try curves(entry)
            case "prefer_server_cipher_suites":
                tls.preferServerCipherSuites = try bool(entry.value, entry.key)
            default:
                values[entry.key] = (entry.value, try string(entry.value, entry.key))
            }
        }
        try versions(values, into: &tls)
        let certFile = values["cert_file"]?.1 ?? ""
        let keyFile = values["key_file"]?.1 ?? ""
        let caFile = values["client_ca_file"]?.1 ?? ""
        let clientAuth = values["client_auth_type"]?.1 ?? ""
        // As the toolkit: TLS is on when any of these is set, and then certificate and key are required.
        guard !certFile.isEmpty || !keyFile.isEmpty || !caFile.isEmpty || !clientAuth.isEmpty else { return nil }
        guard !certFile.isEmpty else {
            throw fail(node, "missing one of cert or cert_file in tls_server_config; add cert_file: server.crt")
        }
        guard !keyFile.isEmpty else {
            throw fail(node, "missing one of key or key_file in tls_server_config; add key_file: server.key")
        }
        tls.certFile = path(certFile)
        tls.keyFile = path(keyFile)
        tls.clientAuth = try clientAuthMode(values["client_auth_type"])
        if !caFile.isEmpty {
            guard tls.clientAuth != .noClientCert else {
                throw fail(
                    values["client_ca_file"]!.0,
                    """
                    client CA's have been configured without a Client Auth Policy; set client_auth_type: \
                    RequireAndVerifyClientCert
                    """
                )
            }
            tls.clientCAFile = path(caFile)
        }
        return tls
    }

    /// The TLS 1.2 suites; TLS 1.3 names are dropped with a note, as exporter-toolkit ignores them.
    private mutating func cipherSuites(_ entry: YAMLEntry) throws(ConfigError) -> [String] {
        let suites = try strings(entry.value, entry.key)
        let tls13 = suites.filter(WebConfig.tls13CipherSuites.contains)
        let cipherSuites = suites.filter { !tls13.contains($0) }
        if !tls13.isEmpty {
            let rest = cipherSuites.isEmpty ? "; TLS 1.2 keeps its default suites" : ""
            notes.append(
                """
                \(origin): \(entry.value.position): cipher_suites lists TLS 1.3 suites \
                (\(tls13.joined(separator: ", "))), which are ignored as in exporter-toolkit: cipher_suites \
                applies to TLS 1.2 and below, and TLS 1.3 always offers its own\(rest); remove them to silence \
                this
                """
            )
        }
        return cipherSuites
    }

    /// Go's curve names, in OpenSSL's spelling.
    private func curves(_ entry: YAMLEntry) throws(ConfigError) -> [String] {
        let names = ["CurveP256": "P-256", "CurveP384": "P-384", "CurveP521": "P-521", "X25519": "X25519"]
        var curves: [String] = []
        for curve in try strings(entry.value, entry.key) {
            guard let name = names[curve] else {
                throw fail(entry.value, "unknown curve: \(curve); use CurveP256, CurveP384, CurveP521 or X25519")
            }
            curves.append(name)
        }
        return curves
    }

    private mutating func versions(
        _ values: [String: (YAMLNode, String)], into tls: inout TLSServerConfiguration
    ) throws(ConfigError) {
        for key in ["min_version", "max_version"] {
            guard let (node, text) = values[key] else { continue }
            guard let version = TLSServerConfiguration.Version(rawValue: text) else {
                throw fail(node, "unknown TLS version: \(text); use TLS10, TLS11, TLS12 or TLS13")
            }
            if key == "min_version" { tls.minVersion = version } else { tls.maxVersion = version }
            if key == "min_version" && version < .tls12 {
                notes.append(
                    """
                    \(origin): \(node.position): min_version \(text) allows TLS 1.0/1.1, deprecated by RFC 8996: their \
                    handshakes sign with SHA-1, so this server's TLS runs at OpenSSL security level 0 (weak keys and \
                    SHA-1 signatures accepted); use TLS12 unless a client cannot
                    """
                )
            }
        }
    }

    /// `client_auth_type`, with the node it was given at for the error.
    private func clientAuthMode(
        _ given: (node: YAMLNode, text: String)?
    ) throws(ConfigError) -> TLSServerConfiguration.ClientAuth {
        guard let (node, text) = given else { return .noClientCert }
        switch text {
        case "", "NoClientCert": return .noClientCert
        case "RequireClientCert": return .requireAnyClientCert  // the toolkit's old spelling
        default:
            guard let mode = TLSServerConfiguration.ClientAuth(rawValue: text) else {
                let choices = TLSServerConfiguration.ClientAuth.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail(node, "invalid ClientAuth: \(text); use one of \(choices)")
            }
            return mode
        }
    }
}
