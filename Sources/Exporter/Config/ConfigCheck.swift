/// `--config.check`: what a start would read, checked without starting. The web config is loaded as
/// the server loads it, certificates and keys included; a mistake is the start's own `ConfigError`.
extension Configuration {
    public func check(logger: Logger) throws(ConfigError) {
        if let path = webConfigFile { _ = try WebSecurity(path: path, logger: logger) }
        logger.announceCheck(self, webConfig: webConfigFile)
    }
}
