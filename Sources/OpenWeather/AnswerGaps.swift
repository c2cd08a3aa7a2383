/// What an answer did not give that its reading would have shown: optional fields left out (absent,
/// null, of another type or out of range) and list entries skipped. A reading carries them so the
/// exporter can count and log them; its series for them are simply not there.
public struct AnswerGaps: Sendable, Equatable {
    public struct Gap: Sendable, Equatable {
        /// As the field policies name fields: `wind.deg`, and in a list `list[].main.feels_like` (an
        /// entry's index left out, so one name stands for the field in every entry); for skipped entries,
        /// the list: `list`, `hourly`.
        public var field: String
        /// The first occurrence's problem, for the log: "absent or null", "`wind.deg` = 400.0 is outside 0.0...360.0".
        public var reason: String
        /// Entries skipped, for a list; 1 for a field, however many entries lacked it.
        public var count: Int
    }

    /// Each field once, in the order first met.
    public var fields: [Gap] = []
    /// Each list once, in the order first met.
    public var skipped: [Gap] = []

    public init() {}

    public var isEmpty: Bool { fields.isEmpty && skipped.isEmpty }

    /// `path` with each entry's index left out: `list[3].main.feels_like` is `list[].main.feels_like`.
    static func field(_ path: String) -> String {
        guard path.utf8.contains(UInt8(ascii: "[")) else { return path }
        var out = ""
        var inIndex = false
        for character in path {
            if character == "[" {
                inIndex = true
                out.append(character)
            } else if character == "]" {
                inIndex = false
                out.append(character)
            } else if !inIndex {
                out.append(character)
            }
        }
        return out
    }
}

/// Where one decode notes its gaps as it reads; made per answer and never shared between threads.
/// A reason is made only for the first occurrence: a hostile list of 100,000 broken entries costs no
/// 100,000 messages.
final class GapLog {
    private(set) var gaps = AnswerGaps()

    func missing(_ path: String, _ reason: @autoclosure () -> String) {
        let field = AnswerGaps.field(path)
        guard !gaps.fields.contains(where: { $0.field == field }) else { return }
        gaps.fields.append(.init(field: field, reason: reason(), count: 1))
    }

    func skipped(_ list: String, _ reason: @autoclosure () -> String) {
        let field = AnswerGaps.field(list)
        if let index = gaps.skipped.firstIndex(where: { $0.field == field }) {
            gaps.skipped[index].count += 1
        } else {
            gaps.skipped.append(.init(field: field, reason: reason(), count: 1))
        }
    }

    /// How much is noted, to take back what a skipped entry noted before it failed.
    var mark: (fields: Int, skipped: [Int]) { (gaps.fields.count, gaps.skipped.map(\.count)) }

    func rollBack(to mark: (fields: Int, skipped: [Int])) {
        gaps.fields.removeSubrange(mark.fields...)
        gaps.skipped.removeSubrange(mark.skipped.count...)
        for (index, count) in mark.skipped.enumerated() { gaps.skipped[index].count = count }
    }
}
