/// A YAML 1.2 reader for configuration files: block and flow mappings and sequences; plain, quoted,
/// literal and folded scalars; comments; `---` / `...` document markers and the `%YAML` directive.
/// Anchors, aliases, tags, merge keys and complex (`? `) keys are refused with an error rather than
/// half-supported: a config that relies on them is better rewritten than guessed at.
/// JSON is read too, since JSON is (this subset of) YAML.
public enum YAML {
    /// The single document of `text`; an empty file is a null scalar at 1:1.
    public static func parse(_ text: String) throws(YAMLError) -> YAMLNode {
        var parser = YAMLParser(Array(text.utf8))
        let documents = try parser.documents(limit: 1)
        return documents.first ?? YAMLNode(.scalar(YAMLScalar("")), at: YAMLPosition(line: 1, column: 1))
    }

    /// Bytes that must be UTF-8; otherwise as `parse(_: String)`.
    public static func parse(bytes: [UInt8]) throws(YAMLError) -> YAMLNode {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw YAMLError("the file is not valid UTF-8; save it as UTF-8", at: YAMLPosition(line: 1, column: 1))
        }
        return try parse(text)
    }

    /// Every document of a stream (`---` separated).
    public static func parseDocuments(_ text: String) throws(YAMLError) -> [YAMLNode] {
        var parser = YAMLParser(Array(text.utf8))
        return try parser.documents(limit: nil)
    }
}
