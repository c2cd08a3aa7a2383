import Glibc
import Testing

@testable import Exposition

@Suite struct ExpositionTests {
    private func text(_ families: [MetricFamily]) -> String {
        String(decoding: Exposition.render(families), as: UTF8.self)
    }

    @Test func sortsFamiliesByNameAndSeriesByLabels() {
        var b = MetricFamily(name: "b_metric", help: "B.")
        b.add([("location", "Tokyo")], 2)
        b.add([("location", "London")], 1)
        var a = MetricFamily(name: "a_total", help: "A.", type: .counter)
        a.add([("code", "429")], 3)
        a.add([("code", "200")], 10)
        #expect(
            text([b, a]) == """
                # HELP a_total A.
                # TYPE a_total counter
                a_total{code="200"} 10
                a_total{code="429"} 3
                # HELP b_metric B.
                # TYPE b_metric gauge
                b_metric{location="London"} 1
                b_metric{location="Tokyo"} 2

                """)
    }

    @Test func escapesLabelValuesAndHelp() {
        var family = MetricFamily(name: "x", help: "Back\\slash, \"quotes\" and\nnewline.")
        family.add([("location", "a\\b\"c\nd")], 1)
        #expect(
            text([family]) == """
                # HELP x Back\\\\slash, "quotes" and\\nnewline.
                # TYPE x gauge
                x{location="a\\\\b\\"c\\nd"} 1

                """)
    }

    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (21.07, "21.07"), (101_500, "101500"), (1_634_666_651, "1634666651"),
        (0.00316, "0.00316"), (-14.09, "-14.09"), (1e-5, "1e-05"), (1e20, "1e+20"),
        (.nan, "NaN"), (.infinity, "+Inf"), (-.infinity, "-Inf"), (-42, "-42"),
        (999_999_999_999_999, "999999999999999"),
    ])
    func formatsValues(value: Double, expected: String) {
        var out: [UInt8] = []
        Exposition.appendValue(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == expected)
    }

    /// The fast paths must print exactly what `Double.description` prints (minus `.0`), and read back.
    @Test func formatsLikeDescription() {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [
            0.0001, -0.0001, 0.00009999, 999_999_999.5, 1e9 + 0.5, 7_999_999_999.999999, 8e9 + 0.5,
            1_764_441_234.123456, 0.1, 0.2, 0.3, 1.005, 2.675, 1234.5678, 0.000123,
        ]
        for _ in 0..<20_000 {
            let decimals = Double(Int.random(in: 0...7, using: &generator))
            let units = Double(Int64.random(in: -10_000_000_000...10_000_000_000, using: &generator))
            values.append(units / pow(10, decimals))
            values.append(
                Double(bitPattern: UInt64.random(in: 0x3F00_0000_0000_0000...0x41E0_0000_0000_0000, using: &generator)))
            values.append(Double.random(in: -200...200, using: &generator))
            values.append(Double.random(in: 1.6e9...8.1e9, using: &generator))
            values.append((Double.random(in: 1.7e9...1.8e9, using: &generator) * 1e6).rounded() / 1e6)
        }
        for value in values {
            var out: [UInt8] = []
            Exposition.appendValue(value, to: &out)
            let text = String(decoding: out, as: UTF8.self)
            var expected = value.description
            if expected.hasSuffix(".0") { expected.removeLast(2) }
            #expect(text == expected, "value bits \(value.bitPattern)")
            #expect(Double(text) == value)
        }
    }

    @Test func leavesOutFamiliesWithoutSeries() {
        #expect(text([MetricFamily(name: "empty", help: "Nothing.")]) == "")
    }

    @Test func validatesNames() {
        #expect(Exposition.isValidMetricName("openweather_up"))
        #expect(Exposition.isValidMetricName("a:b_c9"))
        #expect(!Exposition.isValidMetricName("9a"))
        #expect(!Exposition.isValidMetricName(""))
        #expect(!Exposition.isValidMetricName("a-b"))
        #expect(Exposition.isValidMetricName("_x"))
    }

    @Test func unlabelledSeries() {
        let family = MetricFamily(name: "process_open_fds", help: "Fds.", samples: [Sample(value: 7)])
        #expect(text([family]) == "# HELP process_open_fds Fds.\n# TYPE process_open_fds gauge\nprocess_open_fds 7\n")
    }
}
