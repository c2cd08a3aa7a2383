/// A configuration mistake: the message says what is wrong and how to fix it.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}

extension ConfigError {
    /// A reload that asked for help or the version instead of a configuration.
    public static let noConfiguration = ConfigError(
        "the command line asks for --help or --version, not a configuration")
}
