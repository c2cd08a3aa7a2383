import Glibc
import Testing

/// Golden files: expected output kept under Tests/ and compared byte for byte. They change only
/// through an explicit `UPDATE_GOLDEN=1 swift test`: that run rewrites the files that differ and
/// fails, naming each one, so an update is never mistaken for a pass and the diff gets read.
public enum Golden {
    /// What `UPDATE_GOLDEN` asks for; any value other than unset or exactly `1` is a mistake.
    enum Mode: Equatable {
        case compare
        case update
        case invalid(String)
    }

    static var mode: Mode {
        guard let raw = getenv("UPDATE_GOLDEN") else { return .compare }
        let value = String(cString: raw)
        return value == "1" ? .update : .invalid(value)
    }

    /// Checks `actual` against the golden file at `path` (absolute, or relative to `Tests/`), recording an
    /// issue at the caller on a difference (the first differing line, or the line counts), on a
    /// missing file, and on every file an update run rewrote or left alone.
    public static func check(_ actual: [UInt8], file path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let fullPath = path.hasPrefix("/") ? path : "\(testsDirectory())/\(path)"
        switch mode {
        case .invalid(let value):
            Issue.record(
                "UPDATE_GOLDEN=\(value): set it to 1 to rewrite golden files, or unset it to compare",
                sourceLocation: sourceLocation)
        case .update:
            let previous = try? readFile(fullPath)
            if previous == actual {
                Issue.record(
                    "UPDATE_GOLDEN=1: \(path) is unchanged; run again without UPDATE_GOLDEN to compare",
                    sourceLocation: sourceLocation)
                return
            }
            do {
                try writeFile(fullPath, actual, mode: 0o644)
                Issue.record(
                    "UPDATE_GOLDEN=1 rewrote \(path): read the diff, then run again without UPDATE_GOLDEN",
                    sourceLocation: sourceLocation)
            } catch {
                Issue.record("UPDATE_GOLDEN=1 could not rewrite \(path): \(error)", sourceLocation: sourceLocation)
            }
        case .compare:
            guard let expected = try? readFile(fullPath) else {
                Issue.record(
                    "no golden file \(path): create it with UPDATE_GOLDEN=1 swift test and read it",
                    sourceLocation: sourceLocation)
                return
            }
            if let difference = firstDifference(expected: expected, actual: actual) {
                Issue.record(
                    """
                    \(path): \(difference) (if the change is intended: UPDATE_GOLDEN=1 swift test, then read the diff)
                    """,
                    sourceLocation: sourceLocation)
            }
        }
    }

    /// The first line that differs, or different line counts; nil when the bytes are equal.
    static func firstDifference(expected: [UInt8], actual: [UInt8]) -> String? {
        guard expected != actual else { return nil }
        let want = expected.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let got = actual.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, (line, other)) in zip(want, got).enumerated() where line != other {
            return
                """
                line \(index + 1):\n  want \(String(decoding: line, as: UTF8.self))\n\
                  got  \(String(decoding: other, as: UTF8.self))
                """
        }
        return "\(want.count) lines expected, \(got.count) rendered"
    }
}
