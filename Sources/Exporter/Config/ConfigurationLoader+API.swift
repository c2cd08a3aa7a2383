import HTTPClient

/// The API part of loading: the key, the proxy, trusted CAs and connection reuse, each checked now
/// (files read, URLs parsed) so a mistake is a message at start, not a failure at the first poll.
extension ConfigurationLoader {
    /// Proxy, trust and connection reuse of the API client; files are checked now, not at the first poll.
    func loadTransport(_ settings: RawSettings, into config: inout Configuration) throws(ConfigError) {
        do {
            if let proxy = settings.values[Settings.proxyURL.flag.name] {
                config.proxy = ProxyConfiguration(proxy: try ProxyServer(parsing: proxy.text, origin: proxy.origin))
            } else {
                config.proxy = try ProxyConfiguration(environment: environment)
            }
        } catch .invalidURL(let reason) {
            // The reason already names the flag or variable and the fix; "invalid URL" would repeat it.
            throw ConfigError(reason)
        } catch {
            throw ConfigError(error.description)
        }
        // The built-in simulator is on loopback: a proxy for the real API has no business there.
        if config.demo { config.proxy = .direct }
        config.maxIdleConnections = try settings.resolved(Settings.maxIdleConnections)
        if let file = settings.values[Settings.tlsCAFile.flag.name] {
            try checkCertificates(file.text, origin: file.origin)
            config.tlsCAFile = file.text
        }
        for name in ["SSL_CERT_FILE"] {
            if let path = environment[name], !path.isEmpty { try checkCertificates(path, origin: "$\(name)") }
        }
        let url = config.openWeatherURL
        if url.lowercased().hasPrefix("http://"), !config.demo, !Self.isLoopback(url) {
            config.warnings.append(
                """
                --openweather.url \(url) is http://: the API key travels unencrypted to that host; use https:// unless \
                it is a proxy or gateway on a trusted network
                """
            )
        }
    }

    func checkCertificates(_ path: String, origin: String) throws(ConfigError) {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: 16 << 20)
        } catch {
            throw ConfigError(
                "cannot read the CA certificates \"\(path)\" (\(origin)): \(error); check the path and its permissions")
        }
        guard String(decoding: bytes, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw ConfigError(
                """
                "\(path)" (\(origin)) holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the CA \
                certificates in PEM form
                """
            )
        }
    }

    /// http://localhost..., http://127.x..., http://[::1]...: the key never leaves the machine.
    static func isLoopback(_ url: String) -> Bool {
        let authority = url.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" }
        let host =
            authority.hasPrefix("[")
            ? String(authority.dropFirst().prefix { $0 != "]" }) : String(authority.prefix { $0 != ":" })
        return host.lowercased() == "localhost" || host.hasPrefix("127.") || host == "::1"
    }

    /// The demo sends the key only to its own simulator, so any text will do there.
    func checkKey(_ key: String, from origin: String, into config: inout Configuration) throws(ConfigError) {
        guard !config.demo, let warning = try APIKeyText.check(key, from: origin) else { return }
        config.warnings.append(warning)
    }

    func loadKey(_ settings: RawSettings, into config: inout Configuration) throws(ConfigError) {
        var keyFile = settings.values[Settings.apiKeyFile.flag.name]
        if config.demo, let file = keyFile {
            // A real config tried against the simulator: its key file may not exist here, and no key is needed.
            config.warnings.append(
                """
                the API key file "\(file.text)" (\(file.origin)) is not read with --demo: the demo's simulator needs \
                no key; without --demo the file is read as usual
                """
            )
            keyFile = nil
        }
        if let file = keyFile {
            let bytes: [UInt8]
            do {
                bytes = try Files.read(file.text, limit: 4096)
            } catch {
                throw ConfigError(
                    """
                    cannot read the API key file "\(file.text)" (\(file.origin)): \(error); check the path and its \
                    permissions
                    """
                )
            }
            let key = String(decoding: bytes, as: UTF8.self).trimmed
            guard !key.isEmpty else {
                throw ConfigError("the API key file \"\(file.text)\" is empty: put your OpenWeather API key in it")
            }
            guard key.allSatisfy({ $0.isASCII && !$0.isWhitespace && !($0.asciiValue! < 0x20) }) else {
                throw ConfigError(
                    """
                    the API key file "\(file.text)" holds more than a key (spaces or several lines): leave only the \
                    key in it
                    """
                )
            }
            if Files.isWorldReadable(file.text) {
                config.warnings.append(
                    "the API key file \"\(file.text)\" is readable by every user: chmod 600 it (or 640 for a group)")
            }
            config.apiKey = Secret(key)
            config.apiKeySource = file.text
            try checkKey(key, from: "\"\(file.text)\" (\(file.origin))", into: &config)
        } else if let key = environment["OPENWEATHER_API_KEY"]?.trimmed, !key.isEmpty {
            config.apiKey = Secret(key)
            config.apiKeySource = "$OPENWEATHER_API_KEY"
            try checkKey(key, from: "$OPENWEATHER_API_KEY", into: &config)
        } else if config.demo {
            config.apiKey = Secret("demo-key")
            config.apiKeySource = "demo"
        } else {
            throw ConfigError(
                """
                no OpenWeather API key: set OPENWEATHER_API_KEY or pass --openweather.api-key-file=PATH (get a key at \
                https://home.openweathermap.org/api_keys); to try the exporter without a key run with --demo
                """
            )
        }
    }
}
