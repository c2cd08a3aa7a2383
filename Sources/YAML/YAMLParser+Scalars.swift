extension YAMLParser {
    // MARK: - Scalars in block context

    struct ParsedScalar {
        var value: YAMLScalar
        var singleLine: Bool
    }

    mutating func scalarInBlock(parentIndent: Int) throws(YAMLError) -> ParsedScalar {
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
    mutating func plain(parentIndent: Int) throws(YAMLError) -> YAMLScalar {
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

    mutating func singleQuoted() throws(YAMLError) -> YAMLScalar {
        try quoted(UInt8(ascii: "'"), style: .singleQuoted, name: "single-quoted") { parser, text throws(YAMLError) in
            // The only escape inside single quotes: '' stands for one '.
            guard parser.byte() == UInt8(ascii: "'"), parser.byte(1) == UInt8(ascii: "'") else { return false }
            text.append(UInt8(ascii: "'"))
            parser.advance(2)
            return true
        }
    }

    mutating func doubleQuoted() throws(YAMLError) -> YAMLScalar {
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
    mutating func quoted(
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

    enum Chomping { case strip, clip, keep }

    mutating func blockScalar(parentIndent: Int) throws(YAMLError) -> YAMLNode {
        let start = mark
        let folded = byte() == UInt8(ascii: ">")
        advance()
        let (chomping, explicitIndent) = try blockScalarHeader()
        let indent = blockScalarIndent(explicit: explicitIndent, parentIndent: parentIndent)
        let lines = try blockScalarLines(indent: indent, parentIndent: parentIndent)
        // A scalar's trailing empty lines belong to it only with keep chomping; the rest goes back.
        var last = lines.count - 1
        while last >= 0 && lines[last].isEmpty { last -= 1 }
        let trailing = lines.count - 1 - last

        var text: [UInt8] = []
        if last >= 0 {
            text = folded ? Self.folded(lines[0...last]) : Self.literal(lines[0...last])
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

    /// The rest of the indicator's line: a chomping sign and an indentation digit in either order, then a comment.
    private mutating func blockScalarHeader() throws(YAMLError) -> (Chomping, explicitIndent: Int?) {
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
        return (chomping, explicitIndent)
    }

    /// The content's indentation: given, or that of the first non-empty line.
    private func blockScalarIndent(explicit explicitIndent: Int?, parentIndent: Int) -> Int {
        if let explicitIndent {
            if parentIndent < 0 { return explicitIndent - 1 }
            return parentIndent + explicitIndent
        }
        var k = index
        var spaces = 0
        var indent = max(parentIndent + 1, 0)
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
        return indent
    }

    /// The scalar's lines without their indentation, empty lines kept; stops before the first line
    /// indented less (or a document marker), which belongs to the parent.
    private mutating func blockScalarLines(indent: Int, parentIndent: Int) throws(YAMLError) -> [[UInt8]] {
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
        return lines
    }

    /// Folding: a line break between two unindented lines becomes a space; empty lines and more-indented
    /// lines keep their breaks.
    private static func folded(_ lines: ArraySlice<[UInt8]>) -> [UInt8] {
        var text: [UInt8] = []
        var previousFoldable = false
        var emptyRun = 0
        var first = true
        for line in lines {
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
        return text
    }

    private static func literal(_ lines: ArraySlice<[UInt8]>) -> [UInt8] {
        var text: [UInt8] = []
        for (k, line) in lines.enumerated() {
            if k > 0 { text.append(newline) }
            text += line
        }
        return text
    }
}
