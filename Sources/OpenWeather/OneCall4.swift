import JSON

/// One Call 4.0 (`/data/4.0/onecall/...`, the One Call by Call subscription): the same data as 3.0,
/// but each part is an endpoint of its own, billed per call, the timelines in pages, and alerts as
/// IDs whose text is one more call each. Decoded into 3.0's model (`OneCall`), so everything that
/// reads 3.0 reads 4.0; what only 4.0 has (the 15-minute timeline) comes beside it.
///
/// What the docs leave open (`shared/openweather/API.md`, "Not confirmed") is assumed leniently:
/// a 1day `rain`/`snow` may be a number or an object; `alerts` may be absent or `[]`; an alert's
/// `description` may be a string or a list; 15min records may lack `rain`; 1h records are read as
/// the field list says (no example answer exists); `cnt` is never sent (not a documented parameter);
/// `prev`/`next` links are assumed to carry the caller's key, so they are neither decoded nor kept.
public enum OneCall4 {
    /// The endpoints, by the word in their path.
    public enum Part: String, Sendable, CaseIterable, Hashable {
        case current
        case minute = "1min"
        case quarterHour = "15min"
        case hour = "1h"
        case day = "1day"
    }

    /// Records per page: current 1, 1min 60, 15min 50, 1h 20, 1day 10.
    public static func recordsPerPage(_ part: Part) -> Int {
        switch part {
        case .current: 1
        case .minute: 60
        case .quarterHour: 50
        case .hour: 20
        case .day: 10
        }
    }

    /// Seconds between records: current 0, 1min 60, 15min 900, 1h 3600, 1day 86400.
    public static func stepSeconds(_ part: Part) -> Double {
        switch part {
        case .current: 0
        case .minute: 60
        case .quarterHour: 900
        case .hour: 3600
        case .day: 86400
        }
    }

    /// `/data/4.0/onecall/current` or `/data/4.0/onecall/timeline/<part>`, with lat, lon, units=metric,
    /// lang, and `start` (whole Unix seconds, rounded down; left out when not finite) when given.
    /// Never from a link in an answer: those carry the key.
    public static func request(
        _ part: Part, latitude: Double, longitude: Double, language: String, start: Double? = nil
    ) -> APIRequest {
        var query: [APIRequest.Item] = [
            .init("lat", String(latitude)), .init("lon", String(longitude)), .init("units", "metric"),
            .init("lang", language),
        ]
        if let start, let seconds = Int64(exactly: start.rounded(.down)) {
            query.append(.init("start", String(seconds)))
        }
        let path = part == .current ? "/data/4.0/onecall/current" : "/data/4.0/onecall/timeline/\(part.rawValue)"
        return APIRequest(path: path, query: query)
    }

    /// The longest alert ID put into a path (the docs' are 36-character GUIDs).
    static let alertIDLimit = 64

