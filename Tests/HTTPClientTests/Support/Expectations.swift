import HTTPClient
import Testing

/// Every test URL carries this key, so any error text that echoes a query is caught.
let secret = "SECRET123"

func url(
    _ port: UInt16, path: String = "/data/2.5/weather?lat=1&lon=2&appid=\(secret)", scheme: String = "http",
    host: String = "127.0.0.1"
) throws -> RequestURL {
    try RequestURL(parsing: "\(scheme)://\(host):\(port)\(path)")
}

/// Runs a request that must fail and checks that its description keeps the secret.
func failure(
    of request: HTTPClientRequest,
    client: HTTPClient = HTTPClient(),
    sourceLocation: SourceLocation = #_sourceLocation
) -> HTTPClientError? {
    do {
        let response = try client.get(request)
        Issue.record("expected an error, got status \(response.status)", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(!error.description.contains(secret), "\(error.description)", sourceLocation: sourceLocation)
        #expect(!error.description.contains("\n"), sourceLocation: sourceLocation)
        return error
    }
}
