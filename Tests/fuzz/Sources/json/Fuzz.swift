// The JSON parser and writer: a document parsed, written and parsed again is the same value, and
// the writer's output is stable. What it reads, Foundation's JSONSerialization, a second implementation,
// must read too (here only: the product itself stays without Foundation).
import Foundation
import FuzzSupport
import JSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let ours: JSONValue?
    do {
        ours = try JSONParser.parse(input)
    } catch {
        ours = nil
    }
    if let ours {
        let written = ours.encoded()
        guard let again = try? JSONParser.parse(written) else {
            fatalError("the writer's output does not parse: \(String(decoding: written, as: UTF8.self))")
        }
        // A number too large to hold parses as ±infinity, which JSON writes as null: the readers take
        // both as a value out of range (issue 49), so that is the one change a round trip may make.
        require(again == ours.finiteOrNull, "parse, write, parse changed the value")
        require(again.encoded() == written, "writing the value again gave other bytes")
    }
    // One way only: Foundation also reads what RFC 8259 does not (a trailing comma, text after a NUL).
    // It refuses a number too large to hold, which ours reads as ±infinity on purpose.
    if let ours, ours == ours.finiteOrNull {
        let theirs = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])
        require(theirs != nil, "read what Foundation refuses")
    }
    return 0
}

extension JSONValue {
    /// The value as the writer can give it back: every non-finite number as null.
    var finiteOrNull: JSONValue {
        switch self {
        case .number(let number) where !number.isFinite: .null
        case .array(let items): .array(items.map(\.finiteOrNull))
        case .object(let members): .object(members.map { ($0.key, $0.value.finiteOrNull) })
        default: self
        }
    }
}
