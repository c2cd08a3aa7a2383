import OpenWeather

/// What answers say of the API key: accepted, or rejected with a 401 (every location is down).
/// Each change is logged once, however many locations answer at once.
extension Poller {
    /// Notes what `completion` says of the key; true when that is a change (logged here).
    func recordKeyState(_ completion: Completion, in core: inout Core) -> Bool {
        switch completion.result {
        case .success:
            guard changeKeyState(rejected: false, since: completion.started, in: &core) else { return false }
            logger.info("OpenWeather accepts the API key again; polling resumes normally")
        case .failure(let error):
            guard case .http(401, _, _) = error, changeKeyState(rejected: true, since: completion.started, in: &core)
            else { return false }
            logger.error(
                "OpenWeather rejects the API key (401); every location is down until it works",
                [
                    ("reason", error.description),
                    (
                        "hint",
                        """
                        a new key takes up to a couple of hours to activate; polling continues at the normal \
                        interval
                        """
                    ),
                ])
        }
        return true
    }

    /// A request in flight while the key changed (one sent before the last change) does not flip it
    /// back, so each change is logged once even with many locations polled at once.
    private func changeKeyState(rejected: Bool, since: Double, in core: inout Core) -> Bool {
        guard core.keyRejected != rejected, since >= core.keyStateSince else { return false }
        core.keyRejected = rejected
        core.keyStateSince = since
        return true
    }
}
