import HTTPServer
import Locking

/// An OpenWeather-compatible server on loopback: `GET /data/2.5/weather` with
/// simulated weather (see `WeatherModel`), `/data/2.5/forecast` (`ForecastJSON`, from the same model),
/// `/data/2.5/air_pollution`, its `/forecast` (96 hours of `AirPollutionModel`) and `/history`,
/// One Call 3.0 `/data/3.0/onecall` and its `/timemachine` (`OneCallJSON`), One Call 4.0
/// (`OneCall4JSON`: `/data/4.0/onecall/current`, `/timeline/1min`, `/timeline/15min`, `/timeline/1h`
/// and `/timeline/1day` a page at a time from `start=`, `/alert/{id}`), `/geo/1.0/direct` and
/// `/geo/1.0/zip` for real places (`Places`), each checking the key, and switchable faults. It is
/// what `--demo` runs and what the tests run against.
///
/// Out-of-process tools steer it over HTTP:
/// - `POST /_simulator/fault?status=500` (or `delay=2s`, `malformed=truncated`, `huge=20000000`,
///   `trickle=200ms`, `close=1`, `body=...` (percent-encoded), `retry_after=30` (sent as given, `1e19` too); `lat=51.51` to affect one place only,
///   `path=/data/2.5/air_pollution` one endpoint only (exactly that path: `/data/3.0/onecall` is not its
///   `/timemachine`; `/data/4.0/onecall/alert` is every alert's detail, `.../alert/{id}` one); a request body is
///   served as the answer, to replay a captured response): add a fault, checked in the order added;
/// - `DELETE /_simulator/fault`: clear all faults;
/// - `POST /_simulator/onecall?subscribed=false` (or `true`): One Call (3.0 and 4.0, every path) answers
///   401 as for a key without its subscription, or works again; `alerts=always` (or `sometimes`): an
///   official alert everywhere; `rain=soon` (or `model`): the minute forecast has rain starting in
///   10 minutes everywhere;
/// - `GET /_simulator/requests`: the API requests seen so far, one `monotonic_seconds lat lon status path`
///   line each (`nan` for the coordinates of a geocoding or alert request; an alert's path ends in its ID).
public final class Simulator: Sendable {
    public struct Request: Sendable, Equatable {
        /// Monotonic seconds, for measuring spacing.
        public var time: Double
        public var latitude: Double
        public var longitude: Double
        public var status: Int
        /// The endpoint, `/data/2.5/weather` say (`/data/4.0/onecall/alert/{id}` for an alert's detail).
        public var path: String
    }

    struct State {
        var faults: [Fault] = []
        var requests: [Request] = []
        var acceptedKeys: Set<String>?
        /// False: One Call (3.0 and 4.0) answers 401 as for a key without the subscription.
        var oneCallSubscribed = true
        /// True: every One Call answer has an official alert in force.
        var oneCallAlwaysAlert = false
        /// True: every One Call minute forecast is dry for 10 minutes, then rains.
        var oneCallRainSoon = false
    }

    /// Shared by the public API and the handler on the server's threads.
    final class Shared: Sendable {
        let lock: Locked<State>
        init(_ state: State) { lock = Locked(state) }
        func withLock<T>(_ body: (inout State) -> T) -> T { lock.withLock { body(&$0) } }
    }

    private let server: HTTPServer
    let state: Shared

    /// `acceptedKeys`: nil accepts any non-empty key; otherwise other keys get OpenWeather's 401.
    /// Throws `HTTPServerError` (untyped: typed throws from a class initializer miscompiles in Swift 6.3).
    public init(host: String = "127.0.0.1", port: UInt16 = 0, acceptedKeys: Set<String>? = nil) throws {
        let state = Shared(State(acceptedKeys: acceptedKeys))
        self.state = state
        var configuration = HTTPServerConfiguration(host: host, port: port)
        configuration.eventLoops = 1
        configuration.maxConnections = 1024
        server = try HTTPServer(configuration: configuration, handler: SimulatorHandler(state: state))
        server.start()
    }

    public var port: UInt16 { server.port }

    /// `http://127.0.0.1:PORT`, the value for `--openweather.url`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func stop() { server.shutdown(gracePeriod: .milliseconds(200)) }

    public func setAcceptedKeys(_ keys: Set<String>?) { state.withLock { $0.acceptedKeys = keys } }

    public func setOneCallSubscribed(_ subscribed: Bool) { state.withLock { $0.oneCallSubscribed = subscribed } }

    /// Every API request seen, any endpoint, oldest first.
    public var requests: [Request] { state.withLock { $0.requests } }
}
