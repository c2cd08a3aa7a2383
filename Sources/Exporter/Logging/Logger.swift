import Glibc

/// One line per event, logfmt or JSON, to stderr. Every line passes through a
/// redaction of the secrets it was given: the key cannot leak even if a
/// message someday carries it by mistake.
public struct Logger: Sendable {
    public typealias Level = Configuration.LogLevel
    public typealias Sink = @Sendable (String) -> Void

    public let level: Level
    public let format: Configuration.LogFormat
    private let secrets: [String]
    private let sink: Sink

    public init(
        level: Level = .info, format: Configuration.LogFormat = .logfmt, secrets: [String] = [],
        sink: @escaping Sink = Logger.standardError
    ) {
        self.level = level
        self.format = format
        self.secrets = secrets.filter { !$0.isEmpty }
        self.sink = sink
    }

    /// Writes the line with one `write(2)`, so lines from threads never interleave.
    public static let standardError: Sink = { line in
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }

    public func debug(_ message: String, _ fields: [(String, String)] = []) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [(String, String)] = []) { log(.info, message, fields) }
    public func warn(_ message: String, _ fields: [(String, String)] = []) { log(.warn, message, fields) }
    public func error(_ message: String, _ fields: [(String, String)] = []) { log(.error, message, fields) }

    public func log(_ level: Level, _ message: String, _ fields: [(String, String)]) {
        guard level >= self.level else { return }
        let all = [("ts", Clock.rfc3339(Clock.wallSeconds())), ("level", level.rawValue), ("msg", message)] + fields
        var line = format == .json ? Self.json(all) : Self.logfmt(all)
        for secret in secrets where line.contains(secret) {
            line = line.replacing(secret, with: "<redacted>")
        }
        sink(line)
    }

    static func logfmt(_ fields: [(String, String)]) -> String {
        fields.map { key, value in
            let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\" && $0.value != 0x7F }
            return plain ? "\(key)=\(value)" : "\(key)=\(quoted(value))"
        }.joined(separator: " ")
    }

    static func json(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(quoted($0.0)):\(quoted($0.1))" }.joined(separator: ",") + "}"
    }

    /// A JSON string literal; logfmt uses the same quoting.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
