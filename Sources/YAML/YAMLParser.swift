private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let newline = UInt8(ascii: "\n")
private let hash = UInt8(ascii: "#")
private let colon = UInt8(ascii: ":")
private let dash = UInt8(ascii: "-")
private let comma = UInt8(ascii: ",")

/// Recursive descent over bytes (line breaks normalized to LF). Block structure follows the column of
/// each node's first character, as the spec's indentation rules do.
struct YAMLParser {
    private var bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    /// Characters from `lineStart` to `index`, kept as the parser moves: counting them for each
    /// position would make a long line (minified JSON) quadratic.
    private var characters = 0
    private var flowDepth = 0
    private var depth = 0
    /// Where the last line of the last plain scalar began, for errors about a key hiding in a continuation.
    private var lastPlainLine = Mark(index: 0, line: 1, lineStart: 0, characters: 0)
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

    private struct Mark {
        var index: Int
        var line: Int
        var lineStart: Int
        var characters: Int
    }

    private var mark: Mark { Mark(index: index, line: line, lineStart: lineStart, characters: characters) }

    private mutating func reset(to mark: Mark) {
        index = mark.index
        line = mark.line
        lineStart = mark.lineStart
        characters = mark.characters
    }

    private func position(_ mark: Mark) -> YAMLPosition {
        YAMLPosition(line: mark.line, column: mark.characters + 1)
    }

    private var here: YAMLPosition { position(mark) }

    private func error(_ message: String, at mark: Mark? = nil) -> YAMLError {
        YAMLError(message, at: position(mark ?? self.mark))
    }

    // MARK: - Bytes

    private var atEnd: Bool { index >= bytes.count }
    private func byte(_ offset: Int = 0) -> UInt8 { index + offset < bytes.count ? bytes[index + offset] : 0 }
    private var column: Int { index - lineStart }

    private func isBlank(_ offset: Int) -> Bool {
        let b = byte(offset)
        return b == 0 && index + offset >= bytes.count || b == space || b == tab || b == newline
    }

    private func isFlowIndicator(_ b: UInt8) -> Bool {
        b == comma || b == UInt8(ascii: "[") || b == UInt8(ascii: "]") || b == UInt8(ascii: "{")
            || b == UInt8(ascii: "}")
    }

