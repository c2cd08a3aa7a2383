/// Where a node starts in the text, 1-based, so a config error can say `line:column`.
public struct YAMLPosition: Sendable, Equatable, CustomStringConvertible {
    public let line: Int
    /// Counted in characters (Unicode scalars), not bytes.
    public let column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "line \(line), column \(column)" }
}

/// A scalar as written: its text after quoting and folding are resolved, and how it was written,
/// because only a plain scalar can mean null, a boolean or a number.
public struct YAMLScalar: Sendable, Equatable {
    public enum Style: Sendable, Equatable {
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    public let text: String
    public let style: Style

    public init(_ text: String, style: Style = .plain) {
        self.text = text
        self.style = style
    }

    /// `~`, `null` and the empty plain scalar (YAML 1.2 core schema).
    public var isNull: Bool {
        style == .plain && ["", "~", "null", "Null", "NULL"].contains(text)
    }

    /// `true` or `false` (core schema spellings) when plain; nil otherwise.
    public var bool: Bool? {
        guard style == .plain else { return nil }
        switch text {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: return nil
        }
    }
}

/// One `key: value` pair; keys are scalars (complex keys are refused by the parser).
public struct YAMLEntry: Sendable {
    public let key: String
    public let keyPosition: YAMLPosition
    public let value: YAMLNode
}

/// A node of the document tree. Mappings keep their keys in document order and never hold one key twice.
public struct YAMLNode: Sendable {
    public indirect enum Content: Sendable {
        case scalar(YAMLScalar)
        case sequence([YAMLNode])
        case mapping([YAMLEntry])
    }

    public let content: Content
    public let position: YAMLPosition

    public init(_ content: Content, at position: YAMLPosition) {
        self.content = content
        self.position = position
    }

    public var scalar: YAMLScalar? {
        if case .scalar(let scalar) = content { return scalar }
        return nil
    }

    public var sequence: [YAMLNode]? {
        if case .sequence(let items) = content { return items }
        return nil
    }

    public var mapping: [YAMLEntry]? {
        if case .mapping(let entries) = content { return entries }
        return nil
    }

    public var isNull: Bool { scalar?.isNull ?? false }

    /// The value under `key` in a mapping; nil when absent or when this is not a mapping.
    public subscript(key: String) -> YAMLNode? {
        mapping?.first { $0.key == key }?.value
    }

    /// "a mapping", "a sequence" or "a scalar", for messages such as "expected a mapping, found a sequence".
    public var kindDescription: String {
        switch content {
        case .scalar(let scalar): scalar.isNull ? "an empty value" : "a scalar"
        case .sequence: "a sequence"
        case .mapping: "a mapping"
        }
    }
}

/// What is wrong, where, and what to do about it.
public struct YAMLError: Error, Sendable, Equatable, CustomStringConvertible {
    public let position: YAMLPosition
    public let message: String

    public init(_ message: String, at position: YAMLPosition) {
        self.message = message
        self.position = position
    }

    public var description: String { "\(position): \(message)" }
}
