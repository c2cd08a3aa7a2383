import Exposition
import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// An environment with a key shaped like OpenWeather's (32 hexadecimal characters: no warning).
let testKey = ["OPENWEATHER_API_KEY": "0123456789abcdef0123456789abcdef"]

/// The configuration the exporter loads from `arguments` and `environment` (a key unless told).
func load(_ arguments: [String], environment: [String: String] = testKey) throws(ConfigError) -> Configuration {
    switch try ConfigurationLoader(arguments: arguments, environment: environment).load() {
    case .run(let configuration): return configuration
    default: throw ConfigError("not a run: \(arguments)")
    }
}

/// What loading `arguments` says is wrong, as the user reads it ("no error" when it loads).
func loadError(_ arguments: [String], environment: [String: String] = testKey) -> String {
    do {
        _ = try load(arguments, environment: environment)
        return "no error"
    } catch {
        return error.description
    }
}

/// A clock the test moves by hand.
final class ManualTime: TimeSource {
    private let now: Locked<Double>
    /// Wall time is monotonic time plus this.
    let epoch: Double

    init(monotonic: Double = 1000, epoch: Double = 1_700_000_000) {
        now = Locked(monotonic)
        self.epoch = epoch
    }

    func monotonic() -> Double { now.withLock { $0 } }
    func wall() -> Double { monotonic() + epoch }
    func set(_ monotonic: Double) { now.withLock { $0 = monotonic } }
    func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
}

/// Answers every request from `answer`, and remembers each with the (virtual) time it was sent.
final class FakeTransport: OpenWeatherTransport {
    typealias Answer = @Sendable (APIRequest) -> Result<[UInt8], OpenWeatherError>
    private let state: Locked<(answer: Answer, log: [(time: Double, request: APIRequest)])>
    let time: ManualTime

    init(time: ManualTime, answer: @escaping Answer = FakeTransport.fixtures) {
        self.time = time
        state = Locked((answer, []))
    }

    func get(_ request: APIRequest, resend: () -> Bool) throws(OpenWeatherError) -> [UInt8] {
        let answer = state.withLock { state in
            state.log.append((time.monotonic(), request))
            return state.answer
        }
        return try answer(request).get()
    }

    func answer(_ answer: @escaping Answer) { state.withLock { $0.answer = answer } }
    var log: [(time: Double, request: APIRequest)] { state.withLock { $0.log } }
    func requests(to path: String) -> [(time: Double, request: APIRequest)] { log.filter { $0.request.path == path } }

    /// The most requests sent in any 60 s window: what the budget caps.
    var mostInAnyMinute: Int {
        let times = log.map(\.time)
        var low = 0
        var most = 0
        for high in times.indices {
            while times[high] - times[low] >= 60 { low += 1 }
            most = max(most, high - low + 1)
        }
        return most
    }

    /// The fixture that fits each endpoint.
    static let fixtures: Answer = { request in
        switch request.path {
        case "/data/2.5/weather": .success(Fixture.bytes("current-zocca-rain.json"))
        case "/data/2.5/air_pollution": .success(Fixture.bytes("air-pollution-barcelona.json"))
        case "/data/2.5/forecast": .success(Fixture.bytes("forecast-zocca.json"))
        case "/data/3.0/onecall": .success(Fixture.bytes("onecall-texarkana-alerts.json"))
        case "/data/4.0/onecall/current": .success(Fixture.bytes("onecall4-current-tulsa.json"))
        case "/data/4.0/onecall/timeline/1min": .success(Fixture.bytes("onecall4-1min-london.json"))
        case "/data/4.0/onecall/timeline/15min": .success(Fixture.bytes("onecall4-15min-tulsa.json"))
        case "/data/4.0/onecall/timeline/1h": .success(Fixture.bytes("onecall4-1h-tulsa.json"))
        case "/data/4.0/onecall/timeline/1day": .success(Fixture.bytes("onecall4-1day-tulsa.json"))
        // The Red Flag Warning the 1day record lists has no detail fixture: a failed detail call.
        case "/data/4.0/onecall/alert/4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31":
            .success(Fixture.bytes("onecall4-alert-tulsa-wind-advisory.json"))
        case "/geo/1.0/direct":
            request.query.contains { $0.name == "q" && $0.value.lowercased().hasPrefix("london") }
                ? .success(Fixture.bytes("geo-direct-london.json"))
                : .success(Fixture.bytes("geo-direct-no-match.json"))
        case "/geo/1.0/zip": .success(Fixture.bytes("geo-zip-94040-us.json"))
        default: .failure(.http(status: 404, message: "not found", retryAfterSeconds: nil))
        }
    }
}

enum Fixture {
    static let directory = "\(TestSupport.testsDirectory())/Fixtures/openweather"

    /// Read once: the poller tests answer thousands of requests with the same few files.
    private static let cache = Locked<[String: [UInt8]]>([:])

