import Dispatch
import Exposition
import Glibc
import Gzip
import HTTPServer
import Locking

/// Keeps the exposition rendered in memory, in both formats a scrape may negotiate. The weather
/// part is re-rendered when a reading changes or a location turns stale; the process part once a
/// second. A scrape only takes a reference to the bytes: it does no rendering.
///
/// With many locations polls complete hundreds of times a second, and every refresh
/// also pays for walking all locations (about 2 ms for 10,000); so after a refresh
/// the next waits `pacing` times as long as it took (times the threads it rendered
/// on: its CPU time, not its wall time), at most a second, and the changes in between
/// are published together. While readings keep changing, rendering then takes about
/// 1 % of one core however many it spreads over (more only when a refresh costs over
/// 10 ms, as the wait is capped); with a few locations the wait is a few milliseconds.
/// Polls follow the exposition's order (`Poller`), so a second's changes sit in a few
/// shards and the wait stays short.
final class MetricsPublisher: Sendable {
    static let pacing = 100.0

    private struct Pacing {
        /// Monotonic seconds before which a change waits.
        var notBefore = 0.0
        var pending = false
        /// A paced refresh is running (on the poller's thread or the timers'): a change meanwhile
        /// waits for the next one instead of starting a second refresh behind the first.
        var refreshing = false
    }

    /// What a scrape serves: the chunks in order, plain text or one gzip member (header, deflate
    /// segments, trailer; see `MetricsRendering`).
    struct Body: Sendable {
        var chunks: [[UInt8]]
        var gzipped: Bool
        /// The length of the plain text, also when `chunks` are gzipped.
        var plainCount: Int
        /// The plain text in a sealed memfd, which a scrape is sent without copying (`KeptBody`), once
        /// `MetricsPublisher.kept(_:of:)` made it; nil when gzipped (Prometheus scrapes it every few
        /// seconds, not thousands of times a second) or when no memfd could be made (the chunks are
        /// served then).
        var kept: KeptBody? = nil
        /// `kept` was made, or could not be, for this version of the body.
        var keptTried = false
        /// Which refresh this body is of.
        var version = 0
        /// The same text as one gzip member (header, segments, trailer) beside a plain body from
        /// `alsoGzipAbove` on, for clients that take gzip.
        var gzip: [[UInt8]]? = nil
    }

    /// From this many plain bytes on, a plain exposition is also kept gzipped for the clients that take
    /// gzip (Prometheus always does), so its scrapes stay a tenth of the size on the wire, as they
    /// were when everything from here on was kept only gzipped (`MetricsRendering.gzipAbove`).
    static let alsoGzipAbove = 256 << 10

    private struct Rendered {
        var weather = PerFormat { _ in MetricsRendering.Body(gzipped: false) }
        /// The process part; in OpenMetrics followed by `# EOF`, as it ends the exposition.
        var process = PerFormat<[UInt8]> { _ in [] }
        /// `process` as a deflate segment, made when the weather part is gzipped.
        var processSegment = PerFormat<SegmentCache.Segment?> { _ in nil }
        /// Made on first use: small exporters never gzip.
        var processCompressor: GzipCompressor?
        /// A plain weather part from `alsoGzipAbove` on as deflate segments, one per chunk (`AlsoGzipped`).
        var weatherSegments = PerFormat<MetricsRendering.Body?> { _ in nil }
        /// `weather` then `process`, joined when either changes so a scrape only copies a reference.
        var body = PerFormat { _ in Body(chunks: [], gzipped: false, plainCount: 0) }
        /// Counts the bodies composed.
        var version = 0
        /// Set by a weather refresh, cleared by the next tick's `malloc_trim`.
        var refreshedSinceTrim = false
        /// When the next fresh location turns stale, or a reading that depends on `now` moves to its
        /// next time bucket, and the weather part must be redone.
        var nextStaleness = Double.infinity
        /// Every location had been attempted when the weather part was rendered.
        var allAttempted = false
    }

