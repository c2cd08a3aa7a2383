import Glibc
import Platform
import Testing

@Suite struct CivilTimeTests {
    /// What the C library says for the same second.
    static func libc(_ seconds: Int) -> CivilTime {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return CivilTime(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// Every field, the weekday and the day of the year as glibc's `gmtime_r` has them, from year 1 to 9999
    /// (before the epoch too), and back to the same second.
    @Test func agreesWithTheCLibrary() {
        var generator = SystemRandomNumberGenerator()
        let first = -62_135_596_800  // 0001-01-01
        let last = 253_402_300_799  // 9999-12-31 23:59:59
        var samples = [first, last, -1, 0, 1, 951_782_400, 951_868_799, 4_107_542_400, 1_764_590_400]
        for _ in 0..<20_000 { samples.append(Int.random(in: first...last, using: &generator)) }
        for seconds in samples {
            let time = CivilTime(seconds: seconds)
            var raw = time_t(seconds)
            var parts = tm()
            gmtime_r(&raw, &parts)
            #expect(time == Self.libc(seconds), "\(seconds)")
            #expect(time.weekday == Int(parts.tm_wday), "\(seconds)")
            #expect(time.dayOfYear == Int(parts.tm_yday) + 1, "\(seconds)")
            #expect(time.seconds == seconds)
        }
    }

    @Test func daysAndDatesAreInverse() {
        for days in stride(from: -800_000, through: 800_000, by: 7) {
            let date = CivilTime.date(days: days)
            #expect(CivilTime.days(year: date.year, month: date.month, day: date.day) == days)
        }
        #expect(CivilTime.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilTime(seconds: 0).weekday == 4)  // a Thursday
        #expect(CivilTime(year: 2024, month: 12, day: 31).dayOfYear == 366)
        #expect(CivilTime(year: 2025, month: 12, day: 31).dayOfYear == 365)
    }

    @Test func onlyDaysTheMonthHasAreDates() {
        #expect(CivilTime.isDate(year: 2024, month: 2, day: 29))
        #expect(CivilTime.isDate(year: 2000, month: 2, day: 29))
        #expect(!CivilTime.isDate(year: 1900, month: 2, day: 29))
        #expect(!CivilTime.isDate(year: 2025, month: 2, day: 29))
        #expect(!CivilTime.isDate(year: 2025, month: 4, day: 31))
        #expect(CivilTime.isDate(year: 2025, month: 12, day: 31))
        #expect(!CivilTime.isDate(year: 2025, month: 13, day: 1))
        #expect(!CivilTime.isDate(year: 2025, month: 0, day: 1))
        #expect(!CivilTime.isDate(year: 2025, month: 1, day: 0))
    }

    /// A leap second, as an HTTP date may carry, is the first second of the next minute.
    @Test func aLeapSecondIsTheNextSecond() {
        let leap = CivilTime(year: 2016, month: 12, day: 31, hour: 23, minute: 59, second: 60)
        #expect(leap.seconds == CivilTime(year: 2017, month: 1, day: 1).seconds)
    }
}
