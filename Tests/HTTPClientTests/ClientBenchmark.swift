import Dispatch
import Glibc
import Platform
import Synchronization
import Testing

@testable import HTTPClient

/// CPU of the client per request for `Tests/bench/client.sh`, not a test: skipped unless
/// `BENCH=1` and `BENCH_CLIENT_URL` (an https base URL) are set; prints instead of asserting.
/// Requests run on 16 threads, as the poller's, over 10,000 different locations.
@Suite(.enabled(if: getenv("BENCH") != nil && getenv("BENCH_CLIENT_URL") != nil, "set BENCH=1 and BENCH_CLIENT_URL"))
struct ClientBenchmark {
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(
            usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// CPU milliseconds per request, and full and resumed handshakes per 100 requests.
    static func measure(_ client: HTTPClient, base: RequestURL, requests: Int) -> (Double, Double, Double) {
        let next = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let group = DispatchGroup()
        let before = cpuSeconds()
        let (_, full0, resumed0) = client.statistics
        for _ in 0..<16 {
            group.enter()
            Threads.spawn(name: "test client") {
                while case let index = next.add(1, ordering: .relaxed).oldValue, index < requests {
                    let location = index % 10_000
                    // As the OpenWeather client does: the base parsed once, each request only its target.
                    let target =
                        """
                        \(base.target == "/" ? "" : base.target)/data/2.5/weather?lat=\(Double(location % 180) - 89.5)\
                        &lon=\(Double(location % 360) - 179.75)&units=metric&appid=bench
                        """
                    if (try? client.get(HTTPClientRequest(url: try base.with(target: target), timeout: .seconds(10))))?
                        .status != 200
                    {
                        failures.add(1, ordering: .relaxed)
                    }
                }
                group.leave()
            }
        }
        group.wait()
        let cpu = cpuSeconds() - before
        let (_, full, resumed) = client.statistics
        if failures.load(ordering: .relaxed) > 0 {
            print("CLIENT_BENCHMARK_FAILURES \(failures.load(ordering: .relaxed))")
        }
        return (
            cpu * 1000 / Double(requests), Double(full - full0) * 100 / Double(requests),
            Double(resumed - resumed0) * 100 / Double(requests)
        )
    }

    @Test func cpuPerRequest() throws {
        let base = try RequestURL(parsing: Self.environment("BENCH_CLIENT_URL")!)
        let caFile = Self.environment("BENCH_CLIENT_CA")
        let requests = Self.environment("BENCH_CLIENT_REQUESTS").flatMap(Int.init) ?? 20_000
        let off = HTTPClient(configuration: .init(trustedCAFile: caFile, maxIdleConnections: 0))
        let on = HTTPClient(configuration: .init(trustedCAFile: caFile))
        // Warm-up: the trust store is read and the pool filled before anything is measured.
        _ = Self.measure(off, base: base, requests: 200)
        _ = Self.measure(on, base: base, requests: 200)
        let (offCPU, offFull, offResumed) = Self.measure(off, base: base, requests: requests)
        let (onCPU, onFull, onResumed) = Self.measure(on, base: base, requests: requests)
        func rounded(_ value: Double, _ places: Int) -> String {
            let scale = (0..<places).reduce(1.0) { value, _ in value * 10 }
            return "\((value * scale).rounded() / scale)"
        }
        print(
            "CLIENT_BENCHMARK requests=\(requests) off_ms=\(rounded(offCPU, 4)) on_ms=\(rounded(onCPU, 4))"
                + " ratio=\(rounded(offCPU / max(onCPU, 1e-9), 1))"
                + " off_handshakes_per_100=\(rounded(offFull, 2))+\(rounded(offResumed, 2))"
                + " on_handshakes_per_100=\(rounded(onFull, 3))+\(rounded(onResumed, 3))")
    }
}