    private let store: ReadingStore
    private let time: any TimeSource
    private let process = ProcessCollector()
    private let rendered = Locked(Rendered())
    private let pacing = Locked(Pacing())
    private let wake = DispatchSemaphore(value: 0)
    /// Held while rendering, so two refreshes never interleave their chunk updates.
    private let rendering: Locked<MetricsRendering>
    /// Taken inside `rendering`'s lock only.
    private let alsoGzipped = Locked(AlsoGzipped())
    /// From this many plain bytes on the exposition is kept gzipped (lower in tests).
    let gzipAbove: Int
    /// From this many plain bytes on a plain exposition is also kept gzipped (lower in tests).
    let alsoGzipAbove: Int

    init(
        store: ReadingStore, time: any TimeSource = SystemTime(), gzipAbove: Int = MetricsRendering.gzipAbove,
        alsoGzipAbove: Int = MetricsPublisher.alsoGzipAbove
    ) {
        self.store = store
        self.time = time
        self.gzipAbove = gzipAbove
        self.alsoGzipAbove = alsoGzipAbove
        rendering = Locked(MetricsRendering(gzipAbove: gzipAbove))
        refreshWeather()
        refreshProcess()
    }

    /// The exposition in `format` as chunks to write one after the other; families stay sorted
    /// because every `openweather_*` name sorts before `process_*`.
    func body(_ format: ExpositionFormat) -> Body {
        rendered.withLock { $0.body[format] }
    }

    /// `body`'s plain text in a sealed memfd, made by the first scrape that sends this version plain
    /// rather than at each change: the process part changes every second, and most versions are never
    /// sent plain (Prometheus scrapes every 15 s or more, and takes gzip from `alsoGzipAbove` on). Nil
    /// when gzipped or when no memfd could be made (the chunks are sent then).
    func kept(_ format: ExpositionFormat, of body: Body) -> KeptBody? {
        guard !body.gzipped else { return nil }
        if body.keptTried { return body.kept }
        // Copied outside the lock other scrapes take; scrapes that meet at a change may each copy,
        // and one copy is kept.
        let made = KeptBody(body.chunks)
        return rendered.withLock { state in
            guard state.body[format].version == body.version else { return made }
            if state.body[format].keptTried { return state.body[format].kept }
            state.body[format].kept = made
            state.body[format].keptTried = true
            return made
        }
    }

    /// Readiness follows what is published, not the store, so a scrape right after
    /// `/-/ready` turns 200 already shows every location's first result.
    var ready: Bool { rendered.withLock { $0.allAttempted } }

    /// Returns the most threads the render used at once.
    @discardableResult
    func refreshWeather() -> Int {
        rendering.withLock { rendering in
            let snapshot = store.snapshot()
            let now = time.wall()
            let body = rendering.render(snapshot, now: now)
            // Compressed here, outside the lock a scrape takes.
            let weatherSegments = alsoGzipped.withLock { $0.segments(of: body, from: alsoGzipAbove) }
            var nextStaleness = rendering.nextTimeChange
            // Fields read in place: copying each of 10,000 states costs a dozen reference counts apiece.
            for index in snapshot.locations.indices {
                for slot in snapshot.locations[index].slots.indices where slot < snapshot.layout.maxStaleness.count {
                    if let success = snapshot.locations[index].slots[slot].lastSuccess,
                        success + snapshot.layout.maxStaleness[slot] >= now
                    {
                        nextStaleness = min(nextStaleness, success + snapshot.layout.maxStaleness[slot])
                    }
                }
            }
            rendered.withLock {
                $0.weather = body
                $0.weatherSegments = weatherSegments
                Self.compose(&$0)
                $0.refreshedSinceTrim = true
                $0.nextStaleness = nextStaleness
                $0.allAttempted = snapshot.allAttempted
            }
            return rendering.threadsUsed
        }
    }

    func refreshProcess() {
        var families: [MetricFamily] = []
        process.collect(into: &families)
        let bytes = PerFormat { format in Exposition.render(families, format: format) + Exposition.trailer(format) }
        rendered.withLock {
            $0.process = bytes
            $0.processSegment = PerFormat { _ in nil }
            Self.compose(&$0)
        }
    }

    /// The process part of `format` as a deflate segment, made once per process refresh.
    private static func processSegment(_ state: inout Rendered, _ format: ExpositionFormat) -> SegmentCache.Segment {
        if let made = state.processSegment[format] { return made }
        if state.processCompressor == nil { state.processCompressor = GzipCompressor() }
        let compressor = state.processCompressor!
        let made = state.process[format].withUnsafeBufferPointer {
            SegmentCache.Segment(of: $0, compress: compressor.segment)
        }
        state.processSegment[format] = made
        return made
    }