    private mutating func advance(_ count: Int = 1) {
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

    private mutating func skipSpaces() {
        while byte() == space || byte() == tab { advance() }
    }

    private mutating func skipComment() {
        if byte() == hash {
            while !atEnd && byte() != newline { advance() }
        }
    }

    /// Skips spaces, tabs, comments and line breaks up to the next content; true if a line break was crossed.
    /// Indentation is made of spaces: a tab before a line's content in block context is an error.
    @discardableResult
    private mutating func skipToContent() throws(YAMLError) -> Bool {
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
    private mutating func expectLineEnd(after what: String) throws(YAMLError) {
        skipSpaces()
        skipComment()
        if !atEnd && byte() != newline {
            throw error("unexpected text after \(what); put a comment after ' #', or quote the whole value")
        }
    }

    private func atDocumentMarker() -> Bool {
        guard column == 0, index + 3 <= bytes.count else { return false }
        let first = bytes[index]
        guard first == dash || first == UInt8(ascii: ".") else { return false }
        return bytes[index + 1] == first && bytes[index + 2] == first && isBlank(3)
    }

    private func nullNode(_ mark: Mark) -> YAMLNode {
        YAMLNode(.scalar(YAMLScalar("")), at: position(mark))
    }

    private mutating func enter() throws(YAMLError) {
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

    private mutating func directive() throws(YAMLError) {
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

    // MARK: - Block nodes

    private enum Context {
        case document, mappingValue, sequenceItem
    }

    /// A node owned by a parent at column `parentIndent`: on the parent's line (after `- `, `: ` or `---`)
    /// or on a later line indented deeper. A mapping value may also be a sequence at the key's own column.
    private mutating func blockNode(parentIndent: Int, context: Context) throws(YAMLError) -> YAMLNode {
        try enter()
        defer { depth -= 1 }
        let start = mark
        let crossed = try skipToContent()
        if atEnd || atDocumentMarker() { return nullNode(start) }
        let indent = column
        let onNewLine = crossed || (context == .document && indent == 0)
        if onNewLine && indent <= parentIndent {
            if context == .mappingValue && indent == parentIndent && byte() == dash && isBlank(1) {
                return try blockSequence(indent: indent)
            }
            return nullNode(start)
        }
        // After "key: " on the same line only a scalar or a flow collection can follow.
        let inline = !onNewLine && context == .mappingValue
        try refuseUnsupported()
        switch byte() {
        case dash where isBlank(1):
            if inline {
                throw error(
                    "a sequence cannot start on the same line as its key; put '- item' on the next line, indented")
            }
            return try blockSequence(indent: indent)
        case UInt8(ascii: "|"), UInt8(ascii: ">"):
            return try blockScalar(parentIndent: parentIndent)
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            let node = try flowNode()
            skipSpaces()
            if byte() == colon {
                throw error("a flow collection as a mapping key is not supported; use a plain or quoted key")
            }
            try expectLineEnd(after: "the closing bracket")
            return node
        default:
            let keyStart = mark
            let scalar = try scalarInBlock(parentIndent: parentIndent)
            skipSpaces()
            if byte() == colon && isBlank(1) {
                guard scalar.singleLine else {
                    throw error(
                        """
                        this line is indented under the value above it but holds a key; align it with the keys of its \
                        mapping, or quote the value if ': ' belongs to it
                        """,
                        at: lastPlainLine)
                }
                if inline {
                    throw error(
                        """
                        a nested mapping cannot start on the same line as its key; put it on the next line, indented, \
                        or quote the value if it contains ': '
                        """,
                        at: keyStart)
                }
                return try blockMapping(indent: indent, firstKey: scalar.value, keyMark: keyStart)
            }
            if scalar.value.style != .plain {
                try expectLineEnd(after: "the closing quote")
            }
            return YAMLNode(.scalar(scalar.value), at: position(keyStart))
        }
    }

    private mutating func refuseUnsupported() throws(YAMLError) {
        switch byte() {
        case UInt8(ascii: "&"):
            throw error("anchors (&name) are not supported; write the value out in full where it is used")
        case UInt8(ascii: "*"):
            throw error("aliases (*name) are not supported; write the value out in full here")
        case UInt8(ascii: "!"):
            throw error("tags (!name) are not supported; remove the tag, every value's type follows from its key")
        case UInt8(ascii: "?") where isBlank(1):
            throw error("complex keys ('? ') are not supported; write 'key: value' with a plain or quoted key")
        case UInt8(ascii: "@"), UInt8(ascii: "`"):
            throw error("a plain value cannot start with '\(Character(UnicodeScalar(byte())))'; quote the value")
        default:
            break
        }
    }

    private mutating func blockMapping(indent: Int, firstKey: YAMLScalar, keyMark: Mark) throws(YAMLError) -> YAMLNode {
        var entries: [YAMLEntry] = []
        var firstSeen: [String: YAMLPosition] = [:]
        var key = firstKey
        var keyStart = keyMark
        while true {
            // At the ':' after the key.
            advance()
            let keyPosition = position(keyStart)
            if key.style == .plain && key.text == "<<" {
                throw error("merge keys (<<) are not supported; write the merged keys out in full", at: keyStart)
            }
            if let first = firstSeen[key.text] {
                throw error("duplicate key \"\(key.text)\" (first at \(first)); remove one of them", at: keyStart)
            }
            firstSeen[key.text] = keyPosition
            let value = try blockNode(parentIndent: indent, context: .mappingValue)
            entries.append(YAMLEntry(key: key.text, keyPosition: keyPosition, value: value))

            try skipToContent()
            if atEnd || atDocumentMarker() || column < indent { break }
            if column > indent {
                throw error(deeperThanItsKeys(after: value, keysColumn: indent + 1))
            }
            if byte() == dash && isBlank(1) {
                throw error(
                    "a sequence item where a key was expected; indent the items under their key, or add the missing key"
                )
            }
            try refuseUnsupported()
            keyStart = mark
            let next = try scalarInBlock(parentIndent: indent)
            skipSpaces()
            if byte() == colon && isBlank(1) && !next.singleLine {
                throw error(
                    """
                    this line is indented under the value above it but holds a key; align it with the keys of its \
                    mapping, or quote the value if ': ' belongs to it
                    """,
                    at: lastPlainLine)
            }
            guard byte() == colon && isBlank(1) else {
                throw error(
                    "expected a key followed by ': '; if this continues a value, indent it more than its key",
                    at: keyStart)
            }
            key = next.value
        }
        return YAMLNode(.mapping(entries), at: position(keyMark))
    }

    /// The fix for a line deeper than its mapping's keys after `value`. A key at the column of the
    /// `- ` of the list just ended most likely lost its item's indentation: the item's key column
    /// keeps it in the item, where the mapping's own column would move it out.
    private func deeperThanItsKeys(after value: YAMLNode, keysColumn: Int) -> String {
        let here = position(mark).column
        if case .sequence(let items) = value.content, value.position.column == here, let last = items.last,
            case .mapping = last.content
        {
            return """
                this line is at the column of the '- ' above (column \(here)) but is not an item; to put it in the \
                item above, indent it like that item's keys (column \(last.position.column)); to start a new item, \
                begin it with '- '; for a key beside the list's own key, column \(keysColumn)
                """
        }
        return "unexpected indentation; indent this line like the keys of its mapping (column \(keysColumn))"
    }

    private mutating func blockSequence(indent: Int) throws(YAMLError) -> YAMLNode {
        let start = mark
        var items: [YAMLNode] = []
        while true {
            // At the '-'.
            advance()
            items.append(try blockNode(parentIndent: indent, context: .sequenceItem))
            try skipToContent()
            if atEnd || atDocumentMarker() || column < indent { break }
            if column > indent {
                if let last = items.last, case .mapping = last.content {
                    throw error(
                        """
                        unexpected indentation; to put this line in the item above, indent it like that item's keys \
                        (column \(last.position.column)); to start a new item, align its '- ' with the others (column \
                        \(indent + 1))
                        """
                    )
                }
                throw error(
                    """
                    unexpected indentation; align this line with the '-' of its sequence (column \(indent + 1)) or \
                    with the keys of an item
                    """
                )
            }
            // At the sequence's column but not an item: the next key of the mapping that holds it.
            guard byte() == dash && isBlank(1) else { break }
        }
        return YAMLNode(.sequence(items), at: position(start))
    }

    // MARK: - Scalars in block context

    private struct ParsedScalar {
        var value: YAMLScalar
        var singleLine: Bool
    }

    private mutating func scalarInBlock(parentIndent: Int) throws(YAMLError) -> ParsedScalar {
        let startLine = line
        let value: YAMLScalar
        switch byte() {
        case UInt8(ascii: "\""): value = try doubleQuoted()
        case UInt8(ascii: "'"): value = try singleQuoted()
        default: value = try plain(parentIndent: parentIndent)
        }
        return ParsedScalar(value: value, singleLine: line == startLine)
    }

    private func canStartPlain(inFlow: Bool) -> Bool {
        let b = byte()
        switch b {
        case UInt8(ascii: "-"), UInt8(ascii: "?"), UInt8(ascii: ":"):
            let next = byte(1)
            return !isBlank(1) && !(inFlow && isFlowIndicator(next))
        case comma, UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"), hash,
            UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"), UInt8(ascii: "|"), UInt8(ascii: ">"),
            UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "%"), UInt8(ascii: "@"), UInt8(ascii: "`"):
            return false
        default:
            return true
        }
    }

    /// A plain scalar: ends before ': ', ' #', a line end (continued on deeper-indented lines, folded), and in
    /// flow context before `,[]{}`.
    private mutating func plain(parentIndent: Int) throws(YAMLError) -> YAMLScalar {
        let inFlow = flowDepth > 0
        guard canStartPlain(inFlow: inFlow) else {
            throw error("a value cannot start with '\(Character(UnicodeScalar(byte())))' here; quote the value")
        }
        var text: [UInt8] = []
        var commented = plainSegment(into: &text, inFlow: inFlow)
        // A comment ends a plain scalar: nothing after it continues the value.
        while byte() == newline && !commented {
            // Look ahead for a continuation line; give up (and stay put) if there is none.
            let end = mark
            var breaks = 0
            while true {
                while byte() == space || byte() == tab { advance() }
                if byte() == newline && !atEnd {
                    advance()
                    breaks += 1
                } else {
                    break
                }
            }
            let continues =
                !atEnd && byte() != hash && !atDocumentMarker()
                && (inFlow
                    ? !isFlowIndicator(byte()) && !(byte() == colon && (isBlank(1) || isFlowIndicator(byte(1))))
                    : column > parentIndent && !(byte() == colon && isBlank(1)))
            guard continues else {
                reset(to: end)
                break
            }
            if breaks == 1 {
                text.append(space)
            } else {
                text.append(contentsOf: repeatElement(newline, count: breaks - 1))
            }
            lastPlainLine = mark
            commented = plainSegment(into: &text, inFlow: inFlow)
        }
        return YAMLScalar(String(decoding: text, as: UTF8.self))
    }

    /// One line's worth of a plain scalar, trailing whitespace dropped; true when a comment ended it.
    private mutating func plainSegment(into text: inout [UInt8], inFlow: Bool) -> Bool {
        var pendingSpace = 0
        while !atEnd {
            let b = byte()
            if b == newline { break }
            if b == colon && (isBlank(1) || (inFlow && isFlowIndicator(byte(1)))) { break }
            if inFlow && isFlowIndicator(b) { break }
            if b == space || b == tab {
                if byte(1) == hash { break }
                pendingSpace += 1
                advance()
                continue
            }
            if pendingSpace > 0 {
                text.append(contentsOf: bytes[(index - pendingSpace)..<index])
                pendingSpace = 0
            }
            text.append(b)
            advance()
        }
        // Trailing whitespace (pendingSpace) is not part of the value.
        skipSpaces()
        guard byte() == hash else { return false }
        skipComment()
        return true
    }

    // MARK: - Quoted scalars

    private mutating func singleQuoted() throws(YAMLError) -> YAMLScalar {
        try quoted(UInt8(ascii: "'"), style: .singleQuoted, name: "single-quoted") { parser, text throws(YAMLError) in
            // The only escape inside single quotes: '' stands for one '.
            guard parser.byte() == UInt8(ascii: "'"), parser.byte(1) == UInt8(ascii: "'") else { return false }
            text.append(UInt8(ascii: "'"))
            parser.advance(2)
            return true
        }
    }

    private mutating func doubleQuoted() throws(YAMLError) -> YAMLScalar {
        try quoted(UInt8(ascii: "\""), style: .doubleQuoted, name: "double-quoted") { parser, text throws(YAMLError) in
            guard parser.byte() == UInt8(ascii: "\\") else { return false }
            parser.advance()
            if parser.byte() == newline && !parser.atEnd {
                // An escaped line break joins the lines without a space.
                parser.advance()
                while parser.byte() == space || parser.byte() == tab { parser.advance() }
                return true
            }
            try parser.escape(into: &text)
            return true
        }
    }

    /// The scan both quoted styles share: blanks are held back until something other than a line
    /// break follows them (a line's trailing blanks are not part of the value); `escape` consumes
    /// the style's escape sequence at the current byte, if there is one.
    private mutating func quoted(
        _ quote: UInt8, style: YAMLScalar.Style, name: String,
        escape: (inout YAMLParser, inout [UInt8]) throws(YAMLError) -> Bool
    ) throws(YAMLError) -> YAMLScalar {
        let start = mark
        let quoteText = String(decoding: [quote], as: UTF8.self)
        advance()
        var text: [UInt8] = []
        var pending: [UInt8] = []
        while true {
            if atEnd {
                throw error("a \(name) value that began here is not closed; add the closing \(quoteText)", at: start)
            }
            let b = byte()
            if b == newline {
                pending = []
                try foldQuotedLineBreak(into: &text, start: start, quote: quoteText)
                continue
            }
            if b == space || b == tab {
                pending.append(b)
                advance()
                continue
            }
            text += pending
            pending = []
            if try escape(&self, &text) { continue }
            advance()
            if b == quote { return YAMLScalar(String(decoding: text, as: UTF8.self), style: style) }
            text.append(b)
        }
    }

    /// A line break inside quotes folds to a space, or to n-1 newlines for n breaks.
    private mutating func foldQuotedLineBreak(into text: inout [UInt8], start: Mark, quote: String) throws(YAMLError) {
        var breaks = 0
        while byte() == newline && !atEnd {
            advance()
            breaks += 1
            while byte() == space || byte() == tab { advance() }
            if atDocumentMarker() {
                throw error(
                    """
                    a quoted value that began at \(position(start)) runs into a document marker; add the closing \
                    \(quote)
                    """
                )
            }
        }
        if breaks == 1 {
            text.append(space)
        } else {
            text.append(contentsOf: repeatElement(newline, count: breaks - 1))
        }
    }

    private mutating func escape(into text: inout [UInt8]) throws(YAMLError) {
        let escapeMark = mark
        let b = byte()
        advance()
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "0"): 0, UInt8(ascii: "a"): 7, UInt8(ascii: "b"): 8, UInt8(ascii: "t"): 9, tab: 9,
            UInt8(ascii: "n"): 10, UInt8(ascii: "v"): 11, UInt8(ascii: "f"): 12, UInt8(ascii: "r"): 13,
            UInt8(ascii: "e"): 27, space: 32, UInt8(ascii: "\""): 34, UInt8(ascii: "/"): 47, UInt8(ascii: "\\"): 92,
        ]
        if let value = simple[b] {
            text.append(value)
            return
        }
        let scalarValue: UInt32
        switch b {
        case UInt8(ascii: "N"): scalarValue = 0x85
        case UInt8(ascii: "_"): scalarValue = 0xA0
        case UInt8(ascii: "L"): scalarValue = 0x2028
        case UInt8(ascii: "P"): scalarValue = 0x2029
        case UInt8(ascii: "x"): scalarValue = try hexDigits(2, escapeMark)
        case UInt8(ascii: "u"): scalarValue = try hexDigits(4, escapeMark)
        case UInt8(ascii: "U"): scalarValue = try hexDigits(8, escapeMark)
        default:
            throw error(
                """
                unknown escape '\\\(b < 0x80 ? String(Character(UnicodeScalar(b))) : "?")' in a double-quoted value; \
                write '\\\\' for a backslash, or use single quotes
                """,
                at: escapeMark)
        }
        guard let scalar = UnicodeScalar(scalarValue) else {
            throw error(
                "escape names no Unicode character (surrogate or beyond U+10FFFF); fix the code point", at: escapeMark)
        }
        text.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    private mutating func hexDigits(_ count: Int, _ escapeMark: Mark) throws(YAMLError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            let b = byte()
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default:
                throw error("this escape needs \(count) hex digits; write them all (e.g. \\u00e9)", at: escapeMark)
            }
            value = value << 4 | UInt32(digit)
            advance()
        }
        return value
    }

