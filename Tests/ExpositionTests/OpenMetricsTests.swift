import Testing

@testable import Exposition

/// OpenMetrics 1.0.0 text, and which format an `Accept` header gets.
@Suite struct OpenMetricsTests {
    private func openMetrics(_ families: [MetricFamily]) -> String {
        String(
            decoding: Exposition.render(families, format: .openMetrics) + Exposition.trailer(.openMetrics),
            as: UTF8.self)
    }

    @Test func countersAreFamiliesWithoutTotalAndHaveCreatedLines() {
        var requests = MetricFamily(
            name: "api_requests_total", help: "Requests.", type: .counter, created: 1_700_000_000.5)
        requests.add([("code", "429")], 3)
        requests.add([("code", "200")], 10)
        let cpu = MetricFamily(
            name: "process_cpu_seconds_total", help: "CPU.", type: .counter, samples: [Sample(value: 0.25)])
        #expect(
            openMetrics([requests, cpu]) == """
                # HELP api_requests Requests.
                # TYPE api_requests counter
                api_requests_total{code="200"} 10
                api_requests_created{code="200"} 1700000000.5
                api_requests_total{code="429"} 3
                api_requests_created{code="429"} 1700000000.5
                # HELP process_cpu_seconds CPU.
                # TYPE process_cpu_seconds counter
                # UNIT process_cpu_seconds seconds
                process_cpu_seconds_total 0.25
                # EOF

                """)
        // The text format is unchanged: no `_created`, the family named as its series.
        #expect(
            String(decoding: Exposition.render([requests]), as: UTF8.self).hasPrefix(
                """
                # HELP api_requests_total Requests.\n# TYPE api_requests_total counter\n\
                api_requests_total{code="200"} 10\n
                """
            ))
    }

    @Test func gaugesGetAUnitWhereTheNameEndsInOne() {
        let families = [
            MetricFamily(name: "temperature_celsius", help: "T.", samples: [Sample(value: 21.5)]),
            MetricFamily(name: "wind_speed_meters_per_second", help: "W.", samples: [Sample(value: 3)]),
            MetricFamily(name: "air_pollutant_grams_per_cubic_meter", help: "P.", samples: [Sample(value: 1e-05)]),
            MetricFamily(name: "air_quality_index", help: "AQI.", samples: [Sample(value: 2)]),
            MetricFamily(name: "seconds", help: "A name that is only a unit has none.", samples: [Sample(value: 1)]),
            MetricFamily(name: "thing_build_info", help: "Info.", samples: [Sample([("version", "1")], value: 1)]),
        ]
        #expect(
            openMetrics(families) == """
                # HELP air_pollutant_grams_per_cubic_meter P.
                # TYPE air_pollutant_grams_per_cubic_meter gauge
                # UNIT air_pollutant_grams_per_cubic_meter grams_per_cubic_meter
                air_pollutant_grams_per_cubic_meter 1e-05
                # HELP air_quality_index AQI.
                # TYPE air_quality_index gauge
                air_quality_index 2
                # HELP seconds A name that is only a unit has none.
                # TYPE seconds gauge
                seconds 1
                # HELP temperature_celsius T.
                # TYPE temperature_celsius gauge
                # UNIT temperature_celsius celsius
                temperature_celsius 21.5
                # HELP thing_build_info Info.
                # TYPE thing_build_info gauge
                thing_build_info{version="1"} 1
                # HELP wind_speed_meters_per_second W.
                # TYPE wind_speed_meters_per_second gauge
                # UNIT wind_speed_meters_per_second meters_per_second
                wind_speed_meters_per_second 3
                # EOF

                """)
        #expect(MetricFamily(name: "x_seconds_total", help: "", type: .counter).unit == "seconds")
        #expect(MetricFamily(name: "x_microseconds", help: "").unit == nil)
        #expect(MetricFamily(name: "x_total", help: "").unit == nil)
    }

    /// OpenMetrics escapes the double quote in HELP as well (the text format leaves it); label
    /// values are escaped alike in both; untyped is `unknown`.
    @Test func escapingAndUnknown() {
        var family = MetricFamily(name: "x", help: "Back\\slash, \"quotes\" and\nnewline.", type: .untyped)
        family.add([("location", "a\\b\"c\nd")], .infinity)
        #expect(
            openMetrics([family]) == """
                # HELP x Back\\\\slash, \\"quotes\\" and\\nnewline.
                # TYPE x unknown
                x{location="a\\\\b\\"c\\nd"} +Inf
                # EOF

                """)
    }

    @Test func anEmptyExpositionIsOnlyEOF() {
        #expect(openMetrics([MetricFamily(name: "x", help: "No series.")]) == "# EOF\n")
        #expect(Exposition.trailer(.text).isEmpty)
    }

    /// What real scrapers send, and the edge cases of the header; `nil` is no Accept header at all.
    @Test(
        arguments: [
            // Prometheus 2.42 (Debian 12), captured from a real scrape.
            (
                """
                application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,\
                text/plain;version=0.0.4;q=0.5,*/*;q=0.1
                """,
                .openMetrics
            ),
            // Prometheus 3.0's default scrape_protocols.
            (
                """
                application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,\
                application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,\
                text/plain;version=0.0.4;q=0.2,*/*;q=0.1
                """,
                .openMetrics
            ),
            (
                """
                application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,\
                text/plain;version=0.0.4;q=0.3,*/*;q=0.2
                """,
                .openMetrics
            ),
            // scrape_protocols with PrometheusText first: text/plain 1.0.0 is not 0.0.4, so 0.0.4 (0.5) wins over
            // OpenMetrics (0.4).
            (
                """
                text/plain;version=1.0.0;escaping=allow-utf-8;q=0.6,text/plain;version=0.0.4;q=0.5,\
                application/openmetrics-text;version=1.0.0;q=0.4,*/*;q=0.3
                """,
                .text
            ),
            // Protobuf first (native histograms): we have none, OpenMetrics is next.
            (
                """
                application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,\
                application/openmetrics-text;version=1.0.0;q=0.6,text/plain;version=0.0.4;q=0.3
                """,
                .openMetrics
            ),
            ("*/*", .text),  // curl
            ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", .text),  // a browser
            ("application/openmetrics-text; version=1.0.0", .openMetrics),
            ("application/openmetrics-text", .openMetrics),
            ("application/openmetrics-text; version=0.0.1", .openMetrics),
            ("Application/OpenMetrics-Text; Version=\"1.0.0\"; charset=utf-8", .openMetrics),
            ("application/openmetrics-text; version=2.0.0", .text),
            ("application/openmetrics-text;version=1.0.0;q=0", .text),
            ("application/openmetrics-text;version=1.0.0;q=0.0, text/plain", .text),
            ("application/openmetrics-text;version=1.0.0;q=bogus", .text),
            ("application/openmetrics-text;version=1.0.0;q=2", .text),
            ("text/plain", .text),
            ("text/plain;version=0.0.4", .text),
            ("text/plain;q=0.5, application/openmetrics-text;q=0.6", .openMetrics),
            ("text/plain;q=0.5, application/openmetrics-text;q=0.5", .text),  // equal q: the first
            ("application/openmetrics-text;q=0.5, text/plain;q=0.5", .openMetrics),
            ("garbage", .text),
            (";;;,,,==", .text),
            ("", .text),
        ] as [(String, ExpositionFormat)])
    func negotiation(accept: String, expected: ExpositionFormat) {
        #expect(ExpositionFormat.negotiate(accept: [accept]) == expected, "Accept: \(accept)")
    }

    @Test func negotiationOverSeveralHeaders() {
        #expect(ExpositionFormat.negotiate(accept: []) == .text)
        #expect(
            ExpositionFormat.negotiate(accept: ["text/plain;q=0.2", "application/openmetrics-text;q=0.3"])
                == .openMetrics)
        #expect(
            ExpositionFormat.openMetrics.contentType == "application/openmetrics-text; version=1.0.0; charset=utf-8")
        #expect(ExpositionFormat.text.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }
}