    /// Joins the weather and process parts of each format in the weather part's form.
    private static func compose(_ state: inout Rendered) {
        guard state.weather.text.gzipped else {
            if state.weatherSegments.text == nil && state.weatherSegments.openMetrics == nil {
                state.processSegment = PerFormat { _ in nil }
                state.processCompressor = nil
            }
            // Each version gets a new memfd when it is first sent plain (`kept(_:of:)`): a kept body
            // is sealed, since responses still being sent read its pages.
            state.version += 1
            let version = state.version
            state.body = PerFormat { format in
                Body(
                    chunks: state.weather[format].chunks + [state.process[format]], gzipped: false,
                    plainCount: state.weather[format].plainCount + state.process[format].count, version: version)
            }
            for format in ExpositionFormat.allCases {
                guard let weather = state.weatherSegments[format] else { continue }
                let process = processSegment(&state, format)
                state.body[format].gzip = weather.member(then: process, count: state.process[format].count).chunks
            }
            return
        }
        for format in ExpositionFormat.allCases {
            let process = processSegment(&state, format)
            let (chunks, plainCount) = state.weather[format].member(then: process, count: state.process[format].count)
            state.body[format] = Body(chunks: chunks, gzipped: true, plainCount: plainCount)
        }
    }

    /// A reading changed: refresh now, or once the pacing wait is over (`runTimers` does it then).
    func weatherChanged() {
        let now = time.monotonic()
        let (refreshNow, newlyPending) = pacing.withLock { pacing in
            if !pacing.refreshing && now >= pacing.notBefore {
                pacing.refreshing = true
                return (true, false)
            }
            defer { pacing.pending = true }
            return (false, !pacing.pending)
        }
        if refreshNow {
            pacedRefresh()
        } else if newlyPending {
            wake.signal()
        }
    }

    /// Called with `refreshing` set by the caller.
    private func pacedRefresh() {
        pacing.withLock { $0.pending = false }
        let start = time.monotonic()
        let threads = refreshWeather()
        let end = time.monotonic()
        let pending = pacing.withLock { pacing in
            pacing.notBefore = end + min((end - start) * Double(threads) * Self.pacing, 1)
            pacing.refreshing = false
            return pacing.pending
        }
        // Changes that came during the refresh: the timers' thread schedules the next.
        if pending { wake.signal() }
    }

    /// The publisher's clock, on a thread of its own: the process part every second, paced refreshes
    /// when their wait is over. Returns once `running` says false (checked at least once a second).
    func runTimers(while running: () -> Bool) {
        var nextTick = 0.0
        while running() {
            let now = time.monotonic()
            if now >= nextTick {
                tick()
                nextTick = now + 1
            }
            let (due, waiting, notBefore) = pacing.withLock { pacing in
                let waiting = pacing.pending && !pacing.refreshing
                if waiting && now >= pacing.notBefore { pacing.refreshing = true }
                return (waiting && now >= pacing.notBefore, waiting, pacing.notBefore)
            }
            if due {
                pacedRefresh()
                continue
            }
            let until = waiting ? min(nextTick, notBefore) : nextTick
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(max(until - now, 0.0002) * 1e9)))
        }
    }

    /// Called about once a second.
    func tick() {
        if rendered.withLock({ time.wall() >= $0.nextStaleness }) { refreshWeather() }
        // Re-rendered chunks leave page-sized holes in malloc's arenas, which it keeps (with
        // 10,000 locations, about as much again as the exposition); hand them back. Before
        // the process part, so the resident memory it reports is the trimmed one.
        if rendered.withLock({ state in
            defer { state.refreshedSinceTrim = false }
            return state.refreshedSinceTrim
        }) {
            _ = malloc_trim(0)
        }
        refreshProcess()
    }
}

/// glibc's `malloc_trim(3)`; `<malloc.h>` is not part of the Glibc module.
// swift-format-ignore: AlwaysUseLowerCamelCase
@_silgen_name("malloc_trim")
private func malloc_trim(_ pad: Int) -> Int32