    // MARK: - Block scalars

    private mutating func blockScalar(parentIndent: Int) throws(YAMLError) -> YAMLNode {
        let start = mark
        let folded = byte() == UInt8(ascii: ">")
        advance()
        enum Chomping { case strip, clip, keep }
        var chomping = Chomping.clip
        var explicitIndent: Int?
        for _ in 0..<2 {
            let b = byte()
            if b == dash && chomping == .clip {
                chomping = .strip
                advance()
            } else if b == UInt8(ascii: "+") && chomping == .clip {
                chomping = .keep
                advance()
            } else if b >= UInt8(ascii: "1") && b <= UInt8(ascii: "9") && explicitIndent == nil {
                explicitIndent = Int(b - UInt8(ascii: "0"))
                advance()
            }
        }
        if !isBlank(0) {
            throw error(
                """
                after '|' or '>' only a chomping sign (+ or -), an indentation digit (1-9) and a comment may follow; \
                move the text to the next line, indented
                """
            )
        }
        try expectLineEnd(after: "the block scalar indicator")
        advance()  // the line break (or nothing at the end)

        // The content's indentation: given, or that of the first non-empty line.
        var indent: Int
        if let explicitIndent {
            indent = max(parentIndent, -1) + explicitIndent
            if parentIndent < 0 { indent = explicitIndent - 1 }
        } else {
            var k = index
            var spaces = 0
            indent = max(parentIndent + 1, 0)
            while k < bytes.count {
                if bytes[k] == space {
                    spaces += 1
                } else if bytes[k] == newline {
                    spaces = 0
                } else {
                    indent = max(spaces, parentIndent + 1)
                    if spaces <= parentIndent { indent = parentIndent + 1 }
                    break
                }
                k += 1
            }
        }

        var lines: [[UInt8]] = []
        while !atEnd {
            let lineMark = mark
            var spaces = 0
            while byte() == space && spaces < indent {
                advance()
                spaces += 1
            }
            if byte() == newline {
                lines.append([])
                advance()
                continue
            }
            if atEnd { break }
            if spaces < indent || atDocumentMarker() {
                if spaces < indent && byte() == tab && spaces > parentIndent {
                    throw error("a tab in the indentation of a block scalar; indent with spaces only")
                }
                reset(to: lineMark)
                break
            }
            var content: [UInt8] = []
            while !atEnd && byte() != newline {
                content.append(byte())
                advance()
            }
            lines.append(content)
            if !atEnd { advance() }
        }
        // A scalar's trailing empty lines belong to it only with keep chomping; the rest goes back.
        var last = lines.count - 1
        while last >= 0 && lines[last].isEmpty { last -= 1 }
        let trailing = lines.count - 1 - last

        var text: [UInt8] = []
        if last >= 0 {
            if folded {
                var previousFoldable = false
                var emptyRun = 0
                var first = true
                for line in lines[0...last] {
                    if line.isEmpty {
                        emptyRun += 1
                        continue
                    }
                    let foldable = line.first != space && line.first != tab
                    if !first {
                        if previousFoldable && foldable {
                            if emptyRun == 0 {
                                text.append(space)
                            } else {
                                text += repeatElement(newline, count: emptyRun)
                            }
                        } else {
                            text += repeatElement(newline, count: emptyRun + 1)
                        }
                    } else {
                        text += repeatElement(newline, count: emptyRun)
                    }
                    text += line
                    first = false
                    emptyRun = 0
                    previousFoldable = foldable
                }
            } else {
                for (k, line) in lines[0...last].enumerated() {
                    if k > 0 { text.append(newline) }
                    text += line
                }
            }
        }
        switch chomping {
        case .strip:
            break
        case .clip:
            if last >= 0 { text.append(newline) }
        case .keep:
            if last >= 0 { text.append(newline) }
            text += repeatElement(newline, count: trailing)
        }
        return YAMLNode(
            .scalar(YAMLScalar(String(decoding: text, as: UTF8.self), style: folded ? .folded : .literal)),
            at: position(start))
    }

