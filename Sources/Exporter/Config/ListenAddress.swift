/// `:9755`, `127.0.0.1:9755`, `[::]:9755` or `localhost:9755`; an empty host means every interface.
struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    var host: String
    var port: UInt16

    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Addresses separated by commas (a repeated flag's values, a file's list, a variable's text): each
    /// once, as a second listener on the same address could only fail to bind. Port 0 (any free port)
    /// may repeat: each gets its own.
    static func parseList(_ text: String, origin: String) throws(ConfigError) -> [ListenAddress] {
        var addresses: [ListenAddress] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let address = try parse(String(item).trimmed, origin: origin).get()
            guard address.port == 0 || !addresses.contains(address) else {
                throw ConfigError(
                    """
                    \(origin) "\(address)" is given twice: give each address once (a second listener on it could not \
                    bind)
                    """
                )
            }
            addresses.append(address)
        }
        return addresses
    }

    /// Nil with a reason when the text is not an address.
    static func parse(_ text: String, origin: String) -> Result<ListenAddress, ConfigError> {
        let fail = ConfigError(
            "\(origin) \"\(text)\" is not an address: use HOST:PORT, for example :9755, 127.0.0.1:9755 or [::]:9755")
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return .failure(fail)
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
            guard host.contains(":") else { return .failure(fail) }
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return .failure(fail) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText), !portText.isEmpty else {
            return .failure(
                ConfigError(
                    """
                    \(origin) "\(text)" has no valid port: give a number from 0 to 65535 after the colon, for \
                    example :9755
                    """
                ))
        }
        guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:_%".contains($0)) }) else {
            return .failure(fail)
        }
        return .success(ListenAddress(host: String(host), port: port))
    }
}
