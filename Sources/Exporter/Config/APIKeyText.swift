/// What a key's text says before any request is sent: the placeholder of an example is refused,
/// and a key unlike OpenWeather's is warned about. Neither message quotes the key.
enum APIKeyText {
    /// `origin` names the key's origin for the messages: `$OPENWEATHER_API_KEY`, `the API key file "PATH"`.
    static func check(_ key: String, from origin: String) throws(ConfigError) -> String? {
        if isPlaceholder(key) {
            throw ConfigError(
                """
                the API key in \(origin) is the placeholder of an example (like \
                REPLACE_WITH_YOUR_OPENWEATHER_API_KEY), not a key: put your own OpenWeather API key there \
                (https://home.openweathermap.org/api_keys), or run with --demo to try the exporter without one
                """
            )
        }
        guard let problem = shapeProblem(key) else { return nil }
        return
            """
            the API key in \(origin) \(problem), unlike OpenWeather's keys (32 hexadecimal characters): check that it \
            was copied whole from https://home.openweathermap.org/api_keys; OpenWeather answers a wrong key with 401
            """
    }

    /// Words and forms no OpenWeather key has: keys are hexadecimal, and these words are not.
    static func isPlaceholder(_ key: String) -> Bool {
        let letters = String(key.lowercased().filter { $0.isLetter || $0.isNumber })
        if ["replace", "your", "changeme", "placeholder", "insert", "example", "xxx"].contains(where: letters.contains)
        {
            return true
        }
        // A variable no shell or template expanded: ${KEY}, $(KEY), {{ key }}, <api-key>.
        if key.hasPrefix("${") || key.hasPrefix("$(") || key.hasPrefix("{{")
            || (key.hasPrefix("<") && key.hasSuffix(">"))
        {
            return true
        }
        // 0000..., ****: one character over and over.
        return key.count >= 4 && Set(key).count == 1
    }

    /// Nil for 32 hexadecimal characters; else what differs, without the key itself.
    static func shapeProblem(_ key: String) -> String? {
        let hexadecimal = key.allSatisfy { $0.isHexDigit }
        switch (key.count == 32, hexadecimal) {
        case (true, true): return nil
        case (false, true): return "has \(key.count) characters"
        case (true, false): return "has characters other than 0-9 and a-f"
        case (false, false): return "has \(key.count) characters, not all of them 0-9 and a-f"
        }
    }
}