    // MARK: - Flow collections

    private mutating func flowNode() throws(YAMLError) -> YAMLNode {
        try enter()
        defer { depth -= 1 }
        let start = mark
        if atEnd {
            throw error("the file ends inside a flow collection; add the closing bracket")
        }
        try refuseUnsupported()
        switch byte() {
        case UInt8(ascii: "["):
            return try flowSequence()
        case UInt8(ascii: "{"):
            return try flowMapping()
        case UInt8(ascii: "\""):
            return YAMLNode(.scalar(try doubleQuoted()), at: position(start))
        case UInt8(ascii: "'"):
            return YAMLNode(.scalar(try singleQuoted()), at: position(start))
        case UInt8(ascii: "|"), UInt8(ascii: ">"):
            throw error("block scalars ('|', '>') cannot appear inside [ ] or { }; use a quoted value")
        case comma, UInt8(ascii: "]"), UInt8(ascii: "}"):
            throw error(
                "expected a value before '\(Character(UnicodeScalar(byte())))'; remove the extra comma or add the value"
            )
        default:
            return YAMLNode(.scalar(try plain(parentIndent: -1)), at: position(start))
        }
    }

    /// After a flow key: quoted keys and collections (JSON-like) may have ':' right after them; plain keys
    /// stop only before a ':' that is followed by a blank or a flow indicator, so any ':' here is a separator.
    private mutating func flowSequence() throws(YAMLError) -> YAMLNode {
        let start = mark
        advance()
        flowDepth += 1
        defer { flowDepth -= 1 }
        var items: [YAMLNode] = []
        while true {
            try skipToContent()
            if byte() == UInt8(ascii: "]") {
                advance()
                break
            }
            if atEnd {
                throw error("the flow sequence that began at \(position(start)) is not closed; add the closing ']'")
            }
            let entryMark = mark
            var node = try flowNode()
            try skipToContent()
            if byte() == colon {
                // A single-pair mapping inside a sequence: [name: value].
                guard let key = node.scalar else {
                    throw error(
                        "a collection as a mapping key is not supported; use a plain or quoted key", at: entryMark)
                }
                advance()
                try skipToContent()
                let value = byte() == comma || byte() == UInt8(ascii: "]") ? nullNode(mark) : try flowNode()
                node = YAMLNode(
                    .mapping([YAMLEntry(key: key.text, keyPosition: node.position, value: value)]), at: node.position)
                try skipToContent()
            }
            items.append(node)
            if byte() == comma {
                advance()
                continue
            }
            if byte() == UInt8(ascii: "]") {
                advance()
                break
            }
            if atEnd {
                throw error("the flow sequence that began at \(position(start)) is not closed; add the closing ']'")
            }
            throw error(
                "expected ',' or ']' in the flow sequence that began at \(position(start)); separate items with commas")
        }
        return YAMLNode(.sequence(items), at: position(start))
    }

