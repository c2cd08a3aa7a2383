import Glibc
import HTTPServer
import Locking
import Platform

/// The `--web.config.file` in force. Like exporter-toolkit, which reads the file on every request, changes
/// apply without a restart: the file is checked at most once a second (on requests) and on reload; a file
/// that no longer loads leaves the previous settings in force and is logged once. Certificates rotate
/// through the `TLSContextSource`; TLS switched on or off needs a restart.
final class WebSecurity: Sendable {
    let path: String
    /// Nil when the file configures no TLS at start.
    let tls: TLSContextSource?
    let headers: ExtraResponseHeaders
    private let logger: Logger
    private let state: Locked<State>

    private struct State {
        var auth: BasicAuth
        var limiter: RateLimiter?
        var stamp: [Int64]
        var checkedAt: Int64
        var failureLogged: Bool
    }

    init(path: String, logger: Logger) throws(ConfigError) {
        let config = try WebConfig.load(path: path)
        self.path = path
        self.logger = logger
        if let settings = config.tls {
            do {
                tls = try TLSContextSource(settings) { message in logger.warn("web config", [("event", message)]) }
            } catch {
                throw ConfigError("--web.config.file \(path): tls_server_config: \(error.description)")
            }
        } else {
            tls = nil
        }
        headers = ExtraResponseHeaders(config.headers)
        for note in config.notes { logger.warn(note) }
        state = Locked(
            State(
                auth: BasicAuth(users: config.users), limiter: RateLimiter(config.rateLimit), stamp: Self.stamp(path),
                checkedAt: SystemClock.monotonicNanoseconds(), failureLogged: false))
        tls?.setRefresh { [weak self] in self?.refreshIfChanged() }
    }

    /// The users in force, after a cheap check whether the file changed.
    func auth() -> BasicAuth {
        refreshIfChanged()
        return state.withLock { $0.auth }
    }

    /// Whether `rate_limit` lets one more request through now (always, without one).
    func admit() -> Bool {
        guard let limiter = state.withLock({ $0.limiter }) else { return true }
        return limiter.allow(now: SystemClock.monotonicNanoseconds())
    }

    /// At most once a second: re-read the file if it changed. Requests call it, and so do TLS accepts (a
    /// change to client_auth_type may be what lets the next handshake, and so the next request, through).
    private func refreshIfChanged() {
        let now = SystemClock.monotonicNanoseconds()
        let due: Bool = state.withLock { state in
            guard now - state.checkedAt >= 1_000_000_000 else { return false }
            state.checkedAt = now
            return Self.stamp(path) != state.stamp
        }
        if due, let problem = reload(), !state.withLock({ $0.failureLogged }) {
            state.withLock { $0.failureLogged = true }
            logger.error(
                "web config file changed but does not load; the previous settings stay in force", [("reason", problem)])
        }
    }

    /// Re-reads the file (SIGHUP, /-/reload, a change). Returns nil on success, else what is wrong.
    @discardableResult
    func reload() -> String? {
        let stamp = Self.stamp(path)
        let config: WebConfig
        do {
            config = try WebConfig.load(path: path)
            if let configuration = config.tls, let tls, configuration != tls.configuration {
                try tls.update(configuration)
            }
        } catch let error as ConfigError {
            state.withLock { $0.stamp = stamp }
            return error.description
        } catch {
            state.withLock { $0.stamp = stamp }
            return "--web.config.file \(path): tls_server_config: \(error)"
        }
        if (config.tls == nil) != (tls == nil) {
            logger.warn(
                "a changed setting needs a restart to take effect",
                [("setting", "tls_server_config in --web.config.file (TLS on or off)")])
        }
        headers.set(config.headers)
        for note in config.notes { logger.warn(note) }
        state.withLock { state in
            // An unchanged rate_limit keeps its bucket: a fresh one would hand out a new burst.
            let limiter =
                state.limiter?.configuration == config.rateLimit ? state.limiter : RateLimiter(config.rateLimit)
            state = State(
                auth: BasicAuth(users: config.users, previous: state.auth), limiter: limiter, stamp: stamp,
                checkedAt: state.checkedAt, failureLogged: false)
        }
        return nil
    }

    private static func stamp(_ path: String) -> [Int64] {
        var info = stat()
        guard stat(path, &info) == 0 else { return [] }
        return [Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)]
    }
}

/// In front of the routes when a web config is given: `rate_limit` (429 over it), then basic auth as the toolkit does
/// it (401 with `WWW-Authenticate: Basic` for missing or wrong credentials, every path protected but `/-/healthy`).
/// Known credentials are answered on the event loop; new ones wait for a bcrypt check, which is refused (401) when the
/// queue is full or holds its share for the client's address, and skipped when the client has left meanwhile.
struct AuthenticatingHandler: HTTPHandler {
    let routes: any HTTPHandler
    let web: WebSecurity
    /// One queue per server, not per process: exporters that share a process (the tests) must not
    /// share each other's places.
    var checks = BcryptQueue()

    func handle(_ request: HTTPRequest, responder: HTTPResponder) {
        guard web.admit() else {
            responder.respond(
                HTTPResponse(
                    status: 429, headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")],
                    body: [Array("Too Many Requests\n".utf8)]))
            return
        }
        let auth = web.auth()
        // Liveness needs no password, as Kubernetes' httpGet probes and the image's own health check
        // have none to give; the answer ("OK") tells nothing about the weather or the exporter.
        guard !auth.isEmpty, request.path != "/-/healthy" else {
            routes.handle(request, responder: responder)
            return
        }
        guard let (user, password) = BasicAuth.credentials(request.header("authorization")) else {
            Self.deny(responder)
            return
        }
        if let allowed = auth.cached(user: user, password: password) {
            if allowed { routes.handle(request, responder: responder) } else { Self.deny(responder) }
            return
        }
        let routes = self.routes
        // Waiting for bcrypt holds a connection without doing anything for it: at the limit it can go.
        responder.markDroppable()
        let queued = checks.submit(from: responder.peer) {
            guard !responder.isConnectionClosed else { return }
            if auth.verify(user: user, password: password) {
                routes.handle(request, responder: responder)
            } else {
                Self.deny(responder)
            }
        }
        if !queued { Self.deny(responder) }
    }

    private static func deny(_ responder: HTTPResponder) {
        responder.respond(
            HTTPResponse(
                status: 401,
                headers: [
                    (name: "Content-Type", value: "text/plain; charset=utf-8"),
                    (name: "WWW-Authenticate", value: "Basic"),
                ],
                body: [Array("Unauthorized\n".utf8)]))
    }
}
