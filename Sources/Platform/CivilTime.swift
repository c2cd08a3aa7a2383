/// A moment in UTC as a calendar reads it (proleptic Gregorian), and back: the one place the product
/// turns seconds into dates. Pure arithmetic (Howard Hinnant's `civil_from_days` and
/// `days_from_civil`), so it never traps on a far time and needs no `time_t` that a `Double` from
/// outside could overflow.
public struct CivilTime: Equatable, Sendable {
    public var year: Int
    /// 1...12.
    public var month: Int
    /// 1...31.
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second) = (hour, minute, second)
    }

    /// The moment `seconds` after the epoch, rounded down to its second.
    public init(seconds: Int) {
        let days = seconds.floorDivided(by: 86_400)
        let rest = seconds - days * 86_400
        (year, month, day) = Self.date(days: days)
        (hour, minute, second) = (rest / 3600, rest % 3600 / 60, rest % 60)
    }

    /// Seconds since the epoch. A second of 60 (a leap second, as HTTP dates allow) is the next one.
    public var seconds: Int {
        Self.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// 0 for Sunday ... 6 for Saturday.
    public var weekday: Int {
        let days = Self.days(year: year, month: month, day: day)
        return (days + 4).floorModulo(7)  // 1970-01-01 was a Thursday
    }

    /// 1 for the 1st of January ... 366.
    public var dayOfYear: Int {
        Self.days(year: year, month: month, day: day) - Self.days(year: year, month: 1, day: 1) + 1
    }

    /// Whether `day` exists in that month of that year (the 29th of February only in a leap year).
    public static func isDate(year: Int, month: Int, day: Int) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let lengths = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }

    public static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// Days since 1970-01-01 (`days_from_civil`).
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (`civil_from_days`).
    public static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int) -> Int { self - floorDivided(by: divisor) * divisor }
}
