/// Hexadecimal digits, the one table every codec here (and each user of one) reads.
public enum Hex {
    /// `0`–`9`, `a`–`f` and `A`–`F` as their value; nil for any other byte.
    @inlinable
    public static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The digit for `value` (0 to 15); upper case as RFC 3986 recommends for `%XX`.
    @inlinable
    public static func digit(_ value: UInt8, upperCase: Bool = true) -> UInt8 {
        (upperCase ? upper : lower)[Int(value & 15)]
    }

    @usableFromInline static let upper = Array("0123456789ABCDEF".utf8)
    @usableFromInline static let lower = Array("0123456789abcdef".utf8)
}
