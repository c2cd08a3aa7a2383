import JSON
import OpenWeather
import TestSupport
import Testing

@testable import Simulator

/// One Call 4.0's parts: their shapes, pages and links, and the same values as 3.0 at the same
/// times; at a fixed now (the fixtures' Tulsa morning), so no hour turns between two answers.
@Suite struct OneCall4ModelTests {
    static let now = 1_764_590_517.0
    static let (latitude, longitude) = (36.154, -95.9928)
    static let caller = OneCall4JSON.Caller(base: "http://sim", key: "secret-key")

    static func page(
        _ timeline: OneCall4JSON.Timeline, start: Double? = nil, at now: Double = now, alwaysAlert: Bool = false
    ) throws -> JSONValue {
        try JSONParser.parse(
            OneCall4JSON.page(
                timeline, latitude: latitude, longitude: longitude, at: now, start: start, alwaysAlert: alwaysAlert,
                caller: caller))
    }

    static func threeO(at now: Double = now) throws -> JSONValue {
        try JSONParser.parse(OneCallJSON.render(latitude: latitude, longitude: longitude, at: now))
    }

    @Test func eachPartHasItsShape() throws {
        let hour = (Self.now / 3600).rounded(.down) * 3600
        for (timeline, step, first) in [
            (OneCall4JSON.Timeline.quarterHour, 900.0, (Self.now / 900).rounded(.down) * 900), (.hour, 3600, hour),
            (.day, 86_400, .nan),
        ] {
            let page = try Self.page(timeline)
            #expect(page["lat"]?.number == Self.latitude && page["lon"]?.number == Self.longitude)
            #expect(page["timezone_offset"]?.number == -21_600)
            let times = page["data"]?.list.compactMap { $0["dt"]?.number } ?? []
            #expect(times.count == timeline.count)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == step })
            if timeline == .day {
                #expect(
                    ((times[0] - 21_600).truncatingRemainder(dividingBy: 86_400) + 86_400).truncatingRemainder(
                        dividingBy: 86_400) == 43_200)
                #expect(times[0] <= Self.now + 43_200 && times[0] > Self.now - 43_200, "the local noon of today")
            } else {
                #expect(times[0] == first)
            }
            #expect(
                (page["prev"] == nil) == (timeline == .quarterHour),
                "history for hours and days, none for quarter hours")
            #expect(page["next"] != nil)
        }
        let day = try #require(try Self.page(.day)["data"]?.list.first)
        for key in [
            "sunrise", "sunset", "moonrise", "moonset", "moon_phase", "pressure", "humidity", "dew_point", "wind_speed",
            "clouds", "pop", "uvi",
        ] {
            #expect(day[key]?.number != nil, "\(key)")
        }
        #expect(["day", "min", "max", "night", "eve", "morn"].allSatisfy { day["temp"]?[$0]?.number != nil })
        #expect(["day", "night", "eve", "morn"].allSatisfy { day["feels_like"]?[$0]?.number != nil })

        let current = try JSONParser.parse(
            OneCall4JSON.current(latitude: Self.latitude, longitude: Self.longitude, at: Self.now, alwaysAlert: false))
        #expect(current["data"]?.list.count == 1)
        #expect(current["data"]?.list.first?["dt"]?.number == (Self.now / 60).rounded(.down) * 60)
        let minutes = try JSONParser.parse(
            OneCall4JSON.minutes(
                latitude: Self.latitude, longitude: Self.longitude, at: Self.now, alwaysAlert: false, rainSoon: true))
        let minute = minutes["data"]?.list ?? []
        #expect(minute.count == 60 && minute.first?["dt"]?.number == (Self.now / 60).rounded(.down) * 60)
        #expect(
            minute.compactMap { $0["precipitation"]?.number } == Array(repeating: 0, count: 10)
                + Array(repeating: 2, count: 50), "rain=soon as 3.0")
    }

    /// Current, minutes, hours and days are 3.0's at the same times; `rain.1h` stays mm/h.
    @Test func theSameValuesAsOneCall3() throws {
        for now in [Self.now, Self.now + 7 * 3600 + 1234, Self.now + 40 * 86_400] {
            let old = try Self.threeO(at: now)
            let current = try JSONParser.parse(
                OneCall4JSON.current(latitude: Self.latitude, longitude: Self.longitude, at: now, alwaysAlert: false))
            #expect(current["data"]?.list.first?.without("alerts") == old["current"])
            let minutes = try JSONParser.parse(
                OneCall4JSON.minutes(
                    latitude: Self.latitude, longitude: Self.longitude, at: now, alwaysAlert: false, rainSoon: false))
            #expect(minutes["data"]?.list.map { $0.without("alerts") } == Array(old["minutely"]?.list.prefix(60) ?? []))

            var hours: [JSONValue] = []
            var start: Double? = nil
            repeat {
                let page = try Self.page(.hour, start: start, at: now)
                hours += page["data"]?.list.map { $0.without("alerts") } ?? []
                start = page["next"].map { Self.start(of: $0) }
            } while start != nil
            #expect(hours == old["hourly"]?.list, "from now, 3.0's 48 hours")
            // Before the hour holding now, what `timemachine` tells of those hours: observed, not forecast.
            for record in try Self.page(.hour, start: now - 20 * 3600, at: now)["data"]?.list ?? [] {
                let time = try #require(record["dt"]?.number)
                let past = try JSONParser.parse(
                    OneCallJSON.timemachine(latitude: Self.latitude, longitude: Self.longitude, at: time))
                #expect(
                    record.without("alerts").without("pop")
                        == past["data"]?.list.first?.without("sunrise").without("sunset"))
            }
            let days = try Self.page(.day, at: now)["data"]?.list ?? []
            for (new, old) in zip(days, old["daily"]?.list ?? []) {
                for key in [
                    "dt", "pressure", "humidity", "dew_point", "wind_speed", "wind_deg", "wind_gust", "weather",
                    "clouds", "pop", "uvi",
                ] {
                    #expect(new[key] == old[key], "\(key)")
                }
                #expect(["day", "min", "max"].allSatisfy { new["temp"]?[$0] == old["temp"]?[$0] })
                #expect(new["rain"] ?? .number(0) == old["rain"])
            }
        }
    }

    /// Every page of quarter hours, chained by `start`: on the hour the hour's record, between
    /// hours each value between theirs; the last at the last hour of the 1h timeline.
    @Test func quarterHoursLieBetweenTheHours() throws {
        var hours: [Double: JSONValue] = [:]
        var start: Double? = nil
        repeat {
            let page = try Self.page(.hour, start: start)
            for record in page["data"]?.list ?? [] { hours[record["dt"]!.number!] = record }
            start = page["next"].map { Self.start(of: $0) }
        } while start != nil
        var quarters: [JSONValue] = []
        start = nil
        repeat {
            let page = try Self.page(.quarterHour, start: start)
            let records = page["data"]?.list ?? []
            if let next = page["next"] {
                #expect(Self.start(of: next) == records[0]["dt"]!.number! + 50 * 900)
                #expect(records.count == 50)
            }
            quarters += records
            start = page["next"].map { Self.start(of: $0) }
        } while start != nil
        let lastHour = (Self.now / 3600).rounded(.down) * 3600 + 47 * 3600
        #expect(quarters.last?["dt"]?.number == lastHour)
        #expect(quarters.count == Int((lastHour - (Self.now / 900).rounded(.down) * 900) / 900) + 1)
        for quarter in quarters {
            let time = quarter["dt"]!.number!
            let hour = (time / 3600).rounded(.down) * 3600
            let before = try #require(hours[hour])
            if time == hour {
                #expect(quarter == before)
                continue
            }
            let after = try #require(hours[hour + 3600])
            for key in ["temp", "feels_like", "pressure", "humidity", "dew_point", "uvi", "wind_speed", "wind_gust"] {
                let (value, low, high) = (quarter[key]!.number!, before[key]!.number!, after[key]!.number!)
                #expect(value >= min(low, high) && value <= max(low, high), "\(key) at \(time)")
            }
        }
    }

    /// `prev`/`next` lead a page back and on from the first record; none where nothing lies that way;
    /// nothing beyond the reach.
    @Test func pagesEndWhereTheTimelineEnds() throws {
        let hours = try Self.page(.hour, start: Self.now - 3 * 86_400 + 1234)
        let first = try #require(hours["data"]?.list.first?["dt"]?.number)
        #expect(first == ((Self.now - 3 * 86_400 + 1234) / 3600).rounded(.down) * 3600)
        #expect(
            Self.start(of: hours["prev"]!) == first - 20 * 3600 && Self.start(of: hours["next"]!) == first + 20 * 3600)
        let oldest = try Self.page(.hour, start: OneCallJSON.firstHistory)
        #expect(oldest["prev"] == nil && oldest["next"] != nil && oldest["data"]?.list.count == 20)
        #expect(try Self.page(.hour, start: OneCallJSON.firstHistory - 3 * 3600)["data"]?.list.count == 17)
        #expect(try Self.page(.hour, start: Self.now + 49 * 3600)["data"]?.list == [])
        #expect(try Self.page(.quarterHour, start: Self.now + 49 * 3600)["data"]?.list == [])

        let days = try Self.page(.day)
        let today = try #require(days["data"]?.list.first?["dt"]?.number)
        #expect(
            Self.start(of: days["prev"]!) == today - 10 * 86_400 && Self.start(of: days["next"]!) == today + 10 * 86_400
        )
        #expect(
            try Self.page(.day, start: Self.start(of: days["next"]!))["data"]?.list.first?["dt"]?.number == today + 10
                * 86_400)
        let lastDays = try Self.page(.day, start: Self.now + 545 * 86_400)
        #expect(lastDays["next"] == nil && (1...10).contains(lastDays["data"]?.list.count ?? 0))
        #expect(try Self.page(.day, start: Self.now + 2 * 365 * 86_400)["data"]?.list == [])
        #expect(Endpoint.oneCall4Hours.answer(["start": "soon"], latitude: 1, longitude: 2, at: Self.now).status == 400)
    }

    /// An ID in a record only while its alert is valid (the key absent otherwise); the same alert
    /// the same ID; the detail tells 3.0's alert; an ID of no alert is unknown.
    @Test func alertsListedWhileValid() throws {
        var seen: [String: Double] = [:]
        var start: Double? = Self.now - 10 * 86_400
        for _ in 0..<12 {
            let page = try Self.page(.hour, start: start)
            for record in page["data"]?.list ?? [] {
                let time = record["dt"]!.number!
                let alert = OneCallJSON.alert(latitude: Self.latitude, longitude: Self.longitude, at: time)
                #expect((record["alerts"] == nil) == (alert == nil))
                guard let alert, let ids = record["alerts"]?.list else { continue }
                #expect(ids.count == 1 && alert.start <= time && time < alert.end)
                let id = try #require(ids.first?.text)
                #expect(seen[id, default: alert.start] == alert.start, "one ID, one alert")
                seen[id] = alert.start
                let detail = try JSONParser.parse(try #require(OneCall4JSON.alert(id: id, alwaysAlert: false)))
                #expect(
                    detail["id"]?.text == id && detail["event"]?.text == alert.event
                        && detail["sender_name"]?.text == OneCallJSON.sender)
                #expect(detail["start"]?.number == alert.start && detail["end"]?.number == alert.end)
                #expect(detail["description"]?.text?.contains("\n") == true)
            }
            start = page["next"].map { Self.start(of: $0) }
        }
        #expect(seen.count > 3 && Set(seen.values).count == seen.count)
        // A block without an alert has no detail, unless every block has one.
        let quiet = try #require(
            stride(from: Self.now, to: Self.now + 30 * 86_400, by: 21_600).first {
                OneCallJSON.alert(latitude: Self.latitude, longitude: Self.longitude, at: $0) == nil
            })
        let start6h = (quiet / 21_600).rounded(.down) * 21_600
        let id = try #require(AlertID.make(latitude: Self.latitude, longitude: Self.longitude, start: start6h))
        #expect(OneCall4JSON.alert(id: id, alwaysAlert: false) == nil)
        #expect(OneCall4JSON.alert(id: id, alwaysAlert: true) != nil)
        #expect(OneCall4JSON.alert(id: "4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31", alwaysAlert: true) == nil)
        #expect(OneCall4JSON.alert(id: "not-an-id", alwaysAlert: true) == nil)
    }

    static func start(of link: JSONValue) -> Double {
        let query = link.text?.split(separator: "?").last ?? ""
        return query.split(separator: "&").first { $0.hasPrefix("start=") }.flatMap { Double($0.dropFirst(6)) } ?? .nan
    }
}

extension JSONValue {
    var number: Double? { if case .number(let value) = self { value } else { nil } }
    var text: String? { if case .string(let value) = self { value } else { nil } }
    var list: [JSONValue] { if case .array(let values) = self { values } else { [] } }

    func without(_ key: String) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { $0.key != key })
    }
}
