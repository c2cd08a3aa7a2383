import Exposition
import Glibc
import Testing

@testable import Exporter

/// The `process_*` families, read from /proc as the Go and Python clients name them.
@Suite struct ProcessCollectorTests {
    @Test func theProcessFamiliesReadThisProcess() throws {
        var families: [MetricFamily] = []
        ProcessCollector().collect(into: &families)
        let values = Dictionary(uniqueKeysWithValues: families.map { ($0.name, $0.samples.first?.value ?? -1) })
        #expect(
            families.map(\.name) == [
                "process_cpu_seconds_total", "process_virtual_memory_bytes", "process_resident_memory_bytes",
                "process_start_time_seconds",
                "process_open_fds", "process_max_fds",
            ])
        #expect(try #require(values["process_resident_memory_bytes"]) > 1_000_000)
        #expect(try #require(values["process_virtual_memory_bytes"]) >= values["process_resident_memory_bytes"]!)
        #expect(
            try #require(values["process_open_fds"]) >= 3 && values["process_open_fds"]! <= values["process_max_fds"]!)
        let started = try #require(values["process_start_time_seconds"])
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        #expect(started <= Double(now.tv_sec) + 1 && started > Double(now.tv_sec) - 86_400 * 30, "started \(started)")
        #expect(ProcessCollector.startTime.map { abs($0 - started) < 0.01 } == true)
        #expect(families.first?.type == .counter && families.first?.created == ProcessCollector.startTime)
    }
}
