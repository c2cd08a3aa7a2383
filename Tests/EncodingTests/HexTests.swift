import Testing

@testable import Encoding

@Suite struct HexTests {
    @Test func everyByteHasTheValueItsDigitSays() {
        let digits = Array("0123456789abcdef".utf8)
        for byte in UInt8.min...UInt8.max {
            let lower = digits.firstIndex(of: byte).map(UInt8.init)
            let upper = Array("0123456789ABCDEF".utf8).firstIndex(of: byte).map(UInt8.init)
            #expect(Hex.value(of: byte) == (lower ?? upper), "byte \(byte)")
        }
    }

    @Test func digitsReadBackAsTheirValue() {
        for value in UInt8(0)...15 {
            #expect(Hex.value(of: Hex.digit(value)) == value)
            #expect(Hex.value(of: Hex.digit(value, upperCase: false)) == value)
        }
        #expect(Hex.digit(10) == UInt8(ascii: "A"))
        #expect(Hex.digit(10, upperCase: false) == UInt8(ascii: "a"))
    }
}
