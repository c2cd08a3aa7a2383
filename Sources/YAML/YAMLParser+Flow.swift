extension YAMLParser {
    // MARK: - Flow collections

    mutating func flowNode() throws(YAMLError) -> YAMLNode {
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
