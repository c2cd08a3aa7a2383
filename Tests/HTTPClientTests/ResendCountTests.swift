import Dispatch
import TestSupport
import Testing

@testable import HTTPClient

extension HTTPClientTests {
    /// The client's one silent resend (a kept connection the server closed as the request went out)
    /// leaves the process like any request: the caller is asked before it goes, so a budget counts it.
    @Suite struct ResendCount {
        @Test func aResendIsAskedForAndCountedBeforeItLeaves() throws {
            let server = try KeepAliveServer(.init(dropRequest: 2))
            defer { server.stop() }
            let client = HTTPClient()
            var asked = 0
            let request = HTTPClientRequest(url: try url(server.port), timeout: .seconds(5))
            #expect(
                try client.get(
                    request,
                    resend: {
                        asked += 1
                        return true
                    }
                ).status == 200)
            #expect(asked == 0, "a first send on a new connection is the caller's to count")
            #expect(
                try client.get(
                    request,
                    resend: {
                        asked += 1
                        return true
                    }
                ).status == 200)
            #expect(asked == 1)
            #expect(server.requests == 3, "three requests reached the server: 1 + the dropped one + its resend")
        }

        @Test func aResendRefusedIsNotSent() throws {
            let server = try KeepAliveServer(.init(dropRequest: 2))
            defer { server.stop() }
            let client = HTTPClient()
            let request = HTTPClientRequest(url: try url(server.port), timeout: .seconds(5))
            #expect(try client.get(request, resend: { false }).status == 200)
            #expect(throws: HTTPClientError.self) { try client.get(request, resend: { false }) }
            #expect(server.requests == 2, "the refused resend never left")
        }
    }
}
