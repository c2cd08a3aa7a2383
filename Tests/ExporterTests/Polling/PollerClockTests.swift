import Exposition
import Gzip
import HTTPServer
import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The poller itself (schedule, store, logs, sources together) on a clock the test moves: hours of
/// polling in milliseconds, and no test that depends on how busy the machine is.
@Suite struct PollerClockTests {
    static let london = Location(name: "London", latitude: 51.5074, longitude: -0.1278)
    static let tokyo = Location(name: "Tokyo", latitude: 35.6762, longitude: 139.6503)
    static let weatherAndAir: [String: Duration] = ["weather": .seconds(600), "air_pollution": .seconds(3600)]

    static func places(_ count: Int) -> [Location] {
        (0..<count).map { Location(name: "P\($0)", latitude: Double($0 % 170) - 85, longitude: Double($0 % 350) - 175) }
    }

    static func latitude(_ request: APIRequest) -> Double? {
        request.query.first { $0.name == "lat" }.flatMap { Double($0.value) }
    }

    @Test func weatherEveryTenMinutesAndAirEveryHourNeverExceedTheBudget() {
        let rig = Rig(configuration(Self.places(120), collectors: Self.weatherAndAir, budget: 30))
        rig.run(until: 1000 + 4 * 3600)
        let most = rig.transport.mostInAnyMinute
        #expect(most <= 30, "\(most) requests in one minute")
        // 120 locations × (6 + 1) an hour need 14 a minute: nothing is stretched, everything is polled.
        let weather = rig.transport.requests(to: "/data/2.5/weather").count
        let air = rig.transport.requests(to: "/data/2.5/air_pollution").count
        #expect(abs(weather - 120 * 6 * 4) <= 120 && abs(air - 120 * 4) <= 120, "\(weather) weather, \(air) air")
        #expect(rig.store.snapshot().locations.allSatisfy { $0.slots.allSatisfy { !$0.applies || $0.up == true } })
    }

    @Test func aFailingSourceNeverTouchesTheOthers() {
        let rig = Rig(configuration([Self.london], collectors: Self.weatherAndAir))
        rig.transport.answer { request in
            request.path == "/data/2.5/air_pollution"
                ? .failure(.http(status: 500, message: "Internal error", retryAfterSeconds: nil))
                : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 3600)
        #expect(rig.state("London", "air_pollution")?.up == false)
        #expect(rig.state("London", "weather")?.up == true)
        #expect(rig.transport.requests(to: "/data/2.5/weather").count >= 6)
        let counts = rig.store.snapshot().requestCounts
        #expect(counts[.init(source: "air_pollution", code: "500")] ?? 0 >= 1)
        #expect(counts[.init(source: "weather", code: "200")] ?? 0 >= 6)
    }

