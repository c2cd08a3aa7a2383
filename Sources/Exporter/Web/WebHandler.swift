import Dispatch
import Exposition
import Gzip
import HTTPServer

/// Routes requests: the exposition, the landing page, health, readiness and reload.
struct WebHandler: HTTPHandler {
    let telemetryPath: String
    let publisher: MetricsPublisher
    let store: ReadingStore
    let landingPage: LandingPage
    /// Runs off the event loop; returns nil on success, else what was wrong. Nil without --web.enable-lifecycle.
    let reload: (@Sendable () -> String?)?

    private static let reloads = DispatchQueue(label: "openweather-exporter.reload")
    /// Inflates gzipped expositions for clients that do not accept gzip, one piece at a time, off the event loop.
    private static let inflates = DispatchQueue(label: "openweather-exporter.inflate")

    private static let textPlain = [(name: "Content-Type", value: "text/plain; charset=utf-8")]

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        let readOnly = ["GET", "HEAD"]
        switch request.path {
        case telemetryPath:
            guard allowed(request, readOnly, responder) else { return }
            serveMetrics(request, responder)
        case "/":
            guard allowed(request, readOnly, responder) else { return }
            responder.respond(
                HTTPResponse(
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
            guard let reload = self.reload else {
                responder.respond(
                    Self.text(
                        403,
                        """
                        Lifecycle API is not enabled: start the exporter with --web.enable-lifecycle to reload over \
                        HTTP, or send it SIGHUP\n
                        """
                    ))
                return
            }
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

    /// The format is negotiated on `Accept` (`ExpositionFormat.negotiate`); both are kept rendered.
    /// A small exposition is plain text for everyone, sent from its kept memfd. From
    /// `MetricsPublisher.alsoGzipAbove` on it is also kept gzipped, for the clients that take gzip
    /// (Prometheus always does). A large one is kept only gzipped: sent as is to clients that accept
    /// gzip, inflated for the others off the event loop as they read (`InflatingBody`: an inflate, not a
    /// render). HEAD announces the length the GET would send.
    private func serveMetrics(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let format = ExpositionFormat.negotiate(accept: request.headers.filter { $0.name == "accept" }.map(\.value))
        let body = publisher.body(format)
        // Vary: a cache must not hand one client's format, or encoding, to another.
        var headers = [(name: "Content-Type", value: format.contentType), (name: "Vary", value: "Accept")]
        guard body.gzipped else {
            if let gzip = body.gzip {
                headers[1].value = "Accept, Accept-Encoding"
                if Self.acceptsGzip(request) {
                    headers.append((name: "Content-Encoding", value: "gzip"))
                    responder.respond(HTTPResponse(status: 200, headers: headers, body: gzip))
                    return
                }
            }
            if let kept = publisher.kept(format, of: body) {
                responder.respond(HTTPResponse(status: 200, headers: headers, kept: kept))
            } else {
                responder.respond(HTTPResponse(status: 200, headers: headers, body: body.chunks))
            }
            return
        }
        headers[1].value = "Accept, Accept-Encoding"
        if Self.acceptsGzip(request) {
            headers.append((name: "Content-Encoding", value: "gzip"))
            responder.respond(HTTPResponse(status: 200, headers: headers, body: body.chunks))
        } else if request.method == "HEAD" {
            responder.writeHead(status: 200, headers: headers, contentLength: body.plainCount)
            responder.end()
        } else if let inflating = InflatingBody(body.chunks, responder, on: Self.inflates) {
            responder.writeHead(status: 200, headers: headers, contentLength: body.plainCount)
            inflating.start()
        } else {
            let reason = "Out of memory to inflate the exposition: ask with Accept-Encoding: gzip\n"
            responder.respond(Self.text(503, reason))
        }
    }

    /// Whether `Accept-Encoding` (every such header) takes gzip: named with a non-zero q, or through `*`.
    static func acceptsGzip(_ request: HTTPRequest) -> Bool {
        var gzip: Double?
        var any: Double?
        for header in request.headers where header.name == "accept-encoding" {
            for item in header.value.split(separator: ",") {
                let parts = item.split(separator: ";")
                guard let first = parts.first else { continue }
                let coding = trimmed(first).lowercased()
                var quality = 1.0
                for parameter in parts.dropFirst() {
                    let pair = trimmed(parameter)
                    if pair.lowercased().hasPrefix("q=") { quality = Double(trimmed(pair.dropFirst(2))) ?? 0 }
                }
                if coding == "gzip" || coding == "x-gzip" {
                    gzip = max(gzip ?? 0, quality)
                } else if coding == "*" {
                    any = quality
                }
            }
        }
        return (gzip ?? any ?? 0) > 0
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }

    private func allowed(_ request: HTTPRequest, _ methods: [String], _ responder: HTTPResponder) -> Bool {
        if methods.contains(request.method) { return true }
        let allow = methods.joined(separator: ", ")
        responder.respond(
            HTTPResponse(
                status: 405, headers: Self.textPlain + [(name: "Allow", value: allow)],
                body: [Array("Method \(request.method) not allowed here; use \(allow)\n".utf8)]))
        return false
    }

    static func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: textPlain, body: [Array(body.utf8)])
    }
}

/// A kept-gzipped exposition inflated for one client that does not take gzip: a piece at a time on the
/// serial inflate queue, the next only once the client's socket has taken the last
/// (`HTTPResponder.writeBody(_:whenWritten:)`). A client that reads slowly or not at all holds one piece
/// and zlib's state (about 150 KB), not a copy of the text (9 MB at 500 places with every source); the
/// kept chunks it reads from are the version's own, shared, not copied. One inflate per plain client:
/// a plain copy shared per version would save it, but every second brings a new version (the process
/// part), so slow clients that came a second apart would still each hold a whole copy.
final class InflatingBody: @unchecked Sendable {
    // Unchecked: the inflater is touched only on `queue`, one step at a time (each step queues the next).

    /// Large enough that the queue hop per piece is small beside the inflate; small enough that a few
    /// hundred stalled clients hold a few tens of MB.
    static let pieceSize = 64 << 10

    private let inflater: GzipInflater
    private let responder: HTTPResponder
    private let queue: DispatchQueue

    /// Nil when zlib cannot start (out of memory).
    init?(_ gzipped: [[UInt8]], _ responder: HTTPResponder, on queue: DispatchQueue) {
        guard let inflater = GzipInflater(gzipped) else { return nil }
        self.inflater = inflater
        self.responder = responder
        self.queue = queue
    }

    /// Call after the head: the pieces follow it.
    func start() {
        queue.async { self.step() }
    }

    private func step() {
        // A client gone: the connection dropped `whenWritten`, and this was the last reference.
        guard !responder.isConnectionClosed else { return }
        var produced: Int?
        let piece = [UInt8](unsafeUninitializedCapacity: Self.pieceSize) { buffer, initialized in
            produced = inflater.read(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = produced ?? 0
        }
        if produced == nil || inflater.isFinished {
            // Never invalid (the bytes are ours, checked by the tests); if it were, the head is out and
            // ending short closes the connection, so the client sees a cut body rather than a wrong one.
            responder.writeBody(piece)
            responder.end()
        } else {
            responder.writeBody(piece) { [self] in queue.async { self.step() } }
        }
    }
}
