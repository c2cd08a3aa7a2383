import Glibc
import Gzip
import TestSupport
import Testing

/// From 2 MiB of text the exposition is kept only gzipped; a client that does not take gzip gets it
/// inflated a piece at a time as it reads (`InflatingBody`).
@Suite(.endToEnd) struct BigExpositionTests {
    /// Clients that ask for the text plain and never read cost the exporter a piece each, not a copy
    /// of the text each: with a copy each, 40 of them took an exporter of 500 places from 41 MB to
    /// 389 MB (issue 38). 200 places with the demo's sources make about 3.6 MB of text.
    @Test func slowPlainClientsDoNotEachHoldACopy() async throws {
        let places = (0..<200).flatMap { i in
            ["--location", "City \(i)=\((i * 17) % 160 - 80).25,\((i * 35) % 340 - 170).5"]
        }
        let quiet = ["--collector.weather.interval=10m", "--collector.forecast.interval=10m"]
        // AddressSanitizer keeps freed memory in quarantine (256 MB by default): every piece made and
        // freed while the clients wait would count as held. What the exporter holds is measured.
        let asan = (getenv("ASAN_OPTIONS").map { String(cString: $0) + ":" } ?? "") + "quarantine_size_mb=0"
        let (process, port) = try await DemoModeTests.startDemo(
            quiet + places, environment: ["ASAN_OPTIONS": asan], budget: 100_000)
        defer {
            process.signal(SIGKILL)
            _ = process.wait(seconds: 5)
        }
        // A ceiling for 800 simulated requests in a sanitized debug build on a busy machine.
        #expect(
            await waitUntil(seconds: 180) {
                (try? LoopbackHTTP.request(port: port, path: "/-/ready").status) == 200
            })
        let head = try LoopbackHTTP.request(port: port, method: "HEAD", path: "/metrics")
        let plainCount = try #require(head.header("content-length").flatMap { Int($0) })
        try #require(plainCount > 2 << 20, "below 2 MiB the text is kept plain: \(plainCount) bytes")

        // A whole plain scrape, many pieces long, is the text a gzip scrape inflates to. A poll between
        // the two changes the text (air quality every minute, the exporter's own counts with it), so a
        // pair that straddles one is taken again.
        var plain = try LoopbackHTTP.request(port: port, path: "/metrics", timeoutSeconds: 60)
        var same = false
        for attempt in 0..<5 where !same {
            if attempt > 0 { plain = try LoopbackHTTP.request(port: port, path: "/metrics", timeoutSeconds: 60) }
            let gzipped = try LoopbackHTTP.request(
                port: port, path: "/metrics", headers: ["Accept-Encoding: gzip"], timeoutSeconds: 60)
            #expect(plain.header("content-encoding") == nil)
            #expect(gzipped.header("content-encoding") == "gzip")
            let inflated = try #require(Gzip.inflate([gzipped.body]))
            same = Self.weatherPart(plain.body) == Self.weatherPart(inflated)
        }
        #expect(same, "no plain scrape was the text its gzip scrape inflated to, in five tries")
        #expect(plain.text.hasSuffix("\n") && plain.text.contains("\nprocess_resident_memory_bytes "))

        let before = try Self.residentBytes(process.pid)
        let clients = 48
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        for _ in 0..<clients {
            // Segments as across a network: on loopback's 64 KiB ones the kernel would take most of
            // the text into the socket, hiding what the exporter holds.
            let fd = try LoopbackHTTP.connect(port: port, maxSegment: 1400)
            sockets.append(fd)
            try LoopbackHTTP.send(fd, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
        }
        // Each has its head and the start of its body waiting, unread.
        var peek = [UInt8](repeating: 0, count: 4096)
        let flags = Int32(MSG_PEEK | MSG_DONTWAIT)
        #expect(
            await waitUntil(seconds: 120) {
                sockets.allSatisfy { fd in
                    peek.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, flags) } == peek.count
                }
            })
        // Then one that reads it all: its pieces are made on the same queue, after or between theirs, so
        // by its end whatever would be made for the others without waiting for them to read is made.
        // Its values may have moved on since (polls go on); its families and its end are the whole text's.
        let last = try LoopbackHTTP.request(port: port, path: "/metrics", timeoutSeconds: 120)
        #expect(Self.families(last.body) == Self.families(plain.body))
        #expect(last.text.hasSuffix("\n") && last.text.contains("\nprocess_resident_memory_bytes "))
        let grown = try Self.residentBytes(process.pid) - before
        // About 150 KB each (a 64 KiB piece, zlib's state); a copy each would be `plainCount` each.
        #expect(
            grown < clients * plainCount / 4,
            "\(clients) clients that do not read grew the exporter by \(grown >> 20) MiB (\(plainCount) bytes of text)")
    }

    /// The `openweather_*` lines: the process part changes every second.
    static func weatherPart(_ text: [UInt8]) -> [Substring] {
        String(decoding: text, as: UTF8.self).split(separator: "\n").filter { !$0.contains("process_") }
    }

    /// The `# TYPE` lines, in order.
    static func families(_ text: [UInt8]) -> [Substring] {
        String(decoding: text, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
    }

    static func residentBytes(_ pid: pid_t) throws -> Int {
        let status = String(decoding: try readFile("/proc/\(pid)/status"), as: UTF8.self)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
    }
}