    /// OpenWeather limits the key: a 429 on air pollution pauses the weather too, for Retry-After.
    @Test func aRateLimitOnEitherSourcePausesBoth() {
        let rig = Rig(
            configuration(
                [Self.london, Self.tokyo], collectors: ["weather": .seconds(60), "air_pollution": .seconds(120)]))
        rig.run(until: 1000 + 300)
        let hit = Locked<Double?>(nil)
        let time = rig.time
        rig.transport.answer { request in
            if request.path == "/data/2.5/air_pollution", hit.withLock({ $0 == nil }) {
                hit.withLock { $0 = time.monotonic() }
                return .failure(.http(status: 429, message: "blocked", retryAfterSeconds: 600))
            }
            return FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 3000)
        guard let at = hit.withLock({ $0 }) else {
            Issue.record("no air pollution request")
            return
        }
        let during = rig.transport.log.filter { $0.time > at && $0.time < at + 600 }
        #expect(during.isEmpty, "\(during.map { ($0.time - at, $0.request.path) })")
        #expect(rig.transport.log.contains { $0.time >= at + 600 && $0.request.path == "/data/2.5/weather" })
        #expect(
            rig.logs.all.contains {
                $0.contains("pausing all requests") && $0.contains("pause=10m") && $0.contains("source=air_pollution")
            })
    }

    /// A Retry-After from a broken or hostile upstream: the process neither traps (formatting 1e18 s
    /// for the log once did) nor stops polling for days, nor retries a blocked key at once.
    @Test(arguments: [(1e18, "1h"), (1e300, "1h"), (1_000_000_000_000, "1h"), (0, "1m")])
    func anAbsurdRetryAfterPausesBetweenAMinuteAndAnHour(retryAfter: Double, shown: String) {
        let rig = Rig(configuration([Self.london], collectors: ["weather": .seconds(60)]))
        let hit = Locked<Double?>(nil)
        let time = rig.time
        rig.transport.answer { request in
            if hit.withLock({ $0 == nil }) {
                hit.withLock { $0 = time.monotonic() }
                return .failure(.http(status: 429, message: "blocked", retryAfterSeconds: retryAfter))
            }
            return FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 2 * 3600)
        guard let at = hit.withLock({ $0 }) else {
            Issue.record("no request")
            return
        }
        let pause = retryAfter == 0 ? 60.0 : 3600
        #expect(!rig.transport.log.contains { $0.time > at && $0.time < at + pause }, "paused for \(shown)")
        #expect(rig.transport.log.contains { $0.time >= at + pause && $0.time < at + pause + 61 }, "and not longer")
        #expect(rig.logs.all.contains { $0.contains("pausing all requests") && $0.contains("pause=\(shown) ") })
    }

    /// The real poller backs a failing location off (doubling from its interval, ±20 %, up to an hour).
    @Test func transientFailuresBackOffWhileTheOthersKeepTheirPace() {
        let rig = Rig(configuration([Self.london, Self.tokyo], collectors: ["weather": .seconds(60)], budget: 600))
        rig.transport.answer { request in
            Self.latitude(request) == Self.tokyo.coordinates!.latitude
                ? .failure(.http(status: 503, message: "busy", retryAfterSeconds: nil))
                : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 4 * 3600)
        let tokyo = rig.transport.log.filter { Self.latitude($0.request) == Self.tokyo.coordinates!.latitude }.map(
            \.time)
        let gaps = zip(tokyo.dropFirst(), tokyo).map { $0 - $1 }
        for (index, gap) in gaps.enumerated() {
            let expected = min(60 * Double(1 << min(index, 20)), 3600)
            #expect(gap >= expected * 0.8 - 1 && gap <= expected * 1.2 + 1, "gap \(index): \(gap)")
        }
        #expect(gaps.count >= 8)
        #expect(rig.transport.log.count { Self.latitude($0.request) == Self.london.coordinates!.latitude } >= 4 * 59)
    }

    /// 401 is logged as an error when it starts and once when the key works again, never on every
    /// poll; meanwhile polling keeps its normal pace, since a new key may start working.
    @Test func keyRejectionIsLoggedOncePerChangeAndPollingKeepsItsPace() {
        let rig = Rig(configuration([Self.london, Self.tokyo], collectors: ["weather": .seconds(600)]))
        let works = Locked(false)
        rig.transport.answer { request in
            works.withLock { $0 }
                ? FakeTransport.fixtures(request)
                : .failure(.http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil))
        }
        rig.run(until: 1000 + 3600)
        for latitude in [Self.london.coordinates!.latitude, Self.tokyo.coordinates!.latitude] {
            let times = rig.transport.log.filter { Self.latitude($0.request) == latitude }.map(\.time)
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.dropFirst()
            #expect(times.count >= 6 && gaps.allSatisfy { abs($0 - 600) < 0.01 }, "every 10 minutes, as usual: \(gaps)")
        }
        works.withLock { $0 = true }
        rig.run(until: 1000 + 2 * 3600)
        works.withLock { $0 = false }
        rig.run(until: 1000 + 3 * 3600)
        let logs = rig.logs.all
        let rejections = logs.filter { $0.contains("rejects the API key") }
        #expect(rejections.count == 2, "\(rejections)")
        #expect(rejections.allSatisfy { $0.contains("level=error") && $0.contains("couple of hours") })
        #expect(logs.count { $0.contains("accepts the API key again") } == 1)
        #expect(logs.filter { $0.contains("code=401") }.allSatisfy { $0.contains("level=debug") })
        #expect(!logs.joined().contains("test-key-123"))
    }

    /// A 401 answering a request sent before the key started working is old news: the change of key
    /// is logged once each way, even when another location's request was in flight meanwhile.
    @Test func aRejectionSentBeforeTheKeyWorkedDoesNotFlipItBack() throws {
        let time = ManualTime()
        let held = Locked<[@Sendable () -> Void]>([])
        var config = configuration([Self.london, Self.tokyo], collectors: ["weather": .seconds(600)], budget: 6000)
        config.apiKey = Secret("k")
        let transport = FakeTransport(time: time)
        let works = Locked(false)
        transport.answer { request in
            works.withLock { $0 }
                ? FakeTransport.fixtures(request)
                : .failure(.http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil))
        }
        let setup = config.pollerSetup(transport: transport)
        let store = ReadingStore(setup: setup, now: time.wall())
        let logs = LogCapture()
        let poller = Poller(
            setup: setup, store: store, logger: Logger(level: .debug, sink: { logs.append($0) }), time: time,
            execute: { work in held.withLock { $0.append(work) } }, onChange: {})
        // Both requests sent while the key does not work (the budget spaces them); held in flight.
        poller.step()
        time.advance(1)
        poller.step()
        let sent = held.withLock { list in
            defer { list = [] }
            return list
        }
        try #require(sent.count == 2)
        sent[0]()  // London: 401
        poller.step()
        #expect(logs.all.count { $0.contains("rejects the API key") } == 1)
        works.withLock { $0 = true }
        time.advance(600)
        poller.step()  // London again, now with a working key
        let answers = held.withLock { list in
            defer { list = [] }
            return list
        }
        for answer in answers { answer() }
        poller.step()
        #expect(logs.all.count { $0.contains("accepts the API key again") } == 1)
        // Tokyo's old request, sent before the key worked, now answers 401.
        works.withLock { $0 = false }
        sent[1]()
        works.withLock { $0 = true }
        poller.step()
        #expect(logs.all.count { $0.contains("rejects the API key") } == 1, "\(logs.all)")
        #expect(logs.all.count { $0.contains("accepts the API key again") } == 1)
    }

    /// Polls go through the locations in the exposition's order (the bytes of their names), not the
    /// configuration's, so the series a second of polls changes are neighbours and a refresh
    /// re-renders a few shards.
    @Test func steadyPollsFollowTheLabelOrder() {
        let names = ["b", "Zürich", "a", "Z", "ä", "B"]
        let locations = names.enumerated().map { Location(name: $1, latitude: Double($0), longitude: 0) }
        let rig = Rig(configuration(locations))
        rig.run(until: 1000 + 600 * 4)
        let steady = rig.transport.requests(to: "/data/2.5/weather").filter { $0.time >= 1000 + 600 }
        let polled = steady.map { names[Int(Self.latitude($0.request)!)] }
        let order = ["B", "Z", "Zürich", "a", "b", "ä"]
        #expect(polled.count >= 12)
        let ranks = polled.map { order.firstIndex(of: $0)! }
        #expect(zip(ranks.dropFirst(), ranks).allSatisfy { $0 == ($1 + 1) % order.count }, "\(polled)")
    }

    // MARK: places by name

    @Test func aPlaceByNameIsResolvedOnceThenPolledAtItsCoordinates() {
        let rig = Rig(
            configuration(
                [Location(name: "Home", place: .query(.name("London,GB"))), Self.tokyo], collectors: Self.weatherAndAir)
        )
        rig.run(until: 1000 + 5 * 3600)
        #expect(rig.transport.requests(to: "/geo/1.0/direct").count == 1)
        let query = rig.transport.requests(to: "/geo/1.0/direct")[0].request.query
        #expect(query.contains(.init("q", "London,GB")))
        // The weather of Home is asked at the geocoder's first match.
        let home = rig.transport.requests(to: "/data/2.5/weather").filter { Self.latitude($0.request) == 51.5073219 }
        #expect(home.count >= 29)
        #expect(rig.state("Home", "geocoding")?.up == true)
        #expect(rig.state("Home", "weather")?.up == true)
        #expect(rig.state("Home", "air_pollution")?.up == true)
        #expect(rig.state("Tokyo", "geocoding")?.applies == false)
        let resolved = rig.store.snapshot().locations[0].resolved
        #expect(resolved?.name == "London" && resolved?.state == "England" && resolved?.country == "GB")
        #expect(resolved?.latitude == 51.5073219 && resolved?.longitude == -0.1276474)
        // Several matches: the first is taken and the log says which, and how many others there were.
        #expect(
            rig.logs.all.contains {
                $0.contains("place resolved") && $0.contains("location=Home") && $0.contains("state=England")
                    && $0.contains("country=GB")
                    && $0.contains("other_matches=4") && $0.contains("NAME=LAT,LON")
            })
    }

    @Test func aPostalCodeIsResolvedThroughTheZipEndpoint() {
        let rig = Rig(configuration([Location(name: "Office", place: .query(.zip("94040,US")))]))
        rig.run(until: 1000 + 60)
        #expect(rig.transport.requests(to: "/geo/1.0/zip").map(\.request.query) == [[.init("zip", "94040,US")]])
        #expect(rig.store.snapshot().locations[0].resolved?.name == "Mountain View")
        #expect(rig.state("Office", "weather")?.up == true)
    }

    /// No match: that location is down with a reason, retried hourly (at once on reload); the
    /// others are polled as usual.
    @Test func aPlaceWithNoMatchIsDownAndTheOthersRun() {
        let atlantis = Location(name: "Atlantis", place: .query(.name("Atlantis")))
        let config = configuration([atlantis, Self.tokyo])
        let rig = Rig(config)
        rig.run(until: 1000 + 3 * 3600 - 10)
        let lookups = rig.transport.requests(to: "/geo/1.0/direct").map(\.time)
        #expect(lookups.map { (($0 - 1000) / 100).rounded() } == [0, 36, 72], "\(lookups)")
        #expect(rig.state("Atlantis", "geocoding")?.up == false)
        #expect(rig.state("Atlantis", "geocoding")?.lastError?.contains("no place matches \"Atlantis\"") == true)
        #expect(rig.state("Atlantis", "weather")?.up == nil)
        #expect(rig.transport.requests(to: "/data/2.5/weather").count >= 3 * 6)
        #expect(rig.store.snapshot().allAttempted)
        #expect(
            rig.logs.all.contains {
                $0.contains("level=warn") && $0.contains("location=Atlantis") && $0.contains("source=geocoding")
            })
        #expect(rig.store.snapshot().requestCounts[.init(source: "geocoding", code: "200")] == 3)
        rig.poller.apply(config.pollerSetup(transport: rig.transport))
        rig.run(until: rig.time.monotonic() + 1)
        #expect(rig.transport.requests(to: "/geo/1.0/direct").count == 4, "a reload tries again at once")
    }

    @Test(arguments: [
        OpenWeatherError.http(status: 401, message: "Invalid API key.", retryAfterSeconds: nil),
        .http(status: 404, message: "not found", retryAfterSeconds: nil),
        .http(status: 500, message: "oops", retryAfterSeconds: nil),
        .decode("`[0].lat` is missing"),
    ])
    func aGeocodingFailureLeavesTheOtherLocationsPolling(error: OpenWeatherError) {
        let rig = Rig(configuration([Location(name: "Home", place: .query(.name("Paris"))), Self.tokyo]))
        rig.transport.answer { request in
            request.path.hasPrefix("/geo/") && error.code != "401" ? .failure(error) : FakeTransport.fixtures(request)
        }
        rig.run(until: 1000 + 3600)
        #expect(rig.state("Home", "geocoding")?.up == false)
        #expect(rig.state("Tokyo", "weather")?.up == true)
        #expect(rig.transport.requests(to: "/data/2.5/weather").count >= 6)
    }

    /// A reload keeps what was resolved while the query stays; another query is resolved anew.
    @Test func aReloadResolvesOnlyAChangedQuery() {
        var config = configuration([Location(name: "Home", place: .query(.name("London")))])
        let rig = Rig(config)
        rig.run(until: 1000 + 60)
        rig.poller.apply(config.pollerSetup(transport: rig.transport))
        rig.run(until: 1000 + 120)
        #expect(rig.transport.requests(to: "/geo/1.0/direct").count == 1)
        #expect(rig.state("Home", "weather")?.up == true)
        config.locations = [Location(name: "Home", place: .query(.name("London,CA")))]
        rig.poller.apply(config.pollerSetup(transport: rig.transport))
        rig.run(until: 1000 + 180)
        #expect(
            rig.transport.requests(to: "/geo/1.0/direct").map { $0.request.query[0].value } == ["London", "London,CA"])
    }

    /// What an answer lacks is logged once per source, also after a reload moves the source to another
    /// slot: the gaps logged are kept by slot and move with their source.
    @Test func aGapIsLoggedOnceEvenWhenAReloadMovesItsSource() {
        let rig = Rig(configuration([Self.london], collectors: ["forecast": .seconds(600)]))
        let body = Array(
            String(decoding: Fixture.bytes("forecast-zocca.json"), as: UTF8.self)
                .replacing("\"feels_like\":", with: "\"feels_like_gone\":").utf8)
        rig.transport.answer { request in
            request.path == "/data/2.5/forecast" ? .success(body) : FakeTransport.fixtures(request)
        }
        func gapLines() -> [String] {
            rig.logs.all.filter { $0.contains("source=forecast field=list[].main.feels_like ") }
        }
        rig.run(until: 1000 + 4 * 3600)
        let polled = rig.transport.requests(to: "/data/2.5/forecast").count
        #expect(polled >= 2 && gapLines().count == 1, "\(polled) polls: \(gapLines())")
        // The weather takes the first slot: the forecast moves to the second.
        rig.poller.apply(
            configuration([Self.london], collectors: ["weather": .seconds(600), "forecast": .seconds(600)])
                .pollerSetup(transport: rig.transport))
        rig.run(until: 1000 + 8 * 3600)
        #expect(rig.transport.requests(to: "/data/2.5/forecast").count > polled)
        #expect(rig.state("London", "forecast")?.up == true)
        #expect(gapLines().count == 1, "\(gapLines())")
    }

    /// An answer for the place a reload moved a location away from is not the new place's, even while
    /// the new place's request is in flight under the same name: it is dropped, and frees its slot.
    @Test func anAnswerForAPlaceAReloadMovedIsDropped() throws {
        let time = ManualTime()
        let held = Locked<[@Sendable () -> Void]>([])
        var config = configuration([Location(name: "Home", place: .query(.name("London")))])
        let transport = FakeTransport(time: time)
        let setup = config.pollerSetup(transport: transport)
        let store = ReadingStore(setup: setup, now: time.wall())
        let poller = Poller(
            setup: setup, store: store, logger: Logger(level: .debug, sink: { _ in }), time: time,
            execute: { work in held.withLock { $0.append(work) } }, onChange: {})
        func sent() -> [@Sendable () -> Void] {
            held.withLock { list in
                defer { list = [] }
                return list
            }
        }
        poller.step()
        let london = sent()
        try #require(london.count == 1)
        config.locations = [Location(name: "Home", place: .query(.name("London,CA")))]
        poller.apply(config.pollerSetup(transport: transport))
        time.advance(2)
        poller.step()
        let canada = sent()
        try #require(canada.count == 1)
        london[0]()
        poller.step()
        #expect(store.snapshot().locations[0].resolved == nil, "London's answer resolved London,CA")
        #expect(poller.withState { _, schedule, _ in (schedule.orphans, schedule.inFlightCount) } == (0, 1))
        canada[0]()
        poller.step()
        #expect(store.snapshot().locations[0].resolved != nil)
        #expect(transport.requests(to: "/geo/1.0/direct").map { $0.request.query[0].value } == ["London", "London,CA"])
        #expect(poller.withState { _, schedule, _ in (schedule.orphans, schedule.inFlightCount) } == (0, 0))
    }
}

