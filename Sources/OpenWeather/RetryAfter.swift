import Platform

/// A `Retry-After` header (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date in any of the three
/// forms a recipient must accept (IMF-fixdate, RFC 850, asctime). Plain Swift over `Platform`'s
/// calendar, so the fuzzer builds it with that module alone.
enum RetryAfter {
    /// Seconds to wait from `now` (Unix seconds): never negative, NaN or infinite, but as large as the
    /// header says (the schedule clamps it). Nil for anything that is neither form.
    static func seconds(_ value: String, now: Double) -> Double? {
        var text = ArraySlice(value.utf8)
        while let first = text.first, first == 0x20 || first == 0x09 { text.removeFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        // Longer than any date or any number worth reading.
        guard !text.isEmpty, text.count <= 64 else { return nil }
        if let delta = delta(Array(text)) { return delta }
        guard let date = date(String(decoding: text, as: UTF8.self)), now.isFinite else { return nil }
        return max(Double(date) - now, 0)
    }

    /// `120`, and what some servers send instead: `1.5`, `1e3`. Finite and not negative.
    private static func delta(_ bytes: [UInt8]) -> Double? {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index - start
        }
        guard digits() > 0 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return nil }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { return nil }
        }
        guard index == bytes.count, let value = Double(String(decoding: bytes, as: UTF8.self)), !value.isNaN else {
            return nil
        }
        // So many digits that they overflow a Double: a very long time, which the clamp makes an hour.
        return min(value, .greatestFiniteMagnitude)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Unix seconds of an HTTP-date, in GMT: `Sun, 06 Nov 1994 08:49:37 GMT`,
    /// `Sunday, 06-Nov-94 08:49:37 GMT` or `Sun Nov  6 08:49:37 1994`. The weekday is not checked.
    static func date(_ text: String) -> Int? {
        let words = text.split { $0 == " " || $0 == "," }.map { $0.lowercased() }
        var day: Int?
        var month: Int?
        var year: Int?
        var clock: [Int]?
        switch words.count {
        case 6 where words[5] == "gmt":  // IMF-fixdate
            (day, month, year, clock) = (
                number(words[1], 2), monthNumber(words[2]), number(words[3], 4), time(words[4])
            )
        case 4 where words[3] == "gmt":  // RFC 850: a two-digit year
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let short = number(parts[2], 2) else { return nil }
            // RFC 9110: a year more than 50 years ahead is the most recent past year with those digits;
            // this reads 70...99 as 19xx, the rest as 20xx.
            (day, month, year, clock) = (
                number(parts[0], 2), monthNumber(parts[1]), short < 70 ? 2000 + short : 1900 + short, time(words[2])
            )
        case 5:  // asctime
            (day, month, year, clock) = (
                number(words[2], 2), monthNumber(words[1]), number(words[4], 4), time(words[3])
            )
        default:
            return nil
        }
        guard let day, let month, let year, let clock, (1...31).contains(day), year >= 1970 else { return nil }
        return CivilTime(year: year, month: month, day: day, hour: clock[0], minute: clock[1], second: clock[2]).seconds
    }

    /// 1...12.
    private static func monthNumber(_ word: String) -> Int? { months.firstIndex(of: word).map { $0 + 1 } }

    /// At most `width` digits (at least one).
    private static func number(_ word: String, _ width: Int) -> Int? {
        guard (1...width).contains(word.utf8.count), word.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(word)
    }

    /// `hh:mm:ss`, a leap second allowed.
    private static func time(_ word: String) -> [Int]? {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false).map { number(String($0), 2) }
        guard parts.count == 3, let hour = parts[0], let minute = parts[1], let second = parts[2],
            hour < 24, minute < 60, second <= 60
        else { return nil }
        return [hour, minute, second]
    }
}
