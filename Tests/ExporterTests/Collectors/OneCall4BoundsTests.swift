import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// What One Call 4.0 keeps from outside data is bounded whatever the upstream sends (issue 27): 16
/// new alert IDs a poll with 200 KB texts and an `end` in 2100 once took the state file to 51 MB
/// and the resident memory to 364 MB; 36,000 IDs in one record cost 8.2 s of CPU a poll.
@Suite struct OneCall4BoundsTests {
    static let tulsa = OneCall4Tests.tulsa
    static let now = OneCall4Tests.now
    static let listed = "\"alerts\":[\"4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31\"]"

    /// The current answer with `ids` as its record's alerts.
    static func current(listing ids: [String]) -> [UInt8] {
        let text = String(decoding: Fixture.bytes("onecall4-current-tulsa.json"), as: UTF8.self)
        precondition(text.contains(listed))
        return Array(
            text.replacing(listed, with: "\"alerts\":[" + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]").utf8)
    }

    /// An alert's detail with a text of `bytes` (of €, three bytes each, so a cut at 4 KiB falls
    /// inside one), in force until 2100.
    static func detail(_ id: String, bytes: Int = 200_000) -> [UInt8] {
        let text = String(repeating: "€", count: bytes / 3)
        return Array(
            "{\"id\":\"\(id)\",\"sender_name\":\"NWS\",\"event\":\"Flood\",\"start\":\(Int(now)),\"end\":4102444800,\"description\":\"\(text)\"}"
                .utf8)
    }

    /// Polls every 10 minutes as the poller does, each reading the last one back from its body (as a
    /// restart would from the state file), the upstream listing 16 new IDs each time with 200 KB texts.
    @Test func endlessNewAlertsKeepTheReadingAndItsBodyBounded() throws {
        let source = OneCall4Source()
        let poll = Locked(0)
        let asked = Locked<[String]>([])
        func ids(_ round: Int) -> [String] { (0..<16).map { "R\(round)-\($0)" } }
        func get(_ request: APIRequest) throws(OpenWeatherError) -> [UInt8] {
            asked.withLock { $0.append(request.path) }
            if request.path == "/data/4.0/onecall/current" { return Self.current(listing: ids(poll.withLock { $0 })) }
            if request.path.hasPrefix("/data/4.0/onecall/alert/") {
                return Self.detail(String(request.path.split(separator: "/").last!))
            }
            return try FakeTransport.fixtures(request).get()
        }
        var previous: OneCall4.Reading?
        var largest = 0
        for round in 0..<12 {
            poll.withLock { $0 = round }
            let fetched = try source.fetch(
                Poll(
                    facts: PollFacts(
                        location: Self.tulsa, coordinates: Coordinates(latitude: 36.154, longitude: -95.9928),
                        language: "en", now: Self.now + Double(round) * 600),
                    previous: previous, interval: 600, configured: 600), get: get)
            let reading = try source.decode(fetched.body, for: Self.tulsa)
            #expect(reading.details.count <= OneCall4.alertsKept)
            #expect(reading.answers.alerts.count <= OneCall4.alertsKept)
            for detail in reading.details.values {
                #expect(
                    detail.description.utf8.count <= OneCall4.alertTextLimit
                        && detail.description.utf8.count > OneCall4.alertTextLimit - 3)
                #expect(detail.description.unicodeScalars.allSatisfy { $0 == "€" }, "cut at a code point")
            }
            #expect(
                Set(reading.details.keys).isSubset(of: Set(ids(round))), "texts of IDs no longer listed are dropped")
            largest = max(largest, fetched.body.count)
            previous = reading
        }
        // 16 texts of 4 KiB (€ is kept as itself, not escaped) and the parts' answers.
        #expect(largest < 16 * (OneCall4.alertTextLimit + 200) + 64 * 1024, "\(largest) bytes kept for one place")
        #expect(
            asked.withLock { $0 }.count { $0.hasPrefix("/data/4.0/onecall/alert/") } <= 12 * OneCallSource.maxAlerts)
    }

    /// A text is kept while its place lists it, and at most a day from when it was asked: an alert
    /// listed for ever with an `end` far away is asked again then (with the next hours), not kept for good.
    @Test func aTextOlderThanADayIsAskedAgainEvenWhileListedAndEndFarAway() throws {
        let source = OneCall4Source()
        let asked = Locked<[String]>([])
        let id = "FOREVER-1"
        func get(_ request: APIRequest) throws(OpenWeatherError) -> [UInt8] {
            asked.withLock { $0.append(request.path) }
            if request.path == "/data/4.0/onecall/current" { return Self.current(listing: [id]) }
            if request.path.hasPrefix("/data/4.0/onecall/alert/") { return Self.detail(id, bytes: 300) }
            return try FakeTransport.fixtures(request).get()
        }
        var previous: OneCall4.Reading?
        for hour in 0...26 {
            let fetched = try source.fetch(
                Poll(
                    facts: PollFacts(
                        location: Self.tulsa, coordinates: Coordinates(latitude: 36.154, longitude: -95.9928),
                        language: "en", now: Self.now + Double(hour) * 3600),
                    previous: previous, interval: 3600, configured: 3600), get: get)
            previous = try source.decode(fetched.body, for: Self.tulsa)
            #expect(previous?.details[id] != nil || hour == 24, "hour \(hour)")
        }
        let texts = asked.withLock { $0 }.count { $0 == "/data/4.0/onecall/alert/\(id)" }
        #expect(texts == 2, "asked at the start and again a day later, not each hour: \(texts)")
    }

    /// 36,000 IDs in one record: the first 64 are read, in linear time (once 8.2 s of CPU a poll).
    @Test func manyIDsInOneRecordAreCappedAndReadInLinearTime() throws {
        let ids = (0..<36_000).map { "ID-\($0 % 30_000)" }
        let body = Self.current(listing: ids)
        // The thread's CPU time: a busy machine stretches the wall clock, not the work.
        let started = threadCPUSeconds()
        let page = try OneCall4Decoder.current(body)
        #expect(page.alertIDs == (0..<64).map { "ID-\($0)" })
        #expect(threadCPUSeconds() - started < 5)
        // Read back from a document, the same 64.
        let document = try OneCall4Decoder.decode(
            document: OneCall4.Answers(pages: [.current: [body]], fetched: [.current: Self.now]).document())
        #expect(document.alertIDs.count == 64)
    }

    /// A document from an older version (or planted in the state file) with hundreds of large texts is
    /// read back bounded: the first 16, each cut to 4 KiB.
    @Test func aDocumentWithTooManyTextsIsReadBackBounded() throws {
        let answers = OneCall4.Answers(
            pages: [.current: [Self.current(listing: ["A"])]], fetched: [.current: Self.now],
            alerts: (0..<200).map { Self.detail("D\($0)", bytes: 30_000) })
        let reading = try OneCall4Decoder.decode(document: answers.document())
        #expect(reading.details.count == OneCall4.alertsKept)
        #expect(reading.answers.alerts.allSatisfy { $0.count < OneCall4.alertTextLimit + 200 })
    }
}