    static func bytes(_ name: String) -> [UInt8] {
        if let bytes = cache.withLock({ $0[name] }) { return bytes }
        let bytes = (try? readFile("\(directory)/\(name)")) ?? []
        cache.withLock { $0[name] = bytes }
        return bytes
    }

    static func weather(_ name: String) throws -> CurrentWeather { try WeatherDecoder.decode(bytes(name)) }
}

/// A poller on a clock the test moves, with requests answered at once on the scheduler's thread
/// (or run by `execute`; nil: the poller's own threads).
struct Rig {
    let time: ManualTime
    let transport: FakeTransport
    let store: ReadingStore
    let poller: Poller
    let logger: Logger
    let logs: LogCapture

    init(_ configuration: Configuration, time: ManualTime = ManualTime(), execute: Poller.Executor? = { $0() }) {
        self.init(time: time, secrets: [configuration.apiKey.value], execute: execute) {
            configuration.pollerSetup(transport: $0)
        }
    }

    /// A poller on a setup made by hand (sources a test defines), with `transport`'s requests.
    init(
        time: ManualTime = ManualTime(), secrets: [String] = [], execute: Poller.Executor? = { $0() },
        setup: (FakeTransport) -> Poller.Setup
    ) {
        self.time = time
        transport = FakeTransport(time: time)
        let logs = LogCapture()
        self.logs = logs
        logger = Logger(level: .debug, format: .logfmt, secrets: secrets, sink: { logs.append($0) })
        let setup = setup(transport)
        store = ReadingStore(setup: setup, now: time.wall())
        poller = Poller(setup: setup, store: store, logger: logger, time: time, execute: execute, onChange: {})
    }

    /// Runs the poller until `end` on the virtual clock, jumping from one due time to the next.
    func run(until end: Double) {
        while true {
            let decision = poller.step()
            guard case .wait(let until) = decision, until <= end else { break }
            time.set(max(until, time.monotonic()))
        }
        time.set(max(end, time.monotonic()))
    }

    /// The state of `location` (by name) for `source`.
    func state(_ location: String, _ source: String) -> ReadingStore.SlotState? {
        let snapshot = store.snapshot()
        guard let slot = snapshot.layout.sourceNames.firstIndex(of: source),
            let state = snapshot.locations.first(where: { $0.location.name == location })
        else { return nil }
        return state.slots[slot]
    }
}

extension Configuration {
    /// A source's configured interval (not stretched), by its collector word; nil for no such source.
    func interval(of name: String) -> Duration? { collectors.first { $0.name == name }?.interval }
}

/// A configuration for tests: a key, these locations, the given collectors on (others off).
func configuration(
    _ locations: [Location], collectors: [String: Duration] = ["weather": .seconds(600)], budget: Int = 60
) -> Configuration {
    var configuration = Configuration()
    configuration.apiKey = Secret("test-key-123")
    configuration.locations = locations
    configuration.maxRequestsPerMinute = budget
    for index in configuration.collectors.indices
    where Sources.named(configuration.collectors[index].name)?.resolves == false {
        let name = configuration.collectors[index].name
        configuration.collectors[index].enabled = collectors[name] != nil
        if let interval = collectors[name] { configuration.collectors[index].interval = interval }
    }
    return configuration
}

extension Layout {
    /// A layout by hand, for tests that render without a poller: configured intervals as planned, no daily limits.
    init(
        locations: [Location], sources: [any Source], intervals: [Duration], maxStaleness: [Double],
        thresholds: @escaping @Sendable (Location) -> AlertThresholds
    ) {
        self.init(
            locations: locations,
            planned: PlannedSource.plan(
                sources: sources, intervals: intervals, configured: intervals, maxStaleness: maxStaleness,
                dailyLimits: sources.map { _ in nil }),
            thresholds: thresholds)
    }
}

extension ReadingStore {
    /// The store a poller setup needs, as the exporter makes it.
    convenience init(setup: Poller.Setup, now: Double) {
        self.init(layout: setup.layout, now: now)
    }

    /// A store laid out by hand, for tests that render without a poller.
    convenience init(
        locations: [Location], sources: [any Source], intervals: [Duration], maxStaleness: [Double],
        thresholds: @escaping @Sendable (Location) -> AlertThresholds, now: Double
    ) {
        self.init(
            layout: Layout(
                locations: locations, sources: sources, intervals: intervals, maxStaleness: maxStaleness,
                thresholds: thresholds),
            now: now)
    }

    /// A store with a slot for each of `sources` (every source unless told), in that order.
    static func allSources(
        _ locations: [Location], sources: [any Source] = Sources.all,
        thresholds: @escaping @Sendable (Location) -> AlertThresholds = { _ in .init() }, now: Double
    ) -> ReadingStore {
        ReadingStore(
            locations: locations, sources: sources,
            intervals: sources.map(\.defaultInterval), maxStaleness: sources.map { $0.defaultInterval.seconds * 3 },
            thresholds: thresholds, now: now)
    }

