/// Spaces request starts so that no 60-second window ever holds more than the
/// plan's limit, and no burst happens even when many locations are due at once.
struct RequestBudget {
    let limitPerMinute: Int
    /// 61/limit rather than 60/limit: a second of slack per minute keeps the
    /// count under the limit even when network jitter bunches arrivals upstream.
    var spacing: Double { 61.0 / Double(limitPerMinute) }
    /// Start times of the requests that can still limit the next one, oldest first from `head`:
    /// at most `limitPerMinute`, none more than 60 s before the latest. Entries before `head` are
    /// dropped in bulk, so recording a start costs O(1) however high the limit.
    private var starts: [Double] = []
    private var head = 0

    /// Start times of the most recent requests, oldest first, at most `limitPerMinute`.
    var recentStarts: [Double] { Array(starts[head...]) }

    init(limitPerMinute: Int, recentStarts: [Double] = []) {
        self.limitPerMinute = limitPerMinute
        starts = Array(recentStarts.suffix(limitPerMinute))
    }

    /// The earliest time the next request may start.
    func nextAllowed() -> Double {
        guard let last = starts.last, head < starts.count else { return -.infinity }
        var earliest = last + spacing
        if starts.count - head >= limitPerMinute {
            earliest = max(earliest, starts[starts.count - limitPerMinute] + 60)
        }
        return earliest
    }

    mutating func record(start: Double) {
        starts.append(start)
        // A start 60 s or more before this one can no longer hold the next one back.
        while head < starts.count && (starts.count - head > limitPerMinute || starts[head] + 60 <= start) { head += 1 }
        if head >= 1024 && head * 2 >= starts.count {
            starts.removeFirst(head)
            head = 0
        }
    }
}
