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
        #expect(text([b, a]) == """
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
        #expect(text([family]) == """
            # HELP x Back\\\\slash, "quotes" and\\nnewline.
            # TYPE x gauge
            x{location="a\\\\b\\"c\\nd"} 1

            """)
    }

    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (21.07, "21.07"), (101_500, "101500"), (1_634_666_651, "1634666651"),
        (0.00316, "0.00316"), (-14.09, "-14.09"), (1e-5, "1e-05"), (1e20, "1e+20"),
        (.nan, "NaN"), (.infinity, "+Inf"), (-.infinity, "-Inf"), (-42, "-42"), (999_999_999_999_999, "999999999999999"),
    ])
    func formatsValues(value: Double, expected: String) {
        var out: [UInt8] = []
        Exposition.appendValue(value, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == expected)
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
        #expect(!Exposition.isValidLabelName("a:b"))
        #expect(Exposition.isValidLabelName("_x"))
    }

    @Test func unlabelledSeries() {
        let family = MetricFamily(name: "process_open_fds", help: "Fds.", samples: [Sample(value: 7)])
        #expect(text([family]) == "# HELP process_open_fds Fds.\n# TYPE process_open_fds gauge\nprocess_open_fds 7\n")
    }
}
