import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The exporter's own health families: today's requests and the daily limits, by source.
@Suite struct HealthCollectorTests {
    /// The metrics: today's requests per source (0 for a source that sent none), the limits in force,
    /// the key's in a family of its own; none of them without a poller's count.
    @Test func theMetricsSayTodaysCountAndTheLimits() throws {
        let places = (0..<3).map { Location(name: "P\($0)", latitude: Double($0), longitude: 1) }
        var config = withOneCallLimit(
            configuration(places, collectors: ["onecall": .seconds(600), "air_pollution": .seconds(3600)]), perDay: 100)
        config.maxRequestsPerDay = 500
        let rig = Rig(config, time: manualTime(day: 20_100, hours: 23.5))
        rig.run(until: 1000 + 60)
        func families() -> [String: [(labels: [String], value: Double)]] {
            Dictionary(
                uniqueKeysWithValues: ExporterCollector.daily(rig.store.snapshot()).map { family in
                    (family.name, family.samples.map { ($0.labels.map { "\($0.name)=\($0.value)" }, $0.value) })
                })
        }
        var now = families()
        #expect(
            now["openweather_api_requests_today"]?.map(\.labels) == [
                ["source=air_pollution"], ["source=forecast"], ["source=onecall"], ["source=weather"],
            ])
        #expect(now["openweather_api_requests_today"]?.map(\.value) == [3, 0, 3, 0])
        #expect(now["openweather_api_daily_request_limit"]?.map(\.labels) == [["source=onecall"]])
        #expect(now["openweather_api_daily_request_limit"]?.map(\.value) == [100])
        #expect(now["openweather_api_key_daily_request_limit"]?.map(\.value) == [500])
        // 00:00 UTC: the count starts again, though nothing was sent (the poller's thread wakes then).
        rig.run(until: 1000 + 1800 + 1)
        rig.poller.step()
        now = families()
        let sinceMidnight = rig.transport.log.count { $0.time >= 1000 + 1800 }
        #expect(now["openweather_api_requests_today"]?.map(\.value).reduce(0, +) == Double(sinceMidnight), "\(now)")
        #expect(rig.store.snapshot().daily?.day == 20_101)
        // Without limits: the count, no limit families.
        let free = Rig(configuration(places), time: manualTime(day: 20_100, hours: 1))
        free.run(until: 1000 + 1)
        let plain = ExporterCollector.daily(free.store.snapshot()).filter { !$0.samples.isEmpty }.map(\.name)
        #expect(plain == ["openweather_api_requests_today"])
        // Before the poller's first count: no samples, but the same families (the renderer's positions).
        let before = ExporterCollector.daily(
            ReadingStore(setup: config.pollerSetup(transport: rig.transport), now: 0).snapshot())
        #expect(
            before.map(\.name) == ExporterCollector.daily(rig.store.snapshot()).map(\.name)
                && before.allSatisfy(\.samples.isEmpty))
    }

    /// A reload that drops a source and adds another moves the slots: the counts stay with their
    /// names, a dropped source that sent today is still shown (the day's count does not vanish with
    /// its collector), and a new one shows 0.
    @Test func theDaysCountsFollowTheirSourcesAcrossAReload() throws {
        let places = (0..<2).map { Location(name: "P\($0)", latitude: Double($0), longitude: 1) }
        let rig = Rig(
            configuration(places, collectors: ["weather": .seconds(600)]), time: manualTime(day: 20_100, hours: 1))
        rig.run(until: 1000 + 5)
        let before = rig.transport.log.count
        #expect(before == 2, "each place polled once")
        rig.poller.apply(
            configuration(places, collectors: ["air_pollution": .seconds(600)]).pollerSetup(transport: rig.transport))
        rig.poller.step()
        let today = Dictionary(
            uniqueKeysWithValues: try #require(ExporterCollector.daily(rig.store.snapshot()).first).samples.map {
                ($0.labels.map(\.value).joined(), $0.value)
            })
        #expect(today["weather"] == Double(before), "\(today)")
        #expect(
            today["air_pollution"] == Double(rig.transport.requests(to: "/data/2.5/air_pollution").count), "\(today)")
    }
}
