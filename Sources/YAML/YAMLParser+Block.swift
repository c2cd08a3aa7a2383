extension YAMLParser {
    // MARK: - Block nodes

    enum Context {
        case document, mappingValue, sequenceItem
    }

    /// A node owned by a parent at column `parentIndent`: on the parent's line (after `- `, `: ` or `---`)
    /// or on a later line indented deeper. A mapping value may also be a sequence at the key's own column.
    mutating func blockNode(parentIndent: Int, context: Context) throws(YAMLError) -> YAMLNode {
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

    mutating func refuseUnsupported() throws(YAMLError) {
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
}
