import HTTPClient
import Testing

@testable import OpenWeather

/// The base URL is parsed once, when the client is made; each request is that parsed URL with its own
/// target (the base's path, the endpoint's path, the query with the key, percent-encoded), so nothing is
/// parsed per request and nothing about a request shows the key.
@Suite struct RequestTargetTests {
    static let key = "k3y/with+odd&chars=1"

    private func client(_ baseURL: String) throws -> OpenWeatherClient {
        try OpenWeatherClient(
            configuration: .init(baseURL: baseURL, apiKey: Self.key, language: "pt_br"), userAgent: "test")
    }

    @Test func eachRequestIsTheParsedBaseWithItsOwnTarget() throws {
        let client = try client("https://gateway.example:8443/owm/")
        let cases: [(APIRequest, String)] = [
            (
                CurrentWeather.request(latitude: -23.55, longitude: -46.63, language: "pt_br"),
                "/owm/data/2.5/weather?lat=-23.55&lon=-46.63&units=metric&lang=pt_br&appid=k3y%2Fwith%2Bodd%26chars%3D1"
            ),
            (
                Geocoding.request(.name("São Paulo,SP,BR")),
                "/owm/geo/1.0/direct?q=S%C3%A3o%20Paulo%2CSP%2CBR&limit=5&appid=k3y%2Fwith%2Bodd%26chars%3D1"
            ),
            (
                APIRequest(
                    path: "data/3.0/onecall", query: [.init("exclude", "minutely,hourly"), .init("a b", "~._-")]),
                "/owm/data/3.0/onecall?exclude=minutely%2Chourly&a%20b=~._-&appid=k3y%2Fwith%2Bodd%26chars%3D1"
            ),
        ]
        for (request, target) in cases {
            #expect(client.target(request) == target)
            let http = try client.httpRequest(request)
            #expect(http.url == (try RequestURL(parsing: "https://gateway.example:8443" + target)))
            #expect("\(http.url)" == "gateway.example:8443")
        }
        // A base without a path puts nothing before the endpoint's.
        #expect(
            try self.client("http://127.0.0.1:1").target(Geocoding.request(.zip("94040,US")))
                == "/geo/1.0/zip?zip=94040%2CUS&appid=k3y%2Fwith%2Bodd%26chars%3D1")
    }

    /// Found when the client is made, not at every poll; the reason is given without the URL, which could hold
    /// credentials.
    @Test(arguments: [
        "api.openweathermap.org", "https://user:SECRET9@api.example", "https://api.example:99999",
        "https://api.example/?appid=SECRET9",
    ])
    func aBadBaseURLFailsWhenTheClientIsMade(_ baseURL: String) {
        do throws(HTTPClientError) {
            _ = try OpenWeatherClient(configuration: .init(baseURL: baseURL, apiKey: Self.key), userAgent: "test")
            Issue.record("\(baseURL) was taken")
        } catch {
            #expect(error.kind == "invalid_url")
            #expect(!error.description.contains("SECRET9"), "\(error)")
        }
    }
}
