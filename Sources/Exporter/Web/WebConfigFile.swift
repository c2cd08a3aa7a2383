import HTTPServer
import YAML

/// `--web.config.file`: Prometheus exporter-toolkit's web configuration (TLS, basic auth, response headers),
/// with its key names, defaults and checks, so a file written for any official exporter works here unchanged.
/// https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md
struct WebConfig: Sendable {
    /// Nil when `tls_server_config` sets none of cert_file, key_file, client_ca_file, client_auth_type (plain HTTP).
    var tls: TLSServerConfiguration?
    /// User name to bcrypt hash; empty: no authentication.
    var users: [String: String] = [:]
    var headers: [(name: String, value: String)] = []
    /// Nil without `rate_limit` or with `interval: 0` (the toolkit's way to switch it off).
    var rateLimit: RateLimitConfiguration?
    /// Accepted as the toolkit accepts them, but worth a warning line each time the file loads.
    var notes: [String] = []

    /// The TLS 1.3 suites of Go's `tls.CipherSuites()`: the toolkit accepts them in cipher_suites and Go
    /// ignores them there (TLS 1.3 suites cannot be configured in Go), so they are ignored here too.
    static let tls13CipherSuites = ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]

    /// The headers the toolkit lets a file set, with the values it accepts (nil: any).
    static let allowedHeaders: [(name: String, values: [String]?)] = [
        ("Strict-Transport-Security", nil),
        ("X-Content-Type-Options", ["nosniff"]),
        ("X-Frame-Options", ["deny", "sameorigin"]),
        ("X-XSS-Protection", nil),
        ("Content-Security-Policy", nil),
    ]

    static func load(path: String) throws(ConfigError) -> WebConfig {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: 1 << 20)
        } catch {
            throw ConfigError("cannot read --web.config.file \(path): \(error.description)")
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        return try parse(bytes, directory: directory, origin: "--web.config.file \(path)")
    }

    /// `directory` anchors relative file names, as the toolkit joins them with the config file's directory.
    static func parse(_ bytes: [UInt8], directory: String, origin: String) throws(ConfigError) -> WebConfig {
        let root: YAMLNode
        do {
            root = try YAML.parse(bytes: bytes)
        } catch {
            throw ConfigError("\(origin): \(error.description)")
        }
        var reader = WebConfigReader(origin: origin, directory: directory)
        var config = try reader.config(root)
        config.notes = reader.notes
        return config
    }
}

/// Walks the YAML tree; every error names the file, the line and column, and the fix.
struct WebConfigReader {
    let origin: String
    let directory: String
    var notes: [String] = []

    func fail(_ node: YAMLNode, _ message: String) -> ConfigError {
        ConfigError("\(origin): \(node.position): \(message)")
    }

    func failKey(_ entry: YAMLEntry, _ message: String) -> ConfigError {
        ConfigError("\(origin): \(entry.keyPosition): \(message)")
    }

    /// The entries of a mapping (an empty value counts as an empty mapping), unknown keys refused.
    func entries(_ node: YAMLNode, _ section: String, known: [String]) throws(ConfigError) -> [YAMLEntry] {
        if node.isNull { return [] }
        guard let entries = node.mapping else {
            throw fail(node, "\(section) must be a mapping of keys to values, not \(node.kindDescription)")
        }
        for entry in entries where !known.contains(entry.key) {
            let near = known.map { ($0, CommandLineFlags.editDistance($0, entry.key)) }.min { $0.1 < $1.1 }
            let hint =
                near.flatMap { $0.1 <= 3 ? "did you mean \"\($0.0)\"?" : nil }
                ?? "known keys: \(known.joined(separator: ", "))"
            throw failKey(entry, "unknown key \"\(entry.key)\" in \(section); \(hint)")
        }
        return entries
    }

    func string(_ node: YAMLNode, _ key: String) throws(ConfigError) -> String {
        guard let scalar = node.scalar else {
            throw fail(node, "\(key) must be a single value, not \(node.kindDescription)")
        }
        return scalar.isNull ? "" : scalar.text
    }

    func strings(_ node: YAMLNode, _ key: String) throws(ConfigError) -> [String] {
        if node.isNull { return [] }
        guard let items = node.sequence else {
            throw fail(node, "\(key) must be a list (- item per line, or [a, b]), not \(node.kindDescription)")
        }
        var out: [String] = []
        for item in items { out.append(try string(item, key)) }
        return out
    }

