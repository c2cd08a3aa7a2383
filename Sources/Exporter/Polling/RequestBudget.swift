/// Spaces request starts so that no 60-second window ever holds more than the
/// plan's limit, and no burst happens even when many locations are due at once.
struct RequestBudget {
    let limitPerMinute: Int
    /// 61/limit rather than 60/limit: a second of slack per minute keeps the
    /// count under the limit even when network jitter bunches arrivals upstream.
    var spacing: Double { 61.0 / Double(limitPerMinute) }
    /// Start times of the most recent requests, oldest first, at most `limitPerMinute`.
    private(set) var recentStarts: [Double] = []

    init(limitPerMinute: Int, recentStarts: [Double] = []) {
        self.limitPerMinute = limitPerMinute
        self.recentStarts = Array(recentStarts.suffix(limitPerMinute))
    }

    /// The earliest time the next request may start.
    func nextAllowed() -> Double {
        guard let last = recentStarts.last else { return -.infinity }
        var earliest = last + spacing
        if recentStarts.count >= limitPerMinute {
            earliest = max(earliest, recentStarts[recentStarts.count - limitPerMinute] + 60)
        }
        return earliest
    }

    mutating func record(start: Double) {
        recentStarts.append(start)
        if recentStarts.count > limitPerMinute { recentStarts.removeFirst(recentStarts.count - limitPerMinute) }
    }
}