    /// `/data/4.0/onecall/alert/<id>`; nil when `id` is not 1 to 64 characters of A-Z a-z 0-9 - _
    /// (an ID from an answer goes into a path only when it is harmless there).
    public static func alertRequest(id: String) -> APIRequest? {
        func harmless(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
        guard (1...alertIDLimit).contains(id.utf8.count), id.utf8.allSatisfy(harmless) else { return nil }
        return APIRequest(path: "/data/4.0/onecall/alert/\(id)", query: [])
    }

    /// The records of one answer, and the alert IDs its records list (first seen first, no repeats).
    /// `prev`/`next` links are not decoded at all (they carry the key; never kept, never followed).
    public struct Page<Record: Sendable & Equatable>: Sendable, Equatable {
        public var records: [Record]
        public var alertIDs: [String]

        public init(records: [Record], alertIDs: [String]) {
            self.records = records
            self.alertIDs = alertIDs
        }
    }

    /// The current record: the weather now as 3.0's `current` gives it, its dew point and UV index.
    public struct Now: Sendable, Equatable {
        public var weather: CurrentWeather
        public var dewPointCelsius: Double?
        public var uvIndex: Double?

        public init(weather: CurrentWeather, dewPointCelsius: Double?, uvIndex: Double?) {
            self.weather = weather
            self.dewPointCelsius = dewPointCelsius
            self.uvIndex = uvIndex
        }
    }

    /// A 1day record: the day's extremes (3.0's `OneCall.Day`) and the step 3.0 appends for days after
    /// the hours (`dayMinimumCelsius`/`dayMaximumCelsius` set; nil without `temp.day`).
    public struct Day: Sendable, Equatable {
        public var day: OneCall.Day
        public var step: Forecast.Step?

        public init(day: OneCall.Day, step: Forecast.Step?) {
            self.day = day
            self.step = step
        }
    }

    /// Alert IDs read from one record, at most: an upstream listing 36,000 once cost 8.2 s a poll.
    public static let alertIDsPerRecord = 64
    /// An alert's text is kept up to this many bytes (cut at a code point): 200 KB texts, 16 new a
    /// poll, once took the state file to 51 MB.
    public static let alertTextLimit = 4096
    /// Alert texts kept per place, at most: the first IDs listed (as many as a place shows).
    public static let alertsKept = 16
    /// A text kept this long (wall-clock seconds from when it was asked) is dropped and asked again if
    /// still listed, even when its `end` is far away.
    public static let alertMaxAge = 86_400.0

    /// One alert in full (`/alert/{id}`).
    public struct AlertDetail: Sendable, Equatable {
        public var id: String
        public var alert: OneCall.Alert
        /// The agency's text, its lines joined by "\n", at most `alertTextLimit` bytes; "" when there is none.
        public var description: String
        /// When it was asked for (wall-clock Unix seconds), which its age is counted from; nil in an
        /// answer, set when it is kept.
        public var fetched: Double?

        public init(id: String, alert: OneCall.Alert, description: String, fetched: Double? = nil) {
            self.id = id
            self.alert = alert
            self.description = description
            self.fetched = fetched
        }

        /// As a document keeps it: the fields read, already bounded (labels, the text), and `fetched`.
        public func kept() -> [UInt8] {
            var members: [(key: String, value: JSONValue)] = [
                (key: "id", value: .string(id)), (key: "sender_name", value: .string(alert.sender)),
                (key: "event", value: .string(alert.event)),
                (key: "start", value: .number(alert.start)), (key: "end", value: .number(alert.end)),
                (key: "description", value: .string(description)),
            ]
            if let fetched { members.append((key: "fetched", value: .number(fetched))) }
            return JSONValue.object(members).encoded()
        }
    }

    /// The raw answers of one location's parts, as fetched (pages in order), with when each part was
    /// fetched (wall-clock Unix seconds) and the alert details' bodies. `document()` makes them one JSON
    /// document (what the exporter keeps in its state file), e.g.
    /// {"fetched":{"current":1764590517,"1h":1764590400},"current":[<body>],"1h":[<page>,<page>],"alerts":[<detail>]}
    public struct Answers: Sendable, Equatable {
        public var pages: [Part: [[UInt8]]]
        public var fetched: [Part: Double]
        public var alerts: [[UInt8]]

        public init(pages: [Part: [[UInt8]]] = [:], fetched: [Part: Double] = [:], alerts: [[UInt8]] = []) {
            self.pages = pages
            self.fetched = fetched
            self.alerts = alerts
        }

        /// The fields of an answer the document keeps: what the decoders read, so never a `prev`/`next`
        /// link (those hold the key, and the document goes to a file).
        static let envelopeKeys: Set<String> = ["lat", "lon", "timezone", "timezone_offset", "data"]
        static let detailKeys: Set<String> = ["id", "sender_name", "event", "start", "end", "description", "fetched"]

        /// Parts in `Part` order, then the alert details. A body is embedded with only the fields above
        /// (its records whole); one that is not a JSON object is left out (it could not have decoded),
        /// and so is one nested so deep that, two levels down in the document, the parser would refuse it.
        public func document() -> [UInt8] {
            var members: [(key: String, value: JSONValue)] = []
            members.append(
                (
                    key: "fetched",
                    value: .object(
                        Part.allCases.compactMap { part in
                            fetched[part].map { (key: part.rawValue, value: JSONValue.number($0)) }
                        })
                ))
            for part in Part.allCases {
                guard let bodies = pages[part] else { continue }
                members.append(
                    (key: part.rawValue, value: .array(bodies.compactMap { Self.kept($0, Self.envelopeKeys) })))
            }
            members.append((key: "alerts", value: .array(alerts.compactMap { Self.kept($0, Self.detailKeys) })))
            return JSONValue.object(members).encoded()
        }

        private static func kept(_ body: [UInt8], _ keys: Set<String>) -> JSONValue? {
            guard case .object(let members)? = try? JSONParser.parse(body) else { return nil }
            let kept = JSONValue.object(members.filter { keys.contains($0.key) })
            return depth(kept) <= JSONParser.maxDepth - 2 ? kept : nil
        }

        /// Objects and lists inside one another, as the parser counts them.
        private static func depth(_ value: JSONValue) -> Int {
            switch value {
            case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
            case .object(let members): 1 + (members.map { depth($0.value) }.max() ?? 0)
            default: 0
            }
        }
    }

    /// What the exporter reads: the 3.0 value the same data makes, plus what only 4.0 has.
    public struct Reading: Sendable, Equatable {
        /// Kept to make the next document when only some parts are asked again.
        public var answers: Answers
        /// As `OneCallDecoder` gives for the same data (see `OneCall4Decoder.decode(document:)`).
        public var oneCall: OneCall
        /// The 15min timeline, pages joined; empty when not asked.
        public var quarterHours: [Forecast.Step]
        /// Every 1day record, pages joined (`oneCall.daily` holds the first 8, as 3.0 does).
        public var days: [Day]
        /// The alert details kept, by ID.
        public var details: [String: AlertDetail]
        /// IDs the records list: current first, then the 1min, 15min, 1h and 1day records; no repeats.
        public var alertIDs: [String]

        public init(
            answers: Answers, oneCall: OneCall, quarterHours: [Forecast.Step], days: [Day],
            details: [String: AlertDetail], alertIDs: [String]
        ) {
            self.answers = answers
            self.oneCall = oneCall
            self.quarterHours = quarterHours
            self.days = days
            self.details = details
            self.alertIDs = alertIDs
        }
    }
}
