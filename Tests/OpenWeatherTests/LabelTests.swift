import Testing

@testable import OpenWeather

/// Strings from upstream become label values: control characters go, the length is bounded, in one place.
@Suite struct LabelTests {
    /// The real Barcelona answer with `old` replaced by `new` (JSON text).
    func body(_ fixture: String, replacing old: String, with new: String) -> [UInt8] {
        Array(String(decoding: Fixtures.bytes(fixture), as: UTF8.self).replacing(old, with: new).utf8)
    }

    @Test func controlCharactersAreStrippedAndLengthIsBounded() throws {
        let huge = String(repeating: "ü", count: 40_000)  // 80 KB
        var weather = try WeatherDecoder.decode(
            body(
                "current-barcelona-clouds.json", replacing: #""name":"Barcelona""#,
                with: #""name":"Bar\u0000ce\u001b[2Jlo\u0007na\u0085""#))
        #expect(weather.cityName == "Barce[2Jlona")
        weather = try WeatherDecoder.decode(
            body(
                "current-barcelona-clouds.json", replacing: #""description":"algo de nubes""#,
                with: #""description":"algo\nde\tnubes\#(huge)""#))
        let description = try #require(weather.primaryCondition?.description)
        #expect(description.hasPrefix("algo de nubesü"))
        #expect(description.utf8.count == 255, "cut at a character boundary: 13 bytes, then 121 two-byte ü")
        #expect(description.unicodeScalars.allSatisfy { $0 == " " || $0.value > 0x20 })

        let oneCall = try OneCallDecoder.decode(
            body(
                "onecall-texarkana-alerts.json", replacing: #""event":"Heat Advisory""#,
                with: #""event":"Heat\u0000Advisory\u001b]0;pwned\u0007""#))
        #expect(oneCall.alerts.first?.event == "HeatAdvisory]0;pwned")
        // The common case is untouched.
        #expect(Fields.label("Zürich") == "Zürich")
        #expect(Fields.label(String(repeating: "a", count: 256)).utf8.count == 256)
        #expect(Fields.label(String(repeating: "a", count: 257)).utf8.count == 256)
    }
}