/// The publisher on the same clock: each source goes stale on its own schedule.
@Suite struct PublisherClockTests {
    static func text(_ publisher: MetricsPublisher) -> String {
        String(decoding: publisher.body(.text).chunks.concatenated, as: UTF8.self)
    }

    /// A scrape is sent from the kept memfd: it must hold exactly the chunks, in each format, be made
    /// once per version by the first scrape that sends it plain (not at each change), and be replaced
    /// when the exposition changes; a gzipped exposition keeps none (its chunks are served).
    @Test func thePlainBodyIsKeptInAMemfdPerFormat() throws {
        let rig = Rig(configuration([PollerClockTests.london], collectors: PollerClockTests.weatherAndAir))
        let publisher = MetricsPublisher(store: rig.store, time: rig.time)
        rig.run(until: 1000 + 60)
        publisher.refreshWeather()
        for format in ExpositionFormat.allCases {
            let body = publisher.body(format)
            #expect(body.kept == nil, "made at the change, before any scrape asked for it")
            let kept = try #require(publisher.kept(format, of: body))
            #expect(kept.contents == body.chunks.concatenated)
            #expect(kept.count == body.plainCount)
            #expect(publisher.kept(format, of: publisher.body(format)) === kept, "made again for the same version")
        }
        let before = try #require(publisher.kept(.text, of: publisher.body(.text)))
        rig.run(until: 1000 + 200)
        publisher.refreshWeather()
        let after = try #require(publisher.kept(.text, of: publisher.body(.text)))
        #expect(after !== before)
        #expect(after.contents == publisher.body(.text).chunks.concatenated)
        let gzipped = MetricsPublisher(store: rig.store, time: rig.time, gzipAbove: 0)
        #expect(
            gzipped.body(.text).gzipped && gzipped.kept(.text, of: gzipped.body(.text)) == nil
                && gzipped.body(.text).gzip == nil)
        // Below `alsoGzipAbove` nothing is compressed; from it, the kept text is also one gzip member.
        #expect(publisher.body(.text).gzip == nil)
        let both = MetricsPublisher(store: rig.store, time: rig.time, alsoGzipAbove: 0)
        func plain(_ format: ExpositionFormat) -> [UInt8]? { both.kept(format, of: both.body(format))?.contents }
        for format in ExpositionFormat.allCases {
            let body = both.body(format)
            let gzip = try #require(body.gzip)
            #expect(Gzip.inflate(gzip, expectedCount: body.plainCount) == plain(format))
        }
        both.refreshProcess()
        let gzip = try #require(both.body(.openMetrics).gzip)
        #expect(Gzip.inflate(gzip) == plain(.openMetrics))
        // Segments are kept by their chunk's text: after polls change some chunks and not others,
        // the member is still the new text.
        let old = try #require(plain(.text))
        rig.run(until: 1000 + 1300)
        both.refreshWeather()
        for format in ExpositionFormat.allCases {
            let body = both.body(format)
            #expect(Gzip.inflate(try #require(body.gzip), expectedCount: body.plainCount) == plain(format))
        }
        #expect(plain(.text) != old)
    }

    @Test func eachSourceGoesStaleAfterThreeOfItsOwnIntervals() {
        let rig = Rig(configuration([PollerClockTests.london], collectors: PollerClockTests.weatherAndAir))
        let publisher = MetricsPublisher(store: rig.store, time: rig.time)
        rig.run(until: 1000 + 60)
        publisher.refreshWeather()
        #expect(publisher.ready)
        #expect(Self.text(publisher).contains("\nopenweather_temperature_celsius{location=\"London\"} "))
        #expect(Self.text(publisher).contains("\nopenweather_air_quality_index{location=\"London\"} 3\n"))
        rig.transport.answer { _ in .failure(.http(status: 500, message: "down", retryAfterSeconds: nil)) }
        // The weather's last success was at 1001 (a second after the air quality's, the budget spaces
        // them): stale 3 × 10 minutes later; the air quality 3 hours later.
        rig.run(until: 1000 + 1799)
        publisher.refreshWeather()
        // Down, not yet stale: the last reading is still served beside up 0.
        #expect(Self.text(publisher).contains("openweather_temperature_celsius{location=\"London\"}"))
        #expect(Self.text(publisher).contains("\nopenweather_up{location=\"London\",source=\"weather\"} 0\n"))
        rig.run(until: 1000 + 1803)
        publisher.tick()
        let weatherGone = Self.text(publisher)
        #expect(!weatherGone.contains("openweather_temperature_celsius{location=\"London\"}"))
        #expect(weatherGone.contains("\nopenweather_up{location=\"London\",source=\"weather\"} 0\n"))
        #expect(weatherGone.contains("\nopenweather_air_quality_index{location=\"London\"} 3\n"))
        rig.run(until: 1000 + 3 * 3600 + 2)
        publisher.tick()
        #expect(!Self.text(publisher).contains("openweather_air_quality_index{location=\"London\"}"))
        #expect(Self.text(publisher).contains("\nopenweather_up{location=\"London\",source=\"air_pollution\"} 0\n"))
    }
}

