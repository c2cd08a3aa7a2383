import JSON

/// Decodes One Call 4.0 answers (`units=metric`): an envelope (`lat`, `lon`, `timezone`,
/// `timezone_offset`, `data[]`) around records in 3.0's flat names, each checked by the same
/// functions as 3.0's (`OneCallDecoder`), so a field means and is bounded the same in both.
/// A page's records must rise strictly in `dt`.
public enum OneCall4Decoder {
    /// Exactly one record in `data`, else `.decode`.
    public static func current(_ body: [UInt8]) throws(OpenWeatherError) -> OneCall4.Page<OneCall4.Now> {
        try Fields.decode(body, current)
    }

    public static func minutes(_ body: [UInt8]) throws(OpenWeatherError) -> OneCall4.Page<OneCall.Minute> {
        try Fields.decode(body, minutes)
    }

    /// A 15min or 1h page: hourly steps as 3.0's, whose `rain.1h`/`snow.1h` (mm/h) make the step's
    /// amount over its own length (a 15-minute step holds a quarter of the hour's rate).
    public static func steps(
        _ body: [UInt8], part: OneCall4.Part
    ) throws(OpenWeatherError) -> OneCall4.Page<Forecast.Step> {
        try Fields.decode(body) { (root: Fields) throws(FieldError) in try steps(root, part: part) }
    }

    public static func days(_ body: [UInt8]) throws(OpenWeatherError) -> OneCall4.Page<OneCall4.Day> {
        try Fields.decode(body) { (root: Fields) throws(FieldError) in try days(root) }
    }

    public static func alert(_ body: [UInt8]) throws(OpenWeatherError) -> OneCall4.AlertDetail {
        try Fields.decode(body, alert)
    }

    /// A document from `Answers.document()`: every part decoded and assembled. `current` must be there.
    public static func decode(document: [UInt8]) throws(OpenWeatherError) -> OneCall4.Reading {
        try Fields.decode(document, reading)
    }

    // MARK: One answer

    /// The records of `data` that can be read (see `Fields.entries`: one without what it needs is
    /// skipped and noted) and the alert IDs every record lists.
    private static func page<Record>(
        _ root: Fields, follows: ((Record, Record, String) -> String?)? = nil,
        _ record: (Fields) throws(FieldError) -> Record
    ) throws(FieldError) -> OneCall4.Page<Record> {
        let root = try root.requireObject()
        try root.requireList("data")
        let records = root.entries("data", follows: follows, record) ?? []
        var ids: [String] = []
        var seen: Set<String> = []
        if case .array(let items)? = root.value["data"] {
            for (index, item) in items.enumerated() {
                alertIDs(Fields(item, path: "\(root.name("data"))[\(index)]", log: root.log), into: &ids, seen: &seen)
            }
        }
        return OneCall4.Page(records: records, alertIDs: ids)
    }

    /// A record's `alerts`: absent, null or `[]` for none, else a list of ID strings; the first
    /// `alertIDsPerRecord` are read, each once (`seen` makes that linear in the IDs). Not a list, or an
    /// item not a string: left out, noted.
    private static func alertIDs(_ record: Fields, into ids: inout [String], seen: inout Set<String>) {
        guard let found = record.value["alerts"], found != .null else { return }
        let path = "\(record.path).alerts"
        guard case .array(let items) = found else {
            record.log?.missing(path, "`\(path)` is \(found.typeName), not a list of alert IDs")
            return
        }
        for (index, item) in items.prefix(OneCall4.alertIDsPerRecord).enumerated() {
            guard case .string(let id) = item else {
                record.log?.missing(path, "`\(path)[\(index)]` is \(item.typeName), not an alert ID (a string)")
                continue
            }
            let cleaned = Fields.label(id)
            if seen.insert(cleaned).inserted { ids.append(cleaned) }
        }
    }

