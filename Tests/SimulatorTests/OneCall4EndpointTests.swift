import JSON
import OpenWeather
import TestSupport
import Testing

@testable import Simulator

/// One Call 4.0 over HTTP, as the exporter meets it: the key, the subscription switch, the alert
/// mode, faults per part and the request log.
@Suite(.blocking) struct OneCall4EndpointTests {
    static let parts = [
        "/data/4.0/onecall/current", "/data/4.0/onecall/timeline/1min", "/data/4.0/onecall/timeline/15min",
        "/data/4.0/onecall/timeline/1h", "/data/4.0/onecall/timeline/1day",
    ]
    static let place = "lat=36.154&lon=-95.9928"

    static func get(
        _ simulator: Simulator, _ path: String, key: String = "secret-key"
    ) throws -> (status: Int, text: String) {
        let response = try LoopbackHTTP.request(
            port: simulator.port, path: path + (path.contains("?") ? "&" : "?") + "appid=\(key)")
        return (response.status, response.text)
    }

    static func post(_ simulator: Simulator, _ path: String) throws {
        #expect(try LoopbackHTTP.request(port: simulator.port, method: "POST", path: path).status == 200)
    }

    @Test func everyPartAnswersWithItsEnvelope() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        for (part, count) in zip(Self.parts, [1, 60, 50, 20, 10]) {
            let (status, text) = try Self.get(simulator, "\(part)?\(Self.place)")
            #expect(status == 200, "\(part)")
            let answer = try JSONParser.parse(text)
            #expect(
                answer["lat"]?.number == 36.154 && answer["lon"]?.number == -95.9928
                    && answer["timezone_offset"]?.number == -21_600)
            #expect(answer["timezone"]?.text != nil)
            #expect(answer["data"]?.list.count == count, "\(part)")
            let wrong = try Self.get(simulator, "\(part)?lat=95&lon=0")
            #expect(wrong.status == 400 && wrong.text.contains("wrong latitude"))
        }
        #expect(
            try Self.get(simulator, "/data/4.0/onecall/timeline/1h?\(Self.place)&start=tomorrow").text.contains(
                #""parameters":["start"]"#))
        #expect(simulator.requests.map(\.path) == Self.parts.flatMap { [$0, $0] } + ["/data/4.0/onecall/timeline/1h"])
    }

    /// Complete URLs back to the simulator, with the caller's key (as the real API's probably are):
    /// what lets the exporter's tests prove it neither follows nor logs them.
    @Test func linksCarryTheCallersKey() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        let hours = try JSONParser.parse(
            Self.get(simulator, "/data/4.0/onecall/timeline/1h?\(Self.place)", key: "k3y%2Bwith%2Fodd%3Dchars").text)
        let first = try #require(hours["data"]?.list.first?["dt"]?.number)
        #expect(
            hours["prev"]?.text
                == """
                http://localhost/data/4.0/onecall/timeline/1h?cnt=20&lat=36.1540&lon=-95.9928\
                &start=\(Int(first) - 72_000)&appid=k3y%2Bwith%2Fodd%3Dchars
                """
        )
        #expect(
            hours["next"]?.text
                == """
                http://localhost/data/4.0/onecall/timeline/1h?cnt=20&lat=36.1540&lon=-95.9928\
                &start=\(Int(first) + 72_000)&appid=k3y%2Bwith%2Fodd%3Dchars
                """
        )
        let quarters = try JSONParser.parse(Self.get(simulator, "/data/4.0/onecall/timeline/15min?\(Self.place)").text)
        let quarter = try #require(quarters["data"]?.list.first?["dt"]?.number)
        #expect(quarters["prev"] == nil)
        #expect(
            quarters["next"]?.text
                == """
                http://localhost/data/4.0/onecall/timeline/15min?lat=36.1540&lon=-95.9928\
                &start=\(Int(quarter) + 45_000)&appid=secret-key
                """
        )
        let days = try JSONParser.parse(
            Self.get(simulator, "/data/4.0/onecall/timeline/1day?lat=-33.8688&lon=151.2093").text)
        #expect(days["next"]?.text?.contains("?cnt=10&lat=-33.8688&lon=151.2093&start=") == true)
        #expect(days["prev"]?.text?.hasSuffix("&appid=secret-key") == true)
        // A host that is not plain stays out of the JSON.
        #expect(SimulatorHandler.linkBase(host: "127.0.0.1:8080") == "http://127.0.0.1:8080")
        #expect(SimulatorHandler.linkBase(host: #"a"b"#) == "https://api.openweathermap.org")
        #expect(SimulatorHandler.linkBase(host: nil) == "https://api.openweathermap.org")
    }

    /// With `alerts=always` every record lists its 6-hour block's alert; the ID gives the detail
    /// (not wrapped, `description` one string), an unknown one 404 in One Call's error shape.
    @Test func alertDetailsByID() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        try Self.post(simulator, "/_simulator/onecall?alerts=always")
        let hours = try JSONParser.parse(Self.get(simulator, "/data/4.0/onecall/timeline/1h?\(Self.place)").text)
        var ids: [String: [Double]] = [:]
        for record in hours["data"]?.list ?? [] {
            let listed = record["alerts"]?.list.compactMap(\.text) ?? []
            #expect(listed.count == 1)
            ids[listed[0], default: []].append(record["dt"]!.number!)
        }
        #expect((4...5).contains(ids.count), "20 hours span 4 or 5 blocks of 6")
        for (id, times) in ids {
            let (status, text) = try Self.get(simulator, "/data/4.0/onecall/alert/\(id)")
            #expect(status == 200)
            let detail = try JSONParser.parse(text)
            #expect(
                detail["id"]?.text == id && detail["sender_name"]?.text == OneCallJSON.sender
                    && detail["event"]?.text != nil)
            let (start, end) = (detail["start"]!.number!, detail["end"]!.number!)
            #expect(end - start == 21_600 && times.allSatisfy { start <= $0 && $0 < end })
            #expect(detail["description"]?.text?.contains("\n") == true)
        }
        let current = try JSONParser.parse(Self.get(simulator, "/data/4.0/onecall/current?\(Self.place)").text)
        #expect(current["data"]?.list.first?["alerts"]?.list.count == 1)

        for unknown in ["4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31", "nothing", ""] {
            let (status, text) = try Self.get(simulator, "/data/4.0/onecall/alert/\(unknown)")
            #expect(status == 404 && text == ErrorBodies.oneCallAlertNotFound, "\(unknown)")
        }
        #expect(simulator.requests.filter { $0.path.hasPrefix("/data/4.0/onecall/alert/") }.count == ids.count + 3)
        #expect(
            simulator.requests.filter { $0.path.hasPrefix("/data/4.0/onecall/alert/") }.allSatisfy { $0.latitude.isNaN }
        )
    }

    /// 3.0's 401 with the One Call by Call message on every 4.0 path; a wrong key stays a wrong key.
    @Test func theSubscriptionSwitchCoversEveryPart() throws {
        let simulator = try Simulator(acceptedKeys: ["good"])
        defer { simulator.stop() }
        let paths =
            Self.parts.map { "\($0)?\(Self.place)" } + ["/data/4.0/onecall/alert/4C1B7E2A-93D5-4F60-8A1E-2B7C9D0E5F31"]
        try Self.post(simulator, "/_simulator/onecall?subscribed=false")
        for path in paths {
            let (status, text) = try Self.get(simulator, path, key: "good")
            #expect(status == 401 && text == ErrorBodies.oneCallNoSubscription, "\(path)")
            #expect(OneCall.needsSubscription(.http(status: status, message: text, retryAfterSeconds: nil)))
            let wrong = try Self.get(simulator, path, key: "bad")
            #expect(
                wrong.status == 401
                    && !OneCall.needsSubscription(
                        .http(status: wrong.status, message: wrong.text, retryAfterSeconds: nil))
            )
        }
        try Self.post(simulator, "/_simulator/onecall?subscribed=true")
        for path in paths.prefix(5) { #expect(try Self.get(simulator, path, key: "good").status == 200) }
    }

    /// `path=` names one part exactly, or every alert detail, or one; the log names each part.
    @Test func faultsHitOnePart() throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        try Self.post(simulator, "/_simulator/fault?status=500&path=/data/4.0/onecall/timeline/1h")
        #expect(try Self.get(simulator, "/data/4.0/onecall/timeline/1h?\(Self.place)").status == 500)
        for part in Self.parts where part != "/data/4.0/onecall/timeline/1h" {
            #expect(try Self.get(simulator, "\(part)?\(Self.place)").status == 200, "\(part)")
        }
        #expect(
            try LoopbackHTTP.request(
                port: simulator.port, method: "POST",
                path: "/_simulator/fault?status=500&path=/data/4.0/onecall/timeline"
            ).status == 400)

        simulator.clearFaults()
        try Self.post(simulator, "/_simulator/onecall?alerts=always")
        let current = try JSONParser.parse(Self.get(simulator, "/data/4.0/onecall/current?\(Self.place)").text)
        let id = try #require(current["data"]?.list.first?["alerts"]?.list.first?.text)
        try Self.post(simulator, "/_simulator/fault?status=503&path=/data/4.0/onecall/alert/\(id)")
        #expect(try Self.get(simulator, "/data/4.0/onecall/alert/\(id)").status == 503)
        simulator.clearFaults()
        try Self.post(simulator, "/_simulator/fault?malformed=missingFields&path=/data/4.0/onecall/alert")
        let broken = try Self.get(simulator, "/data/4.0/onecall/alert/\(id)")
        #expect(broken.status == 200 && broken.text.contains(#""event_gone":"#))
        try Self.post(simulator, "/_simulator/fault?malformed=missingFields&path=/data/4.0/onecall/timeline/15min")
        #expect(
            try Self.get(simulator, "/data/4.0/onecall/timeline/15min?\(Self.place)").text.contains(#""data_gone":"#))

        let log = try LoopbackHTTP.request(port: simulator.port, path: "/_simulator/requests").text.split(
            separator: "\n"
        ).map { $0.split(separator: " ") }
        #expect(
            log.map { "\($0[3]) \($0[4])" } == [
                "500 /data/4.0/onecall/timeline/1h", "200 /data/4.0/onecall/current",
                "200 /data/4.0/onecall/timeline/1min",
                "200 /data/4.0/onecall/timeline/15min", "200 /data/4.0/onecall/timeline/1day",
                "200 /data/4.0/onecall/current",
                "503 /data/4.0/onecall/alert/\(id)", "200 /data/4.0/onecall/alert/\(id)",
                "200 /data/4.0/onecall/timeline/15min",
            ])
    }
}
