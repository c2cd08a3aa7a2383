import Dispatch
import Exposition
import HTTPServer

/// Routes requests: the exposition, the landing page, health, readiness and reload.
struct WebHandler: HTTPHandler {
    let telemetryPath: String
    let publisher: MetricsPublisher
    let store: WeatherStore
    let landingPage: LandingPage
    /// Runs off the event loop; returns nil on success, else what was wrong.
    let reload: @Sendable () -> String?

    private static let reloads = DispatchQueue(label: "openweather-exporter.reload")

    private static let textPlain = [(name: "Content-Type", value: "text/plain; charset=utf-8")]

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        let readOnly = ["GET", "HEAD"]
        switch request.path {
        case telemetryPath:
            guard allowed(request, readOnly, responder) else { return }
            responder.respond(HTTPResponse(
                status: 200, headers: [(name: "Content-Type", value: Exposition.contentType)], body: publisher.body))
        case "/":
            guard allowed(request, readOnly, responder) else { return }
            responder.respond(HTTPResponse(
                status: 200, headers: [(name: "Content-Type", value: "text/html; charset=utf-8")],
                body: [landingPage.render(store.snapshot())]))
        case "/-/healthy":
            guard allowed(request, readOnly, responder) else { return }
            responder.respond(Self.text(200, "OK\n"))
        case "/-/ready":
            guard allowed(request, readOnly, responder) else { return }
            if publisher.ready {
                responder.respond(Self.text(200, "Ready\n"))
            } else {
                responder.respond(Self.text(503, "Not ready: not every location has been polled yet\n"))
            }
        case "/-/reload":
            guard allowed(request, ["POST", "PUT"], responder) else { return }
            let reload = self.reload
            // One queue: a burst of reload requests runs one after another, never as a thread each.
            Self.reloads.async {
                if let problem = reload() {
                    responder.respond(Self.text(500, "Reload failed: \(problem)\n"))
                } else {
                    responder.respond(Self.text(200, "Reloaded\n"))
                }
            }
        default:
            responder.respond(Self.text(404, "Not found: try \(telemetryPath) or /\n"))
        }
    }

    private func allowed(_ request: HTTPRequest, _ methods: [String], _ responder: HTTPResponder) -> Bool {
        if methods.contains(request.method) { return true }
        let allow = methods.joined(separator: ", ")
        responder.respond(HTTPResponse(
            status: 405, headers: Self.textPlain + [(name: "Allow", value: allow)],
            body: [Array("Method \(request.method) not allowed here; use \(allow)\n".utf8)]))
        return false
    }

    static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: textPlain, body: [Array(body.utf8)])
    }
}