    private static func current(_ root: Fields) throws(FieldError) -> OneCall4.Page<OneCall4.Now> {
        let page = try page(root) { (record: Fields) throws(FieldError) in
            let extras = OneCallDecoder.dewPointAndUV(record)
            return OneCall4.Now(
                weather: try OneCallDecoder.weather(record, in: root), dewPointCelsius: extras.dewPointCelsius,
                uvIndex: extras.uvIndex)
        }
        guard page.records.count == 1 else {
            if let skipped = root.gaps.skipped.first(where: { $0.field == AnswerGaps.field(root.name("data")) }) {
                throw FieldError(reason: "`\(root.name("data"))` holds no usable record: \(skipped.reason)")
            }
            throw FieldError(reason: "`data` holds \(page.records.count) records; the current weather is one")
        }
        return page
    }

    private static func minutes(_ root: Fields) throws(FieldError) -> OneCall4.Page<OneCall.Minute> {
        try page(root, follows: OneCallDecoder.minuteApart) { (record: Fields) throws(FieldError) in
            try OneCallDecoder.minute(record)
        }
    }

    private static func steps(_ root: Fields, part: OneCall4.Part) throws(FieldError) -> OneCall4.Page<Forecast.Step> {
        try page(root, follows: OneCallDecoder.rising) { (record: Fields) throws(FieldError) in
            try OneCallDecoder.hour(record, hours: OneCall4.stepSeconds(part) / 3600)
        }
    }

    /// A 1day page; its records' places among the days count from `offset`, the page's first (pages
    /// are placed one after the other from today's).
    private static func days(_ root: Fields, offset: Int = 0) throws(FieldError) -> OneCall4.Page<OneCall4.Day> {
        try page(
            root, follows: { OneCallDecoder.dayApart($0.day, $1.day, $2) },
            { (record: Fields) throws(FieldError) in
                let day = try OneCallDecoder.day(record, offset: offset)
                return OneCall4.Day(day: day, step: OneCallDecoder.dayStep(record, day, millimeters: dailyMillimeters))
            })
    }

    /// A day's `rain`/`snow`: 3.0 gives a plain number (the day's mm); 4.0's field list names an object
    /// `{"1h": x}` that no example shows (not confirmed). Both are taken, and the object's `1h` is read as
    /// the day's millimetres too: a rate per hour over a whole day would be a wild over-count if wrong.
    private static func dailyMillimeters(_ day: Fields, _ key: String) -> Double? {
        if case .object? = day.value[key] { return day.part(key).optional("1h", 0...2000) }
        return OneCallDecoder.dailyMillimeters(day, key)
    }

    private static func alert(_ root: Fields) throws(FieldError) -> OneCall4.AlertDetail {
        let root = try root.requireObject()
        return OneCall4.AlertDetail(
            id: try root.string("id"), alert: try OneCallDecoder.alert(root),
            description: cut(try description(root), OneCall4.alertTextLimit),
            fetched: try root.optionalNumber("fetched", 0...1e11))
    }