    private mutating func flowMapping() throws(YAMLError) -> YAMLNode {
        let start = mark
        advance()
        flowDepth += 1
        defer { flowDepth -= 1 }
        var entries: [YAMLEntry] = []
        var firstSeen: [String: YAMLPosition] = [:]
        while true {
            try skipToContent()
            if byte() == UInt8(ascii: "}") {
                advance()
                break
            }
            if atEnd {
                throw error("the flow mapping that began at \(position(start)) is not closed; add the closing '}'")
            }
            let keyMark = mark
            let keyNode = try flowNode()
            guard let key = keyNode.scalar else {
                throw error("a collection as a mapping key is not supported; use a plain or quoted key", at: keyMark)
            }
            if key.style == .plain && key.text == "<<" {
                throw error("merge keys (<<) are not supported; write the merged keys out in full", at: keyMark)
            }
            if let first = firstSeen[key.text] {
                throw error("duplicate key \"\(key.text)\" (first at \(first)); remove one of them", at: keyMark)
            }
            firstSeen[key.text] = keyNode.position
            try skipToContent()
            var value = nullNode(mark)
            if byte() == colon {
                advance()
                try skipToContent()
                if byte() != comma && byte() != UInt8(ascii: "}") {
                    value = try flowNode()
                    try skipToContent()
                }
            }
            entries.append(YAMLEntry(key: key.text, keyPosition: keyNode.position, value: value))
            if byte() == comma {
                advance()
                continue
            }
            if byte() == UInt8(ascii: "}") {
                advance()
                break
            }
            if atEnd {
                throw error("the flow mapping that began at \(position(start)) is not closed; add the closing '}'")
            }
            throw error(
                """
                expected ',' or '}' in the flow mapping that began at \(position(start)); separate entries with commas \
                and keys from values with ': '
                """
            )
        }
        return YAMLNode(.mapping(entries), at: position(start))
    }
}
