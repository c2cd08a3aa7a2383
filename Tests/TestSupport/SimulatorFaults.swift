import Simulator
import Testing

/// Tests switch the simulator's faults the way the demo's users and the shell suites do: through
/// its HTTP fault API. The simulator has no other way in, so the API tests use is the real one.
extension Simulator {
    /// Adds `fault` after those already set (the first that matches a request applies).
    public func addFault(_ fault: Fault, sourceLocation: SourceLocation = #_sourceLocation) {
        var query = [
            "lat": fault.latitude.map { "\($0)" }, "path": fault.path,
            "delay": fault.delay > .zero ? Self.milliseconds(fault.delay) : nil,
        ]
        var body = ""
        switch fault.response {
        case .normal: break
        case .status(let code, let retryAfter):
            query["status"] = "\(code)"
            query["retry_after"] = retryAfter
        case .malformed(let kind): query["malformed"] = kind.rawValue
        case .huge(let bytes): query["huge"] = "\(bytes)"
        case .trickle(let interval): query["trickle"] = Self.milliseconds(interval)
        case .close: query["close"] = "1"
        case .body(let text): body = text
        case .answer(let code, let text):
            query["status"] = "\(code)"
            body = text
        }
        let parameters = query.compactMap { key, value in value.map { "\(key)=\($0)" } }.sorted().joined(separator: "&")
        send("POST", "/_simulator/fault?\(parameters)", body: body, sourceLocation: sourceLocation)
    }

    /// Replaces every fault with `fault` (none for nil).
    public func setFault(_ fault: Fault?, sourceLocation: SourceLocation = #_sourceLocation) {
        clearFaults(sourceLocation: sourceLocation)
        if let fault { addFault(fault, sourceLocation: sourceLocation) }
    }

    public func clearFaults(sourceLocation: SourceLocation = #_sourceLocation) {
        send("DELETE", "/_simulator/fault", sourceLocation: sourceLocation)
    }

    private func send(_ method: String, _ path: String, body: String = "", sourceLocation: SourceLocation) {
        do {
            let response = try LoopbackHTTP.request(port: port, method: method, path: path, body: body)
            if response.status != 200 {
                Issue.record(
                    "simulator \(method) \(path): \(response.status) \(response.text)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("simulator \(method) \(path): \(error)", sourceLocation: sourceLocation)
        }
    }

    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms"
    }
}
