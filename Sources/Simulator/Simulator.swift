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
/// - `POST /_simulator/fault?status=500` (or `delay=2s`, `malformed=truncated`, `huge=20000000`, `trickle=200ms`,
///   `close=1`, `body=...` (percent-encoded), `retry_after=30` (sent as given, `1e19` too); `lat=51.51` to affect one
///   place only, `path=/data/2.5/air_pollution` one endpoint only (exactly that path: `/data/3.0/onecall` is not its
///   `/timemachine`; `/data/4.0/onecall/alert` is every alert's detail, `.../alert/{id}` one); a request body is served
///   as the answer, to replay a captured response, with `status=` as that status's, to echo a request's key altered):
///   add a fault, checked in the order added (at most 256, then 400);
/// - `DELETE /_simulator/fault`: clear all faults;
/// - `POST /_simulator/onecall?subscribed=false` (or `true`): One Call (3.0 and 4.0, every path) answers
///   401 as for a key without its subscription, or works again; `alerts=always` (or `sometimes`): an
///   official alert everywhere (`endless`: 4.0's current answers list 16 new alert IDs each time, each
///   a 200 KB text until 2100, a hostile upstream); `rain=soon` (or `model`): the minute forecast has rain starting in
///   10 minutes everywhere;
/// - `POST /_simulator/weather?lat=-14.63&shift=35` (`lat` left out: everywhere; `lon=` too, to tell two
///   places at one latitude apart): that place's temperatures, now and forecast on every endpoint, shifted
///   by `shift` °C (negative: colder), added to any earlier shift (+35 then -35 is no shift; one total
///   per place, within ±100 °C, and at most 256 places; `lat`/`lon` past ±90/±180 are refused); with
///   `ahead_hours=6`, only the forecasts' temperatures from 6 hours ahead on (a spell that never comes);
///   `DELETE /_simulator/weather`: the model's own weather again, with `lat=`/`lon=` at that place only
///   (the shifts made for it; those made for every place stay);
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
        /// `alerts=endless`: One Call 4.0 answers that list new alert IDs each time, with huge texts.
        var oneCallEndlessAlerts = false
        var endlessRound = 0
        /// True: every One Call minute forecast is dry for 10 minutes, then rains.
        var oneCallRainSoon = false
        /// Places made hotter or colder (`POST /_simulator/weather`): one for each place and hours ahead.
        var shifts: [TemperatureShift] = []

        /// The most shifts kept. A place's later shifts add to its own, so this bounds the places
        /// shifted at once; each answer looks at every one.
        static let maxShifts = 256
        /// The most faults kept: each answer looks at every one, and each may hold a body.
        static let maxFaults = 256

        /// Keeps `fault` after the others, or returns why not when the list is full.
        mutating func add(_ fault: Fault) -> String? {
            guard faults.count < Self.maxFaults else {
                return "\(Self.maxFaults) faults are set already, the most kept; DELETE /_simulator/fault clears them"
            }
            faults.append(fault)
            return nil
        }

        /// Adds `shift` to the one made for the same place and hours ahead (shifts add up; a total of 0
        /// is none), or keeps it as a new one. Returns why not, when it is refused.
        mutating func add(_ shift: TemperatureShift) -> String? {
            if let index = shifts.firstIndex(where: { $0.isSamePlace(as: shift) }) {
                let total = shifts[index].celsius + shift.celsius
                guard abs(total) <= TemperatureShift.maxCelsius else {
                    return """
                        the shift there would total \(total) °C, past ±\(Int(TemperatureShift.maxCelsius)) °C; \
                        DELETE /_simulator/weather clears it
                        """
                }
                if total == 0 { shifts.remove(at: index) } else { shifts[index].celsius = total }
                return nil
            }
            guard shifts.count < Self.maxShifts else {
                return """
                    \(Self.maxShifts) places are shifted already, the most kept; DELETE /_simulator/weather clears \
                    them (with lat=/lon=, one place's)
                    """
            }
            shifts.append(shift)
            return nil
        }
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

    /// What `GET /_simulator/` answers: the controls, as a newcomer steering the demo needs them.
    static func controls(base: String) -> String {
        """
        The OpenWeather simulator behind openweather-exporter --demo. Its controls (lat= picks the place
        whose latitude is within 0.005° of it; without lat=, every place). Shifts add up: +35 then -35
        is the place as it was.

          curl -X POST '\(base)/_simulator/weather?lat=51.51&shift=35'    temperatures 35 °C higher (now and forecast)
          curl -X POST '\(base)/_simulator/weather?lat=51.51&shift=-35'   ... 35 °C lower than that
          curl -X POST '\(base)/_simulator/weather?lat=51.51&shift=-30&ahead_hours=6'   \
        a cold spell only forecasts have, from 6 hours ahead
          curl -X DELETE '\(base)/_simulator/weather?lat=51.51'          that place's shifts cleared
          curl -X DELETE '\(base)/_simulator/weather'                     \
        every shift cleared: the model's own temperatures
          curl -X POST '\(base)/_simulator/fault?lat=51.51&status=500'   \
        requests fail with this status (or 401, 429&retry_after=60)
          curl -X POST '\(base)/_simulator/fault?delay=15s'              answers late (past --openweather.timeout)
          curl -X POST '\(base)/_simulator/fault?malformed=truncated'    \
        broken answers (notJSON, wrongTypes, missingFields, absurdNumbers, nan, empty)
          curl -X POST '\(base)/_simulator/fault?path=/data/2.5/forecast&status=503'   one endpoint only
          curl -X DELETE '\(base)/_simulator/fault'                       every fault cleared
          curl -X POST '\(base)/_simulator/onecall?alerts=always&rain=soon'  \
        One Call: an official alert and rain in 10 minutes everywhere
          curl -X POST '\(base)/_simulator/onecall?subscribed=false'      \
        One Call answers as for a key without its subscription
          curl '\(base)/_simulator/requests'                              the API requests seen so far

        """
    }

    public func stop() { server.shutdown(gracePeriod: .milliseconds(200)) }

    public func setAcceptedKeys(_ keys: Set<String>?) { state.withLock { $0.acceptedKeys = keys } }

    public func setOneCallSubscribed(_ subscribed: Bool) { state.withLock { $0.oneCallSubscribed = subscribed } }

    /// What `POST /_simulator/weather` does: the temperatures at a place (its latitude, to 0.01°) shifted
    /// by `celsius`; with `hoursAhead`, only the forecasts' from that far ahead on.
    /// Returns why it is refused (past ±100 °C there, or too many places shifted).
    @discardableResult
    public func shiftTemperatures(latitude: Double, celsius: Double, hoursAhead: Double? = nil) -> String? {
        let shift = TemperatureShift(latitude: latitude, celsius: celsius, ahead: hoursAhead.map { $0 * 3600 })
        return state.withLock { $0.add(shift) }
    }

    /// Every API request seen, any endpoint, oldest first.
    public var requests: [Request] { state.withLock { $0.requests } }
}
