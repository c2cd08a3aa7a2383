import Testing

@testable import OpenWeather

@Suite struct GeocodingTests {
    @Test func directListsEveryMatchBestFirst() throws {
        let places = try Geocoding.decode(Fixtures.bytes("geo-direct-london.json"), for: .name("London"))
        #expect(
            places == [
                Place(name: "London", state: "England", country: "GB", latitude: 51.5073219, longitude: -0.1276474),
                Place(
                    name: "City of London", state: "England", country: "GB", latitude: 51.5156177, longitude: -0.0919983
                ),
                Place(name: "London", state: "Ontario", country: "CA", latitude: 42.9832406, longitude: -81.243372),
                Place(name: "London", state: "Ohio", country: "US", latitude: 39.8864493, longitude: -83.448253),
                Place(name: "London", state: "Kentucky", country: "US", latitude: 37.1289771, longitude: -84.0832646),
            ])
    }

    @Test func noMatchIsAnEmptyList() throws {
        #expect(try Geocoding.decode(Fixtures.bytes("geo-direct-no-match.json"), for: .name("Xyzzyville")) == [])
    }

    @Test func zipIsOnePlaceWithoutState() throws {
        let places = try Geocoding.decode(Fixtures.bytes("geo-zip-94040-us.json"), for: .zip("94040,US"))
        #expect(
            places == [Place(name: "Mountain View", state: nil, country: "US", latitude: 37.3855, longitude: -122.088)])
    }

    @Test func unknownZipIsA404WithOpenWeathersMessage() {
        #expect(
            OpenWeatherClient.errorMessage(Fixtures.bytes("error-404-zip-not-found.json"), redacting: ["K"])
                == "not found")
    }

    @Test func emptyStateIsNone() throws {
        let body = #"[{"name":"Tokyo","lat":35.6828387,"lon":139.7594549,"country":"JP","state":""}]"#
        #expect(try Geocoding.decode(Array(body.utf8), for: .name("Tokyo")).first?.state == nil)
    }

    @Test func requests() throws {
        let direct = Geocoding.request(.name("Springfield,IL,US"))
        #expect(direct.path == "/geo/1.0/direct")
        #expect(direct.query == [.init("q", "Springfield,IL,US"), .init("limit", "5")])
        let zip = Geocoding.request(.zip("94040,US"))
        #expect(zip.path == "/geo/1.0/zip")
        #expect(zip.query == [.init("zip", "94040,US")])
        let client = try OpenWeatherClient(
            configuration: .init(baseURL: "http://127.0.0.1:1", apiKey: "k"), userAgent: "test")
        #expect(
            client.target(Geocoding.request(.name("São Paulo,BR")))
                == "/geo/1.0/direct?q=S%C3%A3o%20Paulo%2CBR&limit=5&appid=k")
    }

    @Test func queriesReadAsTheFlagWritesThem() {
        #expect(PlaceQuery.name("Springfield,IL,US").description == "Springfield,IL,US")
        #expect(PlaceQuery.zip("94040,US").description == "zip:94040,US")
    }

    static let london = #"[{"name":"London","lat":51.5073219,"lon":-0.1276474,"country":"GB","state":"England"}]"#
    static let zip = #"{"zip":"94040","name":"Mountain View","lat":37.3855,"lon":-122.088,"country":"US"}"#

    @Test(arguments: [
        ("", PlaceQuery.name("London"), "not valid JSON"),
        ("<html>502</html>", .name("London"), "not valid JSON"),
        (zip, .name("London"), "the body is an object, not a list"),
        (london, .zip("94040,US"), "the body is a list, not an object"),
        ("[1]", .name("London"), "`[0]` is a number, not an object"),
        (
            london.replacing(#""lat":51.5073219"#, with: #""lat":91"#), .name("London"),
            "`[0].lat` = 91.0 is outside -90.0...90.0"
        ),
        (
            london.replacing(#""lon":-0.1276474"#, with: #""lon":-181"#), .name("London"),
            "`[0].lon` = -181.0 is outside -180.0...180.0"
        ),
        (london.replacing(#""lat":51.5073219,"#, with: ""), .name("London"), "missing field `[0].lat`"),
        (london.replacing(#""name":"London","#, with: ""), .name("London"), "missing field `[0].name`"),
        (
            london.replacing(#""lat":51.5073219"#, with: #""lat":"51.5""#), .name("London"),
            "`[0].lat` is a string, not a number"
        ),
        (zip.replacing(#""lat":37.3855"#, with: #""lat":1000"#), .zip("94040,US"), "`lat` = 1000.0 is outside"),
        (zip.replacing(#""name":"Mountain View","#, with: ""), .zip("94040,US"), "missing field `name`"),
    ])
    func rejectsBrokenBodies(body: String, query: PlaceQuery, reason: String) {
        #expect {
            try Geocoding.decode(Array(body.utf8), for: query)
        } throws: { error in
            guard case .decode(let message) = error as? OpenWeatherError else { return false }
            return message.contains(reason)
        }
    }

    /// `state` and `country` are texts: one that is not a string is none, the match stands.
    @Test func aStateThatIsNotATextIsNone() throws {
        let london = String(decoding: Fixtures.bytes("geo-direct-london.json"), as: UTF8.self)
        let places = try Geocoding.decode(
            Array(london.replacing(#""state":"England""#, with: #""state":1"#).utf8), for: .name("London"))
        #expect(places.first?.state == nil && places.first?.name == "London" && places.first?.country == "GB")
    }
}
