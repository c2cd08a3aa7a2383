/// A parsed JSON document. Objects keep their keys in document order, so a
/// config error can name the first unknown key the user wrote.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// Too large for a `Double` (`1e999`): ±infinity, so the reader's range check refuses that value
    /// alone rather than the whole document.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "a list"
        case .object: "an object"
        }
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }
}

/// Where a JSON document went wrong, by line and column (both from 1).
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let line: Int
    public let column: Int

    public var description: String { "line \(line), column \(column): \(message)" }
}
