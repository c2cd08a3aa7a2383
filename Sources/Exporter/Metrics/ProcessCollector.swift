import Exposition
import Glibc

/// `process_*` metrics from /proc, named and computed as the Go and Python clients do.
struct ProcessCollector {
    private let clockTicks = Double(sysconf(Int32(_SC_CLK_TCK)))
    private let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
    private let bootTime: Double? = ProcessCollector.readBootTime()

    /// When the process started, Unix time: the creation time of its counters.
    static let startTime: Double? = {
        guard let boot = readBootTime(), let stat = readStat() else { return nil }
        return boot + stat.startTime / Double(sysconf(Int32(_SC_CLK_TCK)))
    }()

    func collect(into families: inout [MetricFamily]) {
        if let stat = Self.readStat() {
            families.append(
                MetricFamily(
                    name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.",
                    type: .counter,
                    samples: [Sample(value: (stat.utime + stat.stime) / clockTicks)], created: Self.startTime))
            families.append(
                MetricFamily(
                    name: "process_virtual_memory_bytes", help: "Virtual memory size in bytes.",
                    samples: [Sample(value: stat.vsize)]))
            families.append(
                MetricFamily(
                    name: "process_resident_memory_bytes", help: "Resident memory size in bytes.",
                    samples: [Sample(value: stat.rss * pageSize)]))
            if let bootTime {
                families.append(
                    MetricFamily(
                        name: "process_start_time_seconds",
                        help: "Start time of the process since unix epoch in seconds.",
                        samples: [Sample(value: bootTime + stat.startTime / clockTicks)]))
            }
        }
        families.append(
            MetricFamily(
                name: "process_open_fds", help: "Number of open file descriptors.",
                samples: [Sample(value: Double(Self.openDescriptors()))]))
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            families.append(
                MetricFamily(
                    name: "process_max_fds", help: "Maximum number of open file descriptors.",
                    samples: [Sample(value: Double(limit.rlim_cur))]))
        }
    }

    private struct Stat {
        var utime, stime, startTime, vsize, rss: Double
    }

    /// Fields after the command name, which may itself hold spaces and parentheses.
    private static func readStat() -> Stat? {
        guard let bytes = try? Files.read("/proc/self/stat"), let close = bytes.lastIndex(of: UInt8(ascii: ")")) else {
            return nil
        }
        let fields = bytes[(close + 2)...].split(separator: UInt8(ascii: " ")).map {
            Double(String(decoding: $0, as: UTF8.self)) ?? 0
        }
        // Field numbers from proc(5), minus 3 for pid, comm and the offset of this slice.
        guard fields.count > 21 else { return nil }
        return Stat(utime: fields[11], stime: fields[12], startTime: fields[19], vsize: fields[20], rss: fields[21])
    }

    private static func readBootTime() -> Double? {
        guard let bytes = try? Files.read("/proc/stat") else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: "btime ".utf8) {
            return Double(String(decoding: line.dropFirst(6), as: UTF8.self))
        }
        return nil
    }

    private static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        return count - 1  // the directory stream's own descriptor
    }
}
