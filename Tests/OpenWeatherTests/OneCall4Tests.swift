import Glibc
import JSON
import TestSupport
import Testing

@testable import OpenWeather

/// The 4.0 fixtures (Tulsa, 2025-12-01 06:00 CST; the minutes are London's) and ways to change them.
enum OneCall4Fixture {
    static let wind = "4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31"
    static let redFlag = "A7F03D6C-18E2-4B95-9C4D-6E2F1A8B3C07"
    static let names: [OneCall4.Part: String] = [
        .current: "onecall4-current-tulsa.json", .minute: "onecall4-1min-london.json",
        .quarterHour: "onecall4-15min-tulsa.json",
        .hour: "onecall4-1h-tulsa.json", .day: "onecall4-1day-tulsa.json",
    ]
    static let alert = "onecall4-alert-tulsa-wind-advisory.json"

    static let bodies = names.mapValues(Fixtures.bytes)

    static func body(_ part: OneCall4.Part) -> [UInt8] { bodies[part]! }

    static func value(_ bytes: [UInt8]) -> JSONValue { try! JSONParser.parse(bytes) }

    /// Every part and the alert's detail, each fetched once.
    static func answers(_ bodies: [OneCall4.Part: [UInt8]] = [:]) -> OneCall4.Answers {
        var answers = OneCall4.Answers(alerts: [Fixtures.bytes(alert)])
        for part in OneCall4.Part.allCases {
            answers.pages[part] = [bodies[part] ?? body(part)]
            answers.fetched[part] = 1_764_590_517
        }
        return answers
    }
}

extension JSONValue {
    /// This object with `key` set (appended when new) or, for nil, removed.
    func setting(_ key: String, _ new: JSONValue?) -> JSONValue {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.key == key }) {
            if let new { members[index].value = new } else { members.remove(at: index) }
        } else if let new {
            members.append((key: key, value: new))
        }
        return .object(members)
    }

    /// This answer with record `index` of `data` changed by `change`.
    func record(_ index: Int, _ change: (JSONValue) -> JSONValue) -> JSONValue {
        guard case .array(var records)? = self["data"] else { return self }
        records[index] = change(records[index])
        return setting("data", .array(records))
    }

    var records: [JSONValue] {
        guard case .array(let records)? = self["data"] else { return [] }
        return records
    }
}

/// The message of the `.decode` error `run` throws; nil when it throws none.
func decodeFailure(_ run: () throws -> Void) -> String? {
    do {
        try run()
        return nil
    } catch {
        guard case .decode(let message)? = error as? OpenWeatherError else { return "not a decode error: \(error)" }
        return message
    }
}

@Suite struct OneCall4DecoderTests {
    typealias Fixture = OneCall4Fixture

    @Test func eachFixtureDecodes() throws {
        let current = try OneCall4Decoder.current(Fixture.body(.current))
        #expect(current.records.count == 1 && current.alertIDs == [Fixture.wind])
        #expect(current.records[0].weather.observationTime == 1_764_590_517)
        #expect(
            current.records[0].weather.temperatureCelsius == 8.2
                && current.records[0].weather.timezoneOffsetSeconds == -21600)
        #expect(current.records[0].dewPointCelsius == 2.5 && current.records[0].uvIndex == 0)

