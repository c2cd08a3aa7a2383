import TestSupport
import Testing

@testable import HTTPServer

/// Mutations that real attacks and broken clients produce: flips, cuts, stray CR/LF/NUL/0xFF, duplicates, huge numbers.
enum RequestMutator {
    static let seeds: [String] = [
        "GET /metrics HTTP/1.1\r\nHost: localhost:9755\r\nUser-Agent: Prometheus/2.51\r\nAccept: text/plain\r\n\r\n",
        "POST /data/2.5/weather?q=London HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        "HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "GET http://example.com/a?b HTTP/1.1\nHost: y\n\n",
        "OPTIONS * HTTP/1.1\r\n\r\n",
    ]

    static func mutate(_ bytes: inout [UInt8], using random: inout SeededGenerator) {
        let count = Int.random(in: 1...4, using: &random)
        for _ in 0..<count {
            guard !bytes.isEmpty else {
                bytes.append(UInt8.random(in: 0...255, using: &random))
                continue
            }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<9, using: &random) {
            case 0: bytes[at] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 1: bytes.removeSubrange(at...)
            case 2: bytes.insert([13, 10, 0, 0xFF, 32, 9, 58].randomElement(using: &random)!, at: at)
            case 3: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 4:
                // Duplicate a header line (or any line).
                if let lineStart = bytes[..<at].lastIndex(of: 10), let lineEnd = bytes[at...].firstIndex(of: 10) {
                    bytes.insert(contentsOf: Array(bytes[(lineStart + 1)...lineEnd]), at: lineEnd + 1)
                }
            case 5: bytes.insert(contentsOf: Array("Content-Length: 99999999999999999999\r\n".utf8), at: at)
            case 6: bytes.insert(contentsOf: Array("Transfer-Encoding: chunked\r\n".utf8), at: at)
            case 7:
                bytes.insert(
                    contentsOf: [UInt8](
                        repeating: UInt8.random(in: 0...255, using: &random),
                        count: Int.random(in: 1...300, using: &random)), at: at)
            default: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &random)))
            }
        }
    }
}

@Suite("RequestParser fuzzing")
struct FuzzTests {
    @Test func twentyThousandMutatedRequestsNeverCrashTheParser() {
        var random = SeededGenerator(seed: 20_000)
        let limits = ParserLimits(maxHeadBytes: 512, maxHeaderCount: 10, maxBodyBytes: 64)
        var outcomes = (complete: 0, incomplete: 0, invalid: 0)
        for i in 0..<20_000 {
            var bytes: [UInt8]
            if i % 10 == 9 {
                bytes = (0..<Int.random(in: 0...600, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            } else {
                bytes = Array(RequestMutator.seeds.randomElement(using: &random)!.utf8)
                RequestMutator.mutate(&bytes, using: &random)
            }
            switch RequestParser.parse(bytes, limits: limits) {
            case .complete(let parsed):
                outcomes.complete += 1
                #expect(parsed.consumed > 0 && parsed.consumed <= bytes.count)
                #expect(parsed.request.body.count <= limits.maxBodyBytes)
                #expect(parsed.request.headers.count <= limits.maxHeaderCount)
                #expect(parsed.request.headers.allSatisfy { $0.name == $0.name.lowercased() && !$0.name.isEmpty })
            case .incomplete(let scanned, let needBytes):
                outcomes.incomplete += 1
                #expect(needBytes > bytes.count)
                #expect(scanned <= bytes.count)
                #expect(bytes.count <= limits.maxHeadBytes + limits.maxBodyBytes + 2)
            case .invalid(let error):
                outcomes.invalid += 1
                #expect([400, 413, 414, 431, 501, 505].contains(error.status))
                #expect(!error.message.isEmpty)
            }
        }
        // The mix is only meaningful if every kind of outcome was reached.
        #expect(outcomes.complete > 100 && outcomes.incomplete > 100 && outcomes.invalid > 100)
    }

    @Test func feedingBytesOneAtATimeAgreesWithParsingAtOnce() {
        var random = SeededGenerator(seed: 7)
        let limits = ParserLimits()
        for _ in 0..<300 {
            var bytes = Array(RequestMutator.seeds.randomElement(using: &random)!.utf8)
            RequestMutator.mutate(&bytes, using: &random)
            let whole = describe(RequestParser.parse(bytes, limits: limits))
            var scanned = 0
            var need = 1
            var incremental = "incomplete"
            for end in 1...max(1, bytes.count) where end <= bytes.count && end >= need {
                let result = bytes[0..<end].withUnsafeBytes {
                    RequestParser.parse($0, limits: limits, scanFrom: scanned)
                }
                if case .incomplete(let s, let n) = result {
                    scanned = s
                    need = n
                    continue
                }
                incremental = describe(result)
                break
            }
            // Early errors may stop on a prefix; a complete request must be the same either way.
            if whole.hasPrefix("complete") || incremental.hasPrefix("complete") {
                #expect(whole == incremental)
            }
        }
    }

    private func describe(_ result: ParseResult) -> String {
        switch result {
        case .complete(let parsed):
            return
                """
                complete \(parsed.request.method) \(parsed.request.target) \
                \(parsed.request.headers.map { "\($0.name)=\($0.value)" }) \(parsed.request.body) \(parsed.consumed)
                """
        case .incomplete: return "incomplete"
        case .invalid(let error): return "invalid \(error.status)"
        }
    }
}
