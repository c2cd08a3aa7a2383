// The YAML reader under the config file and the web config. Besides "no crash", what the config layer
// relies on: every position (of a node or an error) points into the input, and parsing is deterministic.
import FuzzSupport
import YAML

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    let lines = bytes.reduce(1) { $0 + ($1 == 0x0A || $1 == 0x0D ? 1 : 0) }
    // Characters (UTF-8 lead bytes) on each line, line breaks as the parser reads them (CRLF, CR, LF):
    // a column, which the parser keeps as it moves, never lies beyond its line's end.
    var widths = [0]
    var k = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    while k < bytes.count {
        if bytes[k] == 0x0D || bytes[k] == 0x0A {
            if bytes[k] == 0x0D && k + 1 < bytes.count && bytes[k + 1] == 0x0A { k += 1 }
            widths.append(0)
        } else if bytes[k] & 0xC0 != 0x80 {
            widths[widths.count - 1] += 1
        }
        k += 1
    }
    func check(_ position: YAMLPosition) {
        require(position.line >= 1 && position.line <= lines + 1, "line \(position.line) of \(lines)")
        require(position.column >= 1 && position.column <= size + 1, "column \(position.column)")
        if position.line <= widths.count {
            require(
                position.column <= widths[position.line - 1] + 1,
                "column \(position.column) of a line of \(widths[position.line - 1])")
        }
    }
    func walk(_ node: YAMLNode) {
        check(node.position)
        switch node.content {
        case .scalar: break
        case .sequence(let items): items.forEach(walk)
        case .mapping(let entries):
            require(Set(entries.map(\.key)).count == entries.count, "duplicate keys kept")
            for entry in entries {
                check(entry.keyPosition)
                walk(entry.value)
            }
        }
    }
    do {
        let documents = try parsedDocuments(bytes)
        documents.forEach(walk)
        let again = try parsedDocuments(bytes)
        require(again.count == documents.count, "not deterministic")
    } catch {
        check(error.position)
        require(!error.message.isEmpty, "an error without a message")
    }
    return 0
}

private func parsedDocuments(_ bytes: [UInt8]) throws(YAMLError) -> [YAMLNode] {
    guard let text = String(validating: bytes, as: UTF8.self) else { return [] }
    return try YAML.parseDocuments(text)
}
