import Locking

/// Header fields added to every response (e.g. Strict-Transport-Security), replaceable while serving.
/// Rendered once per change, so a response pays for a lock and an append, not for formatting.
public final class ExtraResponseHeaders: Sendable {
    private let rendered = Locked<[UInt8]>([])

    public init(_ headers: [(name: String, value: String)] = []) {
        set(headers)
    }

    public func set(_ headers: [(name: String, value: String)]) {
        var writer = ResponseHeadWriter()
        let bytes = writer.renderFields(headers)
        rendered.withLock { $0 = bytes }
    }

    var bytes: [UInt8] { rendered.withLock { $0 } }
}
