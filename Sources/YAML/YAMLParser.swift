// The bytes the parser's files compare against.
let space = UInt8(ascii: " ")
let tab = UInt8(ascii: "\t")
let newline = UInt8(ascii: "\n")
let hash = UInt8(ascii: "#")
let colon = UInt8(ascii: ":")
let dash = UInt8(ascii: "-")
let comma = UInt8(ascii: ",")

/// Recursive descent over bytes (line breaks normalized to LF). Block structure follows the column of
/// each node's first character, as the spec's indentation rules do.
struct YAMLParser {
    var bytes: [UInt8]
    var index = 0
    var line = 1
    private var lineStart = 0
    /// Characters from `lineStart` to `index`, kept as the parser moves: counting them for each
    /// position would make a long line (minified JSON) quadratic.
    var characters = 0
    var flowDepth = 0
    var depth = 0
    /// Where the last line of the last plain scalar began, for errors about a key hiding in a continuation.
    var lastPlainLine = Mark(index: 0, line: 1, lineStart: 0, characters: 0)
    private static let maxDepth = 200

    init(_ input: [UInt8]) {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(input.count)
        var k = 0
        // A byte-order mark is allowed at the start of the stream.
        if input.starts(with: [0xEF, 0xBB, 0xBF]) { k = 3 }
        while k < input.count {
            let byte = input[k]
            if byte == UInt8(ascii: "\r") {
                normalized.append(newline)
                if k + 1 < input.count && input[k + 1] == newline { k += 1 }
            } else {
                normalized.append(byte)
            }
            k += 1
        }
        bytes = normalized
    }

    // MARK: - Positions and errors

    struct Mark {
        var index: Int
        var line: Int
        var lineStart: Int
        var characters: Int
    }

    var mark: Mark { Mark(index: index, line: line, lineStart: lineStart, characters: characters) }

    mutating func reset(to mark: Mark) {
        index = mark.index
        line = mark.line
        lineStart = mark.lineStart
        characters = mark.characters
    }

    func position(_ mark: Mark) -> YAMLPosition {
        YAMLPosition(line: mark.line, column: mark.characters + 1)
    }

    var here: YAMLPosition { position(mark) }

    func error(_ message: String, at mark: Mark? = nil) -> YAMLError {
        YAMLError(message, at: position(mark ?? self.mark))
    }

    // MARK: - Bytes

    var atEnd: Bool { index >= bytes.count }
    func byte(_ offset: Int = 0) -> UInt8 { index + offset < bytes.count ? bytes[index + offset] : 0 }
    var column: Int { index - lineStart }

    func isBlank(_ offset: Int) -> Bool {
        let b = byte(offset)
        return b == 0 && index + offset >= bytes.count || b == space || b == tab || b == newline
    }

    func isFlowIndicator(_ b: UInt8) -> Bool {
        b == comma || b == UInt8(ascii: "[") || b == UInt8(ascii: "]") || b == UInt8(ascii: "{")
            || b == UInt8(ascii: "}")
    }

    mutating func advance(_ count: Int = 1) {
        for _ in 0..<count where index < bytes.count {
            if bytes[index] == newline {
                line += 1
                lineStart = index + 1
                characters = 0
            } else if bytes[index] & 0xC0 != 0x80 {
                characters += 1
            }
            index += 1
        }
    }

    mutating func skipSpaces() {
        while byte() == space || byte() == tab { advance() }
    }

    mutating func skipComment() {
        if byte() == hash {
            while !atEnd && byte() != newline { advance() }
        }
    }

    /// Skips spaces, tabs, comments and line breaks up to the next content; true if a line break was crossed.
    /// Indentation is made of spaces: a tab before a line's content in block context is an error.
    @discardableResult
    mutating func skipToContent() throws(YAMLError) -> Bool {
        var crossed = false
        while true {
            let lineBegins = column == 0
            var sawTab = false
            while byte() == space || byte() == tab {
                if byte() == tab { sawTab = true }
                advance()
            }
            if sawTab && lineBegins && flowDepth == 0 && !atEnd && byte() != newline && byte() != hash {
                throw error("a tab in the indentation; YAML indents with spaces only, so replace the tab with spaces")
            }
            skipComment()
            if byte() == newline && !atEnd {
                advance()
                crossed = true
                continue
            }
            return crossed
        }
    }

    /// After a value: only spaces and a comment may follow on its line.
    mutating func expectLineEnd(after what: String) throws(YAMLError) {
        skipSpaces()
        skipComment()
        if !atEnd && byte() != newline {
            throw error("unexpected text after \(what); put a comment after ' #', or quote the whole value")
        }
    }

    func atDocumentMarker() -> Bool {
        guard column == 0, index + 3 <= bytes.count else { return false }
        let first = bytes[index]
        guard first == dash || first == UInt8(ascii: ".") else { return false }
        return bytes[index + 1] == first && bytes[index + 2] == first && isBlank(3)
    }

    func nullNode(_ mark: Mark) -> YAMLNode {
        YAMLNode(.scalar(YAMLScalar("")), at: position(mark))
    }

    mutating func enter() throws(YAMLError) {
        depth += 1
        if depth > Self.maxDepth {
            throw error("nesting deeper than \(Self.maxDepth) levels; flatten the structure")
        }
    }

    // MARK: - Documents

    mutating func documents(limit: Int?) throws(YAMLError) -> [YAMLNode] {
        var documents: [YAMLNode] = []
        while true {
            try skipToContent()
            if atEnd { break }
            var sawDirective = false
            while column == 0 && byte() == UInt8(ascii: "%") {
                try directive()
                sawDirective = true
                try skipToContent()
            }
            let start = mark
            if atDocumentMarker() && byte() == dash {
                advance(3)
            } else if sawDirective {
                throw error("a directive must be followed by '---' before the document starts; add a line '---'")
            } else if atDocumentMarker() {
                // A bare "..." ends nothing; skip it.
                advance(3)
                try expectLineEnd(after: "'...'")
                continue
            }
            if let limit, documents.count == limit {
                throw error(
                    "a second document ('---') in a file that holds one; remove it or merge the documents", at: start)
            }
            let node = try blockNode(parentIndent: -1, context: .document)
            try skipToContent()
            documents.append(node)
            if atEnd { break }
            if atDocumentMarker() {
                if byte() == UInt8(ascii: ".") {
                    advance(3)
                    try expectLineEnd(after: "'...'")
                }
                continue
            }
            throw error(
                "unexpected content; this line's indentation matches no key or item above it, so align it with them")
        }
        return documents
    }

    mutating func directive() throws(YAMLError) {
        let start = mark
        var name: [UInt8] = []
        advance()
        while !isBlank(0) {
            name.append(byte())
            advance()
        }
        if name == Array("TAG".utf8) {
            throw error("%TAG directives are not supported (tags are not); remove the directive", at: start)
        }
        // %YAML and reserved directives carry nothing this reader acts on.
        while !atEnd && byte() != newline { advance() }
    }
}
