// Retry-After and what a 429 brings in from outside: the header parser, the pause it makes, and the
// duration formatter. Besides "no trap" (a Retry-After of 1e18 once killed the process formatting the
// pause), a wait is finite and not negative, the pause is within [1 min, 1 h], and any duration formats
// into text the flag parser reads back.
//
// Input: a first byte whose low bit says whether the next 8 bytes are the wall clock (any Double,
// NaN and infinities too); the rest is the header's value. The first 8 bytes, read as a Double,
// are also formatted as a duration.
import FuzzSupport

@testable import Exporter
@testable import OpenWeather

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    func double(at start: Int) -> Double {
        Double(bitPattern: bytes[start..<start + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
    var now = 1_800_000_000.0
    var header = bytes[...]
    if bytes.count >= 9 && bytes[0] & 1 == 1 {
        now = double(at: 1)
        header = bytes[9...]
    } else if !bytes.isEmpty {
        header = bytes[1...]
    }
    let wait = RetryAfter.seconds(String(decoding: header, as: UTF8.self), now: now)
    if let wait { require(wait.isFinite && wait >= 0, "wait \(wait)") }

    // A 429 with that Retry-After, strike after strike: each pause is within [1 min, 1 h] and formats.
    var schedule = PollSchedule(
        specs: [.init(key: "a", kind: .poll, interval: 60)], sourceCount: 1, requestsPerMinute: 60, now: 0)
    var time = 0.0
    for _ in 0..<12 {
        guard case .fire(let job) = schedule.next(now: time, wall: time) else {
            fatalError("the job is not due after the pause")
        }
        schedule.finished(job: job, outcome: .rateLimited(retryAfter: wait), now: time, random: 0.5)
        let pause = schedule.pause(now: time) ?? 0
        require(
            pause >= PollSchedule.firstRateLimitPause && pause <= PollSchedule.maxRateLimitPause,
            "a pause of \(pause) s")
        let shown = PrometheusDuration.format(seconds: pause.rounded(.up))
        require(PrometheusDuration.parse(shown) != nil, "\(shown) does not read back")
        time += pause
    }

    if bytes.count >= 8 {
        let seconds = double(at: 0)
        let text = PrometheusDuration.format(seconds: seconds)
        require(!text.isEmpty, "\(seconds) formats as empty text")
        if seconds >= 0 && seconds < 1e12 {
            guard let back = PrometheusDuration.parse(text) else {
                fatalError("\(seconds) as \(text) does not read back")
            }
            require(abs(back.seconds - seconds) < 0.001, "\(seconds) as \(text) reads back as \(back.seconds)")
        }
    }
    return 0
}