    /// The first `limit` bytes of `text` or fewer, cut at a code point (never inside one).
    static func cut(_ text: String, _ limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var bytes = 0
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            bytes += scalar.utf8.count
            guard bytes <= limit else { break }
            out.append(scalar)
        }
        return String(out)
    }

    /// A string, as the docs give it, or a list (as two third-party clients read it) of strings or of
    /// objects with a `description` or `text` string, joined line by line; absent is "".
    private static func description(_ root: Fields) throws(FieldError) -> String {
        guard let found = root.value["description"], found != .null else { return "" }
        switch found {
        case .string(let text): return Fields.text(text)
        case .array(let items):
            var lines: [String] = []
            for (index, item) in items.enumerated() {
                let path = "\(root.path.isEmpty ? "" : "\(root.path).")description[\(index)]"
                switch item {
                case .string(let text): lines.append(text)
                case .object:
                    let entry = Fields(item, path: path)
                    // Not `??`, which would erase the thrown type.
                    var text = try rawString(entry, "description")
                    if text == nil { text = try rawString(entry, "text") }
                    guard let text else {
                        throw FieldError(reason: "`\(path)` has no `description` or `text` string")
                    }
                    lines.append(text)
                default: throw FieldError(reason: "`\(path)` is \(item.typeName), not a string or an object")
                }
            }
            return Fields.text(lines.joined(separator: "\n"))
        default:
            throw FieldError(
                reason:
                    """
                    `\(root.path.isEmpty ? "" : "\(root.path).")description` is \(found.typeName), not a string or a \
                    list
                    """
            )
        }
    }

    private static func rawString(_ entry: Fields, _ key: String) throws(FieldError) -> String? {
        guard let found = entry.value[key], found != .null else { return nil }
        guard case .string(let text) = found else {
            throw FieldError(reason: "`\(entry.path).\(key)` is \(found.typeName), not a string")
        }
        return text
    }

    // MARK: The document

    /// 3.0 gives 8 days (today and 7 after): `daily` keeps as many, so `days_ahead` means the same.
    static let dailyLimit = 8

    private static func reading(_ root: Fields) throws(FieldError) -> OneCall4.Reading {
        let root = try root.requireObject()
        var answers = OneCall4.Answers()
        if let fetched = try root.optionalObject("fetched") {
            for part in OneCall4.Part.allCases {
                answers.fetched[part] = try fetched.optionalNumber(part.rawValue, 0...1e11)
            }
        }
        func bodies(_ part: OneCall4.Part) throws(FieldError) -> [Fields] {
            guard let list = try root.optionalList(part.rawValue) else { return [] }
            answers.pages[part] = list.map { $0.value.encoded() }
            return list
        }

        let currentBodies = try bodies(.current)
        guard currentBodies.count == 1 else {
            throw FieldError(
                reason: currentBodies.isEmpty
                    ? "missing field `current`" : "`current` holds \(currentBodies.count) answers, not one")
        }
        let now = try current(currentBodies[0])
        var alertIDs = now.alertIDs
        var seen = Set(alertIDs)
        func add(_ ids: [String]) { for id in ids where seen.insert(id).inserted { alertIDs.append(id) } }

        var minutePages: [[OneCall.Minute]] = []
        for body in try bodies(.minute) {
            let page = try minutes(body)
            minutePages.append(page.records)
            add(page.alertIDs)
        }
        var timelines: [OneCall4.Part: [[Forecast.Step]]] = [:]
        for part in [OneCall4.Part.quarterHour, .hour] {
            for body in try bodies(part) {
                let page = try steps(body, part: part)
                timelines[part, default: []].append(page.records)
                add(page.alertIDs)
            }
        }
        var dayPages: [[OneCall4.Day]] = []
        for (number, body) in try bodies(.day).enumerated() {
            let page = try days(body, offset: number * OneCall4.recordsPerPage(.day))
            dayPages.append(page.records)
            add(page.alertIDs)
        }

        var details: [String: OneCall4.AlertDetail] = [:]
        var alerts: [OneCall.Alert] = []
        // A document written by an older version (or planted) may hold more than a poll keeps: the
        // first `OneCall4.alertsKept` are read, each as `kept()` bounds it.
        for body in (try root.optionalList("alerts") ?? []).prefix(OneCall4.alertsKept) {
            let detail = try alert(body)
            guard details[detail.id] == nil else { continue }
            answers.alerts.append(detail.kept())
            details[detail.id] = detail
            alerts.append(detail.alert)
        }

        // 3.0's rule: the hours, then the days after the last hour.
        let days = joined(dayPages) { $0.day.time }
        let daily = days.filter { $0.day.position < dailyLimit }
        let hourly = joined(timelines[.hour] ?? []) { $0.time }
        let first = now.records[0]
        var oneCall = OneCall(
            current: first.weather, dewPointCelsius: first.dewPointCelsius, uvIndex: first.uvIndex,
            minutely: joined(minutePages) { $0.time },
            hourly: Forecast(hours: hourly, days: daily.compactMap(\.step), issued: first.weather.observationTime),
            daily: daily.map(\.day), alerts: alerts)
        oneCall.gaps = root.gaps
        return OneCall4.Reading(
            answers: answers, oneCall: oneCall, quarterHours: joined(timelines[.quarterHour] ?? []) { $0.time },
            days: days, details: details, alertIDs: alertIDs)
    }

    /// Pages' records in time order, a time that two pages both hold kept once (the first page's).
    private static func joined<Record>(_ pages: [[Record]], time: (Record) -> Double) -> [Record] {
        let all = pages.joined().enumerated().sorted { (time($0.element), $0.offset) < (time($1.element), $1.offset) }
        var records: [Record] = []
        var last: Double?
        for (_, record) in all where time(record) != last {
            records.append(record)
            last = time(record)
        }
        return records
    }
}
