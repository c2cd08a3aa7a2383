import OpenWeather
import TestSupport

/// The real response shapes, copied from shared/openweather/fixtures into Tests/Fixtures.
enum Fixtures {
    static func bytes(_ name: String) -> [UInt8] {
        guard let bytes = try? readFile("\(testsDirectory())/Fixtures/openweather/\(name)") else {
            fatalError("missing fixture \(name)")
        }
        return bytes
    }
}

extension AnswerGaps {
    /// The fields noted, by name.
    var missing: [String] { fields.map(\.field) }
}
