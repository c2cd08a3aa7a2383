import Glibc
import HTTPClient
import Locking
import Platform

/// One line per event, logfmt or JSON, to stderr. Every line passes through a
/// redaction of the secrets it was given: the key cannot leak even if a
/// message someday carries it by mistake.
public struct Logger: Sendable {
    typealias Level = Configuration.LogLevel
    typealias Sink = @Sendable (String) -> Void

    let level: Level
    let format: Configuration.LogFormat
    /// Shared by every copy, so a reload's new key reaches the loggers handed out at startup.
    private let secrets: Secrets
    private let sink: Sink

    init(
        level: Level = .info, format: Configuration.LogFormat = .logfmt, secrets: [String] = [],
        sink: @escaping Sink = Logger.standardError
    ) {
        self.level = level
        self.format = format
        self.secrets = Secrets(secrets)
        self.sink = sink
    }

    /// At the configured level and format, redacting the configured secrets.
    public init(for configuration: Configuration) {
        self.init(level: configuration.logLevel, format: configuration.logFormat, secrets: configuration.secrets)
    }

    /// Redacts these too from now on (a reloaded key or proxy password). The earlier ones stay: a
    /// request sent with the old key may still answer.
    func redact(_ more: [String]) { secrets.add(more) }

    /// Writes the line with one `write(2)`, so lines from threads never interleave.
    static let standardError: Sink = { line in
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }

    func debug(_ message: String, _ fields: [(String, String)] = []) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [(String, String)] = []) { log(.info, message, fields) }
    public func warn(_ message: String, _ fields: [(String, String)] = []) { log(.warn, message, fields) }
    public func error(_ message: String, _ fields: [(String, String)] = []) { log(.error, message, fields) }

    func log(_ level: Level, _ message: String, _ fields: [(String, String)]) {
        guard level >= self.level else { return }
        // Before quoting, which would change a secret holding a quote or a backslash.
        // The message and the values as one text: a secret split across two of them is found too.
        let secrets = self.secrets.list
        let values =
            secrets.isEmpty
            ? [message] + fields.map(\.1) : Redaction.redacted(pieces: [message] + fields.map(\.1), secrets: secrets)
        let all =
            [("ts", Clock.rfc3339(SystemClock.wallSeconds())), ("level", level.rawValue), ("msg", values[0])]
            + zip(fields, values.dropFirst()).map { ($0.0.0, $0.1) }
        sink(format == .json ? Self.json(all) : Self.logfmt(all))
    }

    static func logfmt(_ fields: [(String, String)]) -> String {
        fields.map { key, value in
            let plain =
                !value.isEmpty
                && value.unicodeScalars.allSatisfy {
                    $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\" && $0.value != 0x7F
                }
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

extension Logger {
    final class Secrets: Sendable {
        /// A reload with a new key adds one; the oldest go past this many.
        static let limit = 64
        private let secrets: Locked<[String]>

        init(_ initial: [String]) {
            secrets = Locked([])
            add(initial)
        }

        var list: [String] { secrets.withLock { $0 } }

        func add(_ more: [String]) {
            secrets.withLock { list in
                for secret in more where !secret.isEmpty && !list.contains(secret) { list.append(secret) }
                if list.count > Self.limit { list.removeFirst(list.count - Self.limit) }
            }
        }
    }
}
