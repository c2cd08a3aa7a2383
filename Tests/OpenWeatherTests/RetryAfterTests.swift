import TestSupport
import Testing

@testable import OpenWeather

/// `Retry-After` as a 429 carries it: any header value gives nil or a finite wait that is not
/// negative; the schedule clamps it (PollScheduleTests).
@Suite struct RetryAfterTests {
    /// 1994-11-06 08:49:37 UTC, the RFC's example date.
    static let example = 784_111_777.0

    @Test(arguments: [
        ("120", 120.0), (" 120 ", 120), ("0", 0), ("1.5", 1.5), ("1e3", 1000), ("1000000000000", 1e12), ("1e18", 1e18),
        ("1e300", 1e300),
        // So many digits they overflow a Double: a very long time, kept finite.
        ("1e400", .greatestFiniteMagnitude), (String(repeating: "9", count: 64), 1e64),
    ])
    func deltaSeconds(header: String, seconds: Double) {
        #expect(RetryAfter.seconds(header, now: 0) == seconds)
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "sun, 06 nov 1994 08:49:37 gmt",
    ])
    func httpDatesInEachForm(header: String) {
        #expect(RetryAfter.date(header) == Int(Self.example))
        #expect(RetryAfter.seconds(header, now: Self.example - 90) == 90)
        #expect(
            RetryAfter.seconds(header, now: Self.example + 90) == 0,
            "a date in the past: no wait asked (the schedule's first step applies)")
    }

    @Test func datesAcrossTheCalendar() {
        #expect(RetryAfter.date("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(RetryAfter.date("Tue, 29 Feb 2028 12:00:00 GMT") == 1_835_438_400)
        #expect(RetryAfter.date("Fri, 31 Dec 9999 23:59:59 GMT") == 253_402_300_799)
        #expect(RetryAfter.date("Wednesday, 01-Jan-70 00:00:00 GMT") == 0, "70 to 99 are 19xx")
        #expect(RetryAfter.date("Monday, 01-Jan-35 00:00:00 GMT") == 2_051_222_400, "00 to 69 are 20xx")
    }

    @Test(arguments: [
        "", " ", "-1", "-0.5", "nan", "NaN", "inf", "infinity", "0x10", "1_000", "+5", ".5", "5.", "1e", "e5", "1e+",
        "12 34", "soon",
        "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 19940 08:49:37 GMT", "Sun, 06 Nov 1969 08:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06 Nov 1994 8:49:37:1 GMT",
        "Sun, 06 Nov 99999999999999999999 08:49:37 GMT", String(repeating: "1", count: 65),
    ])
    func garbageIsNil(header: String) {
        #expect(RetryAfter.seconds(header, now: Self.example) == nil)
    }

    /// Thousands of random and mutated headers: none traps, and each gives nil or a wait the
    /// schedule can take (finite, not negative), whatever the wall clock says.
    @Test func fuzzedHeadersNeverTrapOrGiveAnUnusableWait() {
        var random = SeededGenerator(seed: 0x5EED_0020)
        let seeds = [
            "120", "0", "1e18", "1.5e3", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Fri, 31 Dec 9999 23:59:59 GMT",
        ]
        let alphabet = Array("0123456789 ,:-+.eE%GMTSunNovFri\t\u{0}é".utf8)
        let clocks: [Double] = [
            0, Self.example, 1.8e9, -1e300, 1e300, .infinity, -.infinity, .nan, .greatestFiniteMagnitude,
        ]
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(random.next() % 40)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            } else {
                bytes = Array(seeds[Int(random.next() % UInt64(seeds.count))].utf8)
                for _ in 0..<(1 + random.next() % 4) where !bytes.isEmpty {
                    let at = Int(random.next() % UInt64(bytes.count))
                    switch random.next() % 3 {
                    case 0: bytes[at] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    case 1: bytes.remove(at: at)
                    default:
                        bytes.insert(
                            contentsOf: Array(repeating: UInt8(ascii: "9"), count: Int(random.next() % 30)), at: at)
                    }
                }
            }
            let header = String(decoding: bytes, as: UTF8.self)
            let now = clocks[round % clocks.count]
            if let seconds = RetryAfter.seconds(header, now: now) {
                #expect(seconds.isFinite && seconds >= 0, "\(header.debugDescription) at \(now): \(seconds)")
            }
        }
    }
}