    /// The sources the golden files and the readiness test were written for, in label order: a source
    /// added later is not in them, so it changes no golden file.
    static let fixtureSources: [any Source] = [
        AirPollutionSource(), AirPollutionForecastSource(), ForecastSource(), GeocodingSource(), OneCallSource(),
        WeatherSource(),
    ]

    /// Records by names, for tests that build a store by hand.
    func success(_ location: String, _ source: String, _ reading: any Sendable, duration: Double = 0.25, now: Double) {
        let (position, slot) = place(location, source)
        recordSuccess(location: position, slot: slot, reading: reading, duration: duration, now: now)
    }

    func failure(_ location: String, _ source: String, code: String, reason: String, duration: Double = 0.25) {
        let (position, slot) = place(location, source)
        recordFailure(location: position, slot: slot, code: code, reason: reason, duration: duration)
    }

    private func place(_ location: String, _ source: String) -> (Int, Int) {
        let snapshot = snapshot()
        return (
            snapshot.locations.firstIndex { $0.location.name == location }!,
            snapshot.layout.sourceNames.firstIndex(of: source)!
        )
    }
}

/// What `Exposition.render` makes of the families in `text`: sorted and escaped the one right way.
/// The rendered exposition must equal it, byte for byte.
enum ExpositionText {
    static func reRendered(_ text: [UInt8]) -> [UInt8] {
        var families: [MetricFamily] = []
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                let name = String(rest.prefix { $0 != " " })
                families.append(MetricFamily(name: name, help: unescapeHelp(String(rest.dropFirst(name.count + 1)))))
            } else if line.hasPrefix("# TYPE ") {
                let type = MetricType(rawValue: String(line.split(separator: " ").last!))!
                let last = families.removeLast()
                families.append(MetricFamily(name: last.name, help: last.help, type: type))
            } else {
                families[families.count - 1].samples.append(sample(line))
            }
        }
        return Exposition.render(families)
    }

    private static func sample(_ line: Substring) -> Sample {
        var labels: [(name: String, value: String)] = []
        var rest = line.drop { $0 != "{" && $0 != " " }
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let name = String(rest.prefix { $0 != "=" })
                rest = rest.dropFirst(name.count + 2)
                var value = ""
                while rest.first != "\"" {
                    if rest.first == "\\" {
                        rest = rest.dropFirst()
                        value.append(rest.first == "n" ? "\n" : rest.first!)
                    } else {
                        value.append(rest.first!)
                    }
                    rest = rest.dropFirst()
                }
                rest = rest.dropFirst()
                if rest.first == "," { rest = rest.dropFirst() }
                labels.append((name, value))
            }
            rest = rest.dropFirst()
        }
        return Sample(labels, value: Double(rest.dropFirst())!)
    }

    private static func unescapeHelp(_ text: String) -> String {
        text.replacing("\\n", with: "\n").replacing("\\\\", with: "\\")
    }
}

/// The `openweather_*` part of the exposition for `snapshot` at `now`, rendered from scratch, as plain text.
func renderPlain(_ snapshot: ReadingStore.Snapshot, now: Double) -> [UInt8] {
    var rendering = MetricsRendering(gzipAbove: .max)
    return rendering.render(snapshot, now: now).text.chunks.concatenated
}

/// The same in OpenMetrics, ended by `# EOF` as the process part ends it in a scrape; the counters'
/// `_created` fixed at a day before `now`.
func renderOpenMetrics(_ snapshot: ReadingStore.Snapshot, now: Double) -> [UInt8] {
    var rendering = MetricsRendering(gzipAbove: .max, countersCreated: now - 86400)
    return rendering.render(snapshot, now: now).openMetrics.chunks.concatenated + Exposition.trailer(.openMetrics)
}

/// The series lines of an OpenMetrics exposition as the text format has them: without the
/// counters' `_created` lines and the descriptors (which differ by design).
func seriesAsText(openMetrics: [UInt8], text: [UInt8]) -> (openMetrics: [Substring], text: [Substring]) {
    func series(_ bytes: [UInt8]) -> [Substring] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
    }
    return (series(openMetrics).filter { !$0.prefix { $0 != "{" && $0 != " " }.hasSuffix("_created") }, series(text))
}

extension Configuration {
    /// The forecast source's options as configured.
    var forecastOptions: ForecastSource.Options? {
        (sources.first { $0.name == ForecastSource.name } as? ForecastSource)?.options
    }
}

extension ForecastSource {
    init(horizons: [Duration], windows: [Duration]) {
        self.init()
        options = Options(horizons: horizons, windows: windows)
    }
}