        let minutes = try OneCall4Decoder.minutes(Fixture.body(.minute))
        #expect(minutes.records.count == 60 && minutes.alertIDs.isEmpty)
        #expect(minutes.records.first?.time == 1_764_590_400 && minutes.records.last?.time == 1_764_593_940)
        #expect(
            minutes.records[17].precipitationMetersPerSecond == 0
                && minutes.records[18].precipitationMetersPerSecond == 0.09 / 3_600_000)

        let quarters = try OneCall4Decoder.steps(Fixture.body(.quarterHour), part: .quarterHour)
        #expect(quarters.records.count == 50 && quarters.alertIDs == [Fixture.wind, Fixture.redFlag])
        #expect(quarters.records.first?.time == 1_764_590_400 && quarters.records.last?.time == 1_764_634_500)
        #expect(quarters.records[0].temperatureCelsius == 8.23 && quarters.records[0].dewPointCelsius == 2.46)

        let hours = try OneCall4Decoder.steps(Fixture.body(.hour), part: .hour)
        #expect(hours.records.count == 20 && hours.alertIDs == [Fixture.wind, Fixture.redFlag])
        #expect(hours.records.first?.time == 1_764_590_400 && hours.records.last?.time == 1_764_658_800)

        let days = try OneCall4Decoder.days(Fixture.body(.day))
        #expect(days.records.count == 10 && days.alertIDs == [Fixture.wind, Fixture.redFlag])
        #expect(
            days.records.first?.day
                == OneCall.Day(time: 1_764_612_000, temperatureMinCelsius: 7.6, temperatureMaxCelsius: 20.1))
        #expect(days.records.last?.day.time == 1_765_389_600)
        #expect(days.records[0].step?.temperatureCelsius == 16.4 && days.records[0].step?.dayMaximumCelsius == 20.1)
        let dayOne = Fixture.value(Fixture.body(.day)).records[0]["alerts"]
        #expect(
            dayOne == .array([.string(Fixture.wind), .string(Fixture.redFlag)]),
            "the Red Flag Warning is listed in day 1")

        let alert = try OneCall4Decoder.alert(Fixtures.bytes(Fixture.alert))
        #expect(alert.id == Fixture.wind)
        #expect(
            alert.alert
                == OneCall.Alert(
                    sender: "NWS Tulsa (Eastern Oklahoma)", event: "Wind Advisory", start: 1_764_579_600,
                    end: 1_764_633_600))
        #expect(
            alert.description.hasPrefix(
                "...WIND ADVISORY IN EFFECT UNTIL 6 PM CST THIS EVENING...\n* WHAT...South winds"))
    }

    /// Issue 49: a number too large to hold in an optional field (`"humidity": 1e999`) failed the whole
    /// answer; now only that field is gone (FieldPolicyTests checks it is noted, on every source).
    @Test func aNumberTooLargeInAnOptionalFieldTakesOnlyThatField() throws {
        let text = String(decoding: Fixture.body(.current), as: UTF8.self)
        #expect(text.contains("\"humidity\":67"))
        let body = Array(text.replacing("\"humidity\":67", with: "\"humidity\":1e999").utf8)
        let weather = try OneCall4Decoder.current(body).records[0].weather
        #expect(weather.humidityRatio == nil && weather.temperatureCelsius == 8.2)
    }

    /// 4.0 gives `rain.1h` in mm/h: a step holds the rate over its own length.
    @Test func aStepsRainIsTheRateOverItsLength() throws {
        func body(_ part: OneCall4.Part) -> [UInt8] {
            Fixture.value(Fixture.body(part)).record(0) {
                $0.setting("rain", .object([(key: "1h", value: .number(2))]))
            }.encoded()
        }
        #expect(try OneCall4Decoder.steps(body(.hour), part: .hour).records[0].rainMeters == 0.002)
        #expect(try OneCall4Decoder.steps(body(.quarterHour), part: .quarterHour).records[0].rainMeters == 0.0005)
        #expect(
            try OneCall4Decoder.steps(body(.quarterHour), part: .quarterHour).records[1].rainMeters == 0,
            "no `rain`: dry")
    }

    @Test func aDaysRainIsANumberOrAnObject() throws {
        func page(_ rain: JSONValue?, snow: JSONValue? = nil) throws(OpenWeatherError) -> OneCall4.Page<OneCall4.Day> {
            let body = Fixture.value(Fixture.body(.day)).record(0) { $0.setting("rain", rain).setting("snow", snow) }
            return try OneCall4Decoder.days(body.encoded())
        }
        func day(_ rain: JSONValue?, snow: JSONValue? = nil) throws(OpenWeatherError) -> Forecast.Step? {
            try page(rain, snow: snow).records[0].step
        }
        #expect(try day(.number(3.2))?.rainMeters == 0.0032)
        #expect(try day(.object([(key: "1h", value: .number(3.2))]))?.rainMeters == 0.0032)
        #expect(try day(nil)?.rainMeters == 0)
        #expect(try day(nil, snow: .object([(key: "1h", value: .number(12))]))?.snowMeters == 0.012)
        // Unusable: that day's rain is unknown (not 0), the day and its other values stay.
        #expect(try day(.object([]))?.rainMeters == nil)
        #expect(try day(.string("3.2"))?.rainMeters == nil && day(.string("3.2"))?.temperatureCelsius == 16.4)
        #expect(try day(.object([(key: "1h", value: .number(-1))]))?.rainMeters == nil)
    }

    @Test func alertsAreAbsentEmptyOrIDs() throws {
        func ids(_ alerts: JSONValue?) throws(OpenWeatherError) -> [String] {
            try OneCall4Decoder.current(
                Fixture.value(Fixture.body(.current)).record(0) { $0.setting("alerts", alerts) }.encoded()
            ).alertIDs
        }
        #expect(try ids(nil).isEmpty && ids(.array([])).isEmpty && ids(.null).isEmpty)
        #expect(
            try ids(.array([.string("b"), .string("a"), .string("b")])) == ["b", "a"], "first seen first, no repeats")
        // Not IDs: left out (noted), the record and the rest kept.
        #expect(try ids(.string("a")) == [])
        #expect(try ids(.array([.string("a"), .number(1)])) == ["a"])
    }

    @Test func aDescriptionIsAStringOrAList() throws {
        func description(_ value: JSONValue?) throws(OpenWeatherError) -> String {
            try OneCall4Decoder.alert(
                Fixture.value(Fixtures.bytes(Fixture.alert)).setting("description", value).encoded()
            ).description
        }
        #expect(try description(.string("one\r\ntwo\u{1B}")) == "one\ntwo")
        #expect(try description(.array([.string("one"), .string("two")])) == "one\ntwo")
        #expect(
            try description(
                .array([
                    .object([(key: "language", value: .string("en")), (key: "description", value: .string("one"))]),
                    .object([(key: "text", value: .string("two"))]),
                ])) == "one\ntwo")
        #expect(try description(nil) == "" && description(.array([])) == "")
        #expect(
            decodeFailure { _ = try description(.number(1)) } == "`description` is a number, not a string or a list")
        #expect(
            decodeFailure { _ = try description(.array([.object([])])) }
                == "`description[0]` has no `description` or `text` string")
        #expect(
            decodeFailure { _ = try description(.array([.string("a"), .null])) }
                == "`description[1]` is null, not a string or an object")
        #expect(
            decodeFailure { _ = try description(.array([.object([(key: "text", value: .number(1))])])) }
                == "`description[0].text` is a number, not a string")
        #expect(
            decodeFailure { _ = try OneCall4Decoder.alert(Array(#"{"id":"a","event":"e","start":1}"#.utf8)) }
                == "missing field `end`")
        #expect(
            try OneCall4Decoder.alert(Array(#"{"id":"a","event":"e","start":1,"end":2}"#.utf8)).alert.sender == "",
            "no sender_name")
    }

    /// A record without what it needs is skipped, the others used; only `current`'s one record is required.
    @Test func aBadRecordIsSkippedAndNamesItsPath() throws {
        let hours = Fixture.value(Fixture.body(.hour))
        let humid = try OneCall4Decoder.steps(
            hours.record(3) { $0.setting("humidity", .number(150)) }.encoded(), part: .hour)
        #expect(
            humid.records.count == 20 && humid.records[3].humidityRatio == nil, "an optional field: the record stays")
        let hot = try OneCall4Decoder.steps(hours.record(3) { $0.setting("temp", .number(150)) }.encoded(), part: .hour)
        #expect(hot.records.count == 19)
        let again = try OneCall4Decoder.steps(
            hours.record(1) { $0.setting("dt", .number(1_764_590_400)) }.encoded(), part: .hour)
        #expect(again.records.count == 19 && again.records[1].time == 1_764_597_600)
        let days = Fixture.value(Fixture.body(.day))
        #expect(try OneCall4Decoder.days(days.record(2) { $0.setting("dt", .number(1)) }.encoded()).records.count == 9)
        let minutes = Fixture.value(Fixture.body(.minute))
        #expect(
            try OneCall4Decoder.minutes(minutes.record(5) { $0.setting("precipitation", nil) }.encoded()).records.count
                == 59)
        let current = Fixture.value(Fixture.body(.current))
        #expect(
            decodeFailure {
                _ = try OneCall4Decoder.current(
                    current.setting("data", .array(current.records + current.records)).encoded())
            }
                == "`data` holds 2 records; the current weather is one")
        #expect(
            decodeFailure { _ = try OneCall4Decoder.current(current.setting("data", .array([])).encoded()) }
                == "`data` holds 0 records; the current weather is one")
        #expect(
            decodeFailure { _ = try OneCall4Decoder.current(current.setting("data", nil).encoded()) }
                == "missing field `data`")
        #expect(
            decodeFailure { _ = try OneCall4Decoder.current(current.record(0) { $0.setting("temp", nil) }.encoded()) }
                == "`data` holds no usable record: missing field `data[0].temp`")
        // Inside a document, the gap says which part it is in.
        var answers = Fixture.answers()
        answers.pages[.hour]?.append(
            hours.record(3) { $0.setting("humidity", .number(150)).setting("temp", nil) }.encoded())
        let reading = try OneCall4Decoder.decode(document: answers.document())
        #expect(
            reading.oneCall.gaps.skipped == [
                .init(field: "1h[].data", reason: "missing field `1h[1].data[3].temp`", count: 1)
            ])
        answers.pages[.current] = [current.record(0) { $0.setting("temp", nil) }.encoded()]
        #expect(
            decodeFailure { _ = try OneCall4Decoder.decode(document: answers.document()) }
                == "`current[0].data` holds no usable record: missing field `current[0].data[0].temp`")
    }

    @Test func theDocumentRoundTripsAndKeepsNoLink() throws {
        let document = Fixture.answers().document()
        let text = String(decoding: document, as: UTF8.self)
        #expect(
            !text.contains("deadbeef") && !text.contains("appid") && !text.contains("\"next\"")
                && !text.contains("\"prev\""))
        #expect(
            text.hasPrefix(
                #"""
                {"fetched":{"current":1764590517,"1min":1764590517,"15min":1764590517,"1h":1764590517,\#
                "1day":1764590517},"current":[{"lat":36.154,
                """#
            ))
        let reading = try OneCall4Decoder.decode(document: document)
        #expect(reading.answers.document() == document)
        #expect(reading.answers.fetched[.hour] == 1_764_590_517)
        #expect(try OneCall4Decoder.decode(document: reading.answers.document()).oneCall == reading.oneCall)
        #expect(reading.alertIDs == [Fixture.wind, Fixture.redFlag])
        #expect(
            reading.details.keys.sorted() == [Fixture.wind]
                && reading.details[Fixture.wind]?.alert.event == "Wind Advisory")
        #expect(reading.quarterHours.count == 50 && reading.days.count == 10)
        #expect(reading.oneCall.minutely.count == 60 && reading.oneCall.daily.count == 8)
        #expect(
            reading.oneCall.hourly.steps.count == 20 + 7,
            "20 hours, then the days after the last hour among the first 8")
        #expect(reading.oneCall.hourly.issued == 1_764_590_517 && reading.oneCall.hourly.steps[0].seconds == 3600)
    }

    @Test func missingPartsAreEmpty() throws {
        let answers = OneCall4.Answers(pages: [.current: [Fixture.body(.current)]], fetched: [.current: 5])
        let reading = try OneCall4Decoder.decode(document: answers.document())
        #expect(
            reading.oneCall.minutely.isEmpty && reading.oneCall.hourly.steps.isEmpty && reading.oneCall.daily.isEmpty)
        #expect(reading.oneCall.alerts.isEmpty && reading.quarterHours.isEmpty && reading.details.isEmpty)
        #expect(reading.alertIDs == [Fixture.wind], "an ID whose detail is not there is still listed")
        #expect(reading.oneCall.current.temperatureCelsius == 8.2)
        #expect(
            decodeFailure {
                _ = try OneCall4Decoder.decode(
                    document: OneCall4.Answers(pages: [.hour: [Fixture.body(.hour)]]).document())
            }
                == "missing field `current`")
        #expect(
            decodeFailure { _ = try OneCall4Decoder.decode(document: Array("[]".utf8)) }
                == "the body is a list, not an object")
    }

    /// The document puts an answer two levels down: one nested deeper than the parser then reads is left
    /// out, so the document always reads back (here the current answer, with an unread field nested deep).
    @Test func anAnswerTooDeepForTheDocumentIsLeftOut() throws {
        func answers(depth: Int) -> OneCall4.Answers {
            var nested = JSONValue.array([])
            for _ in 1..<(depth - 3) { nested = .array([nested]) }
            let current = Fixture.value(Fixture.body(.current)).record(0) { $0.setting("x", nested) }
            return OneCall4.Answers(pages: [.current: [current.encoded()]])
        }
        #expect(
            try OneCall4Decoder.decode(document: answers(depth: JSONParser.maxDepth - 2).document()).oneCall.current
                .temperatureCelsius == 8.2)
        let deeper = answers(depth: JSONParser.maxDepth - 1).document()
        #expect((try? JSONParser.parse(deeper)) != nil)
        #expect(decodeFailure { _ = try OneCall4Decoder.decode(document: deeper) } == "missing field `current`")
    }

    /// Pages overlap when a later one is asked from an earlier `start`: joined in time order, each time once.
    @Test func pagesJoinInTimeOrder() throws {
        let hours = Fixture.value(Fixture.body(.hour))
        let later = hours.setting(
            "data", .array(Array(hours.records[10...]) + [hours.records[19].setting("dt", .number(1_764_662_400))]))
        let earlier = hours.setting("data", .array(Array(hours.records[..<12])))
        let reading = try OneCall4Decoder.decode(
            document: Fixture.answers().with(.hour, [later.encoded(), earlier.encoded()]).document())
        let times = reading.oneCall.hourly.steps.prefix(21).map(\.time)
        #expect(times == (0...20).map { 1_764_590_400 + Double($0) * 3600 })
        #expect(
            reading.oneCall.hourly.steps[20].temperatureCelsius == reading.oneCall.hourly.steps[19].temperatureCelsius,
            "the copy of hour 19")
        #expect(reading.oneCall.hourly.steps.count == 21 + 7, "then the days after the last hour")
    }

    @Test func anAlertIDGoesIntoAPathOnlyWhenHarmless() {
        #expect(
            OneCall4.alertRequest(id: Fixture.wind)
                == APIRequest(path: "/data/4.0/onecall/alert/\(Fixture.wind)", query: []))
        #expect(
            OneCall4.alertRequest(id: "a_b-9") != nil
                && OneCall4.alertRequest(id: String(repeating: "a", count: 64)) != nil)
        for refused in ["../x", "a b", String(repeating: "a", count: 65), "", "a/b", "a?b", "a%2F", "é", "a\u{0}"] {
            #expect(OneCall4.alertRequest(id: refused) == nil, "\(refused)")
        }
    }

    @Test func requestTargets() {
        let current = OneCall4.request(.current, latitude: 36.154, longitude: -95.9928, language: "en")
        #expect(current.path == "/data/4.0/onecall/current")
        #expect(
            current.query == [
                .init("lat", "36.154"), .init("lon", "-95.9928"), .init("units", "metric"), .init("lang", "en"),
            ])
        for part in OneCall4.Part.allCases where part != .current {
            let request = OneCall4.request(part, latitude: 1, longitude: 2, language: "de")
            #expect(request.path == "/data/4.0/onecall/timeline/\(part.rawValue)")
            #expect(
                request.query.map(\.name) == ["lat", "lon", "units", "lang"],
                "no start unless given, never exclude or cnt")
        }
        let paged = OneCall4.request(.hour, latitude: 1, longitude: 2, language: "en", start: 1_764_662_400.9)
        #expect(paged.query.last == .init("start", "1764662400"))
        #expect(
            !OneCall4.request(.hour, latitude: 1, longitude: 2, language: "en", start: .nan).query.contains {
                $0.name == "start"
            })
        #expect(OneCall4.Part.allCases.map(OneCall4.recordsPerPage) == [1, 60, 50, 20, 10])
        #expect(OneCall4.Part.allCases.map(OneCall4.stepSeconds) == [0, 60, 900, 3600, 86400])
    }
}

extension OneCall4.Answers {
    func with(_ part: OneCall4.Part, _ bodies: [[UInt8]]) -> Self {
        var answers = self
        answers.pages[part] = bodies
        return answers
    }
}

/// The issue's "done when" rests on this: the same data through 4.0 gives what 3.0 gives.
@Suite struct OneCall4EquivalenceTests {
    typealias Fixture = OneCall4Fixture

    /// A 3.0 answer from the 4.0 fixtures: `current`'s record and envelope, the minutes, the hours (rain.1h as
    /// is), the first 8 days (3.0 gives 8), and the alert's detail as 3.0 writes an alert.
    static func oneCall3(_ bodies: [OneCall4.Part: JSONValue]) -> [UInt8] {
        let current = bodies[.current]!
        var members: [(key: String, value: JSONValue)] = ["lat", "lon", "timezone", "timezone_offset"].map {
            (key: $0, value: current[$0]!)
        }
        members.append((key: "current", value: current.records[0].setting("alerts", nil)))
        members.append((key: "minutely", value: .array(bodies[.minute]!.records)))
        members.append((key: "hourly", value: .array(bodies[.hour]!.records)))
        members.append((key: "daily", value: .array(Array(bodies[.day]!.records.prefix(8)))))
        let detail = Fixture.value(Fixtures.bytes(Fixture.alert))
        members.append(
            (
                key: "alerts",
                value: .array([.object(["sender_name", "event", "start", "end"].map { (key: $0, value: detail[$0]!) })])
            ))
        return JSONValue.object(members).encoded()
    }

    static func check(_ bodies: [OneCall4.Part: JSONValue], _ daily: [OneCall4.Part: JSONValue] = [:]) throws {
        let three = try OneCallDecoder.decode(oneCall3(bodies.merging(daily) { $1 }))
        let four = try OneCall4Decoder.decode(document: Fixture.answers(bodies.mapValues { $0.encoded() }).document())
        #expect(four.oneCall == three)
        #expect(
            three.hourly.steps.count == 27 && three.daily.count == 8 && three.minutely.count == 60
                && three.alerts.count == 1)
    }

    static var fixtures: [OneCall4.Part: JSONValue] {
        Dictionary(uniqueKeysWithValues: OneCall4.Part.allCases.map { ($0, Fixture.value(Fixture.body($0))) })
    }

    @Test func theFixturesGiveWhat30Gives() throws {
        try Self.check(Self.fixtures)
    }

    /// With rain and snow in an hour and in a day after the hours: 3.0's day total is a number, 4.0's an object.
    @Test func withRainAndSnowToo() throws {
        var bodies = Self.fixtures
        let amount = { (value: Double) in JSONValue.object([(key: "1h", value: .number(value))]) }
        bodies[.hour] = bodies[.hour]!.record(5) { $0.setting("rain", amount(1.7)).setting("snow", amount(0.3)) }
        let days4 = bodies[.day]!.record(4) { $0.setting("rain", amount(3.5)).setting("snow", amount(8)) }
        let days3 = bodies[.day]!.record(4) { $0.setting("rain", .number(3.5)).setting("snow", .number(8)) }
        bodies[.day] = days4
        let three = try OneCallDecoder.decode(Self.oneCall3(bodies.merging([.day: days3]) { $1 }))
        let four = try OneCall4Decoder.decode(document: Fixture.answers(bodies.mapValues { $0.encoded() }).document())
        #expect(four.oneCall == three)
        #expect(
            three.hourly.steps[5].rainMeters == 0.0017
                && three.hourly.steps.contains { $0.rainMeters == 0.0035 && $0.snowMeters == 0.008 })
    }
}

/// Mutated fixtures: every decoder returns or throws, never traps or hangs.
@Suite struct OneCall4FuzzTests {
    typealias Fixture = OneCall4Fixture
    /// A tenth of the rounds in a sanitizer's run (CI sets its options): there the suite looks for memory
    /// and race errors, and its full rounds, seven times slower, held both cores for a minute and a half
    /// while end-to-end tests with real deadlines ran; the plain `swift test` runs them all.
    static let divisor = getenv("TSAN_OPTIONS") != nil || getenv("ASAN_OPTIONS") != nil ? 10 : 1
    static let values = [
        #""x""#, "null", "{}", "[]", "true", "-1", "1e11", "0", #"["a"]"#, #"{"1h":5}"#, "[[[[[[[[1]]]]]]]]",
        #"{"dt":1}"#,
    ]
    static let huge = [
        "1e308", "99999999999999999999999999", "-1e-400", "1.7976931348623157e309", "123456789012345678901234567890.5",
    ]

    static func mutate(_ bytes: inout [UInt8], using random: inout SeededGenerator) {
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            guard !bytes.isEmpty else {
                bytes = Array("{}".utf8)
                continue
            }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0: bytes.removeSubrange(at...)
            case 1: bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 2: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 3: bytes.insert(contentsOf: Array(huge.randomElement(using: &random)!.utf8), at: at)
            case 4:
                let depth = Int.random(in: 1...300, using: &random)
                let open: UInt8 = Bool.random(using: &random) ? UInt8(ascii: "[") : UInt8(ascii: "{")
                bytes.insert(contentsOf: [UInt8](repeating: open, count: depth), at: at)
            case 5:
                // A value of another type after a key.
                guard let colon = bytes[at...].firstIndex(of: UInt8(ascii: ":")) else { continue }
                let end =
                    bytes[(colon + 1)...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") }
                    ?? bytes.count
                bytes.replaceSubrange((colon + 1)..<end, with: Array(values.randomElement(using: &random)!.utf8))
            case 6: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &random)))
            default:
                let end = min(bytes.count, at + Int.random(in: 1...200, using: &random))
                bytes.insert(contentsOf: Array(bytes[at..<end]), at: end)
            }
        }
    }

    static func decode(_ part: OneCall4.Part?, _ bytes: [UInt8]) -> Bool {
        do {
            switch part {
            case .current: _ = try OneCall4Decoder.current(bytes)
            case .minute: _ = try OneCall4Decoder.minutes(bytes)
            case .quarterHour, .hour: _ = try OneCall4Decoder.steps(bytes, part: part!)
            case .day: _ = try OneCall4Decoder.days(bytes)
            case nil: _ = try OneCall4Decoder.alert(bytes)
            }
            return true
        } catch {
            return false
        }
    }

    @Test(arguments: [OneCall4.Part.current, .minute, .quarterHour, .hour, .day, nil])
    func mutatedAnswersReturnOrThrow(part: OneCall4.Part?) {
        var random = SeededGenerator(seed: 0x0C4_0000 + UInt64(OneCall4.Part.allCases.firstIndex { $0 == part } ?? 9))
        let original = part.map(Fixture.body) ?? Fixtures.bytes(Fixture.alert)
        var outcomes = (decoded: 0, refused: 0)
        for _ in 0..<(2000 / Self.divisor) {
            var bytes = original
            Self.mutate(&bytes, using: &random)
            if Self.decode(part, bytes) { outcomes.decoded += 1 } else { outcomes.refused += 1 }
        }
        #expect(outcomes.refused > 0 && outcomes.decoded > 0, "\(outcomes)")
    }

    /// Mutated answers kept in a document, and mutated documents: `document()` always writes JSON the
    /// parser reads, and decoding it returns or throws.
    @Test func mutatedDocumentsReturnOrThrow() throws {
        var random = SeededGenerator(seed: 0x0C4_D0C)
        let document = Fixture.answers().document()
        var outcomes = (decoded: 0, refused: 0)
        for round in 0..<(1000 / Self.divisor) {
            var bytes: [UInt8]
            if round % 2 == 0 {
                let part = OneCall4.Part.allCases.randomElement(using: &random)!
                var body = Fixture.body(part)
                Self.mutate(&body, using: &random)
                bytes = Fixture.answers([part: body]).document()
                #expect((try? JSONParser.parse(bytes)) != nil)
            } else {
                bytes = document
                Self.mutate(&bytes, using: &random)
            }
            if (try? OneCall4Decoder.decode(document: bytes)) != nil {
                outcomes.decoded += 1
            } else {
                outcomes.refused += 1
            }
        }
        #expect(outcomes.refused > 0 && outcomes.decoded > 0, "\(outcomes)")
    }
}