    func bool(_ node: YAMLNode, _ key: String) throws(ConfigError) -> Bool {
        guard let value = node.scalar?.bool else {
            throw fail(node, "\(key) must be true or false")
        }
        return value
    }

    func path(_ text: String) -> String {
        text.isEmpty || text.hasPrefix("/") ? text : directory + "/" + text
    }

    mutating func config(_ root: YAMLNode) throws(ConfigError) -> WebConfig {
        var config = WebConfig()
        for entry in try entries(
            root, "the web config",
            known: ["tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"])
        {
            switch entry.key {
            case "tls_server_config": config.tls = try tls(entry.value)
            case "http_server_config": config.headers = try http(entry.value)
            case "basic_auth_users": config.users = try users(entry.value)
            default: config.rateLimit = try rateLimit(entry.value)
            }
        }
        return config
    }

    func http(_ node: YAMLNode) throws(ConfigError) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        for entry in try entries(node, "http_server_config", known: ["http2", "headers"]) {
            if entry.key == "http2" {
                // Accepted for compatibility: this server speaks HTTP/1.1 only, which every Prometheus scrapes.
                _ = try bool(entry.value, entry.key)
                continue
            }
            if entry.value.isNull { continue }
            guard let fields = entry.value.mapping else {
                throw fail(entry.value, "headers must be a mapping of header names to values")
            }
            for field in fields {
                guard let allowed = WebConfig.allowedHeaders.first(where: { $0.name == field.key }) else {
                    let names = WebConfig.allowedHeaders.map(\.name).joined(separator: ", ")
                    throw failKey(
                        field, "HTTP header \"\(field.key)\" can not be configured; the toolkit allows \(names)")
                }
                let value = try string(field.value, field.key)
                if let values = allowed.values, !values.contains(value) {
                    throw fail(
                        field.value,
                        """
                        invalid value for \(field.key). Expected one of: \
                        \(values.map { "\"\($0)\"" }.joined(separator: " ")), but got: \"\(value)\"
                        """
                    )
                }
                // An empty value leaves the header unset, as in the toolkit.
                if !value.isEmpty { headers.append((field.key, value)) }
            }
        }
        return headers
    }

    func rateLimit(_ node: YAMLNode) throws(ConfigError) -> RateLimitConfiguration? {
        var interval: (node: YAMLNode, nanoseconds: Int64)?
        var burst: (node: YAMLNode, count: Int)?
        for entry in try entries(node, "rate_limit", known: ["interval", "burst"]) {
            let text = try string(entry.value, entry.key)
            if entry.key == "interval" {
                guard let nanoseconds = RateLimitConfiguration.goDuration(text) else {
                    throw fail(
                        entry.value,
                        """
                        interval must be a duration such as 1s, 100ms or 1m30s (0 switches the limit off), not \
                        \"\(text)\"
                        """
                    )
                }
                interval = (entry.value, nanoseconds)
            } else {
                guard let count = Int(text), count >= 0 else {
                    throw fail(entry.value, "burst must be a whole number of requests, such as 10, not \"\(text)\"")
                }
                burst = (entry.value, count)
            }
        }
        // As the toolkit: an interval of 0, or none, means no limit.
        guard let interval, interval.nanoseconds > 0 else { return nil }
        guard let burst, burst.count > 0 else {
            throw fail(
                burst?.node ?? node,
                "rate_limit needs a burst of at least 1 (with 0 every request would be refused with 429); add burst: 10"
            )
        }
        return RateLimitConfiguration(interval: interval.nanoseconds, burst: burst.count)
    }

    func users(_ node: YAMLNode) throws(ConfigError) -> [String: String] {
        if node.isNull { return [:] }
        guard let entries = node.mapping else {
            throw fail(node, "basic_auth_users must map user names to bcrypt hashes, not \(node.kindDescription)")
        }
        var users: [String: String] = [:]
        for entry in entries {
            let hash = try string(entry.value, entry.key)
            guard BasicAuth.isBcryptHash(hash) else {
                throw fail(
                    entry.value,
                    """
                    the password of user \"\(entry.key)\" is not a bcrypt hash; store the hash, not the password: \
                    htpasswd -nBC 10 \"\" | tr -d ':\\n'
                    """
                )
            }
            users[entry.key] = hash
        }
        return users
    }
}
