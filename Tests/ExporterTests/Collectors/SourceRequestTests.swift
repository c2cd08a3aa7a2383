import Exposition
import OpenWeather
import Platform
import Testing

@testable import Exporter

/// A source's request is built from the poll's facts, its time included: an endpoint that asks for a
/// date (history, solar) writes only `request`, not a `fetch` of its own.
@Suite struct SourceRequestTests {
    /// As a history or solar endpoint would be: its request names the poll's UTC day.
    struct DatedSource: Source {
        static let name = "dated"
        static let summary = "A test's source whose request names the UTC day of the poll."
        static let enabledByDefault = false
        static let defaultInterval = Duration.seconds(3600)

        func request(for poll: PollFacts) -> APIRequest {
            APIRequest(path: "/dated", query: [.init("date", Self.day(poll.now))])
        }

        func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> String {
            String(decoding: body, as: UTF8.self)
        }

        var families: [MetricFamily] { [] }
        func appendSeries(of shard: ShardSeries, readings: ShardReadings<String>, to lines: CollectorLines) {}

        /// `2023-11-14` for a time that day, UTC.
        static func day(_ seconds: Double) -> String {
            let civil = CivilTime(seconds: Int(seconds.rounded(.down)))
            func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
            return "\(civil.year)-\(two(civil.month))-\(two(civil.day))"
        }
    }

    @Test func aRequestNamesTheDayOfItsPollOnThePollersClock() {
        // Wall time starts at 2023-11-14 22:30 UTC: three hourly polls cross midnight.
        let london = Location(name: "London", latitude: 51.5074, longitude: -0.1278)
        let rig = Rig { transport in
            Poller.Setup(
                locations: [london], sources: [DatedSource()], intervals: [.seconds(3600)],
                configured: [.seconds(3600)], maxStaleness: [3 * 3600], requestsPerMinute: 60, dailyLimits: [nil],
                requestsPerDay: nil, language: "en", transport: transport, thresholds: { _ in .init() })
        }
        rig.transport.answer { request in .success(Array(request.query.map(\.value).joined().utf8)) }
        #expect(DatedSource.day(rig.time.wall()) == "2023-11-14")
        rig.run(until: rig.time.monotonic() + 2.5 * 3600)

        let asked = rig.transport.requests(to: "/dated")
        let dates = asked.map { $0.request.query.first { $0.name == "date" }?.value ?? "" }
        #expect(dates.count >= 3, "\(dates)")
        for (sent, date) in zip(asked, dates) {
            #expect(date == DatedSource.day(sent.time + rig.time.epoch), "sent at \(sent.time): \(date)")
        }
        #expect(dates.first == "2023-11-14" && dates.last == "2023-11-15", "\(dates)")
        #expect(rig.state("London", "dated")?.reading as? String == dates.last)
    }
}