/// The publisher's pacing: after a refresh, a change waits 100 times (`MetricsPublisher.pacing`) the
/// refresh's time, at most a second. The clock here charges `cost` for every render (the renderer
/// reads the wall clock once per render), so a refresh takes a known time on it.
@Suite struct PublisherPacingTests {
    final class RenderCost: TimeSource {
        let base: ManualTime
        let cost = Locked(0.0)
        init(_ base: ManualTime) { self.base = base }
        func monotonic() -> Double { base.monotonic() }
        func wall() -> Double {
            base.advance(cost.withLock { $0 })
            return base.wall()
        }
    }

    /// One turn of the publisher's timer loop: what is due on the clock runs; otherwise the loop
    /// sleeps (in real time) until the next due time, so the test sets the clock just before one.
    static func turn(_ publisher: MetricsPublisher) {
        var first = true
        publisher.runTimers {
            defer { first = false }
            return first
        }
    }

    static func shows(_ publisher: MetricsPublisher, _ name: String) -> Bool {
        PublisherClockTests.text(publisher).contains("\nopenweather_temperature_celsius{location=\"\(name)\"} ")
    }

    @Test(arguments: [0.002, 0.05])
    func aChangeAfterARefreshWaitsPacingTimesItsTimeAtMostASecond(cost: Double) {
        let rig = Rig(configuration([PollerClockTests.london, PollerClockTests.tokyo]))
        let clock = RenderCost(rig.time)
        let publisher = MetricsPublisher(store: rig.store, time: clock)
        // London at 1000; Tokyo at 1001.017, the budget's spacing (61 s / 60) later.
        rig.run(until: 1001)
        clock.cost.withLock { $0 = cost }
        let start = rig.time.monotonic()
        publisher.weatherChanged()
        let end = rig.time.monotonic()
        clock.cost.withLock { $0 = 0 }
        #expect(abs(end - start - cost) < 1e-9, "one render, charged once")
        #expect(Self.shows(publisher, "London"), "the first change after a quiet spell is published at once")

        let wait = min(cost * 100, 1)
        rig.run(until: max(end, 1001.017) + 0.001)
        #expect(rig.state("Tokyo", "weather")?.up == true)
        publisher.weatherChanged()
        #expect(!Self.shows(publisher, "Tokyo"))
        rig.time.set(end + wait - 0.001)
        Self.turn(publisher)
        #expect(
            !Self.shows(publisher, "Tokyo"),
            "published \(rig.time.monotonic() - end) s after the refresh, before \(wait) s")
        rig.time.set(end + wait + 1e-6)
        Self.turn(publisher)
        #expect(Self.shows(publisher, "Tokyo"), "not published \(wait) s after the refresh")
    }
}
