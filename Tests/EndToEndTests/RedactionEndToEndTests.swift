import Encoding
import Glibc
import Simulator
import TestSupport
import Testing

/// The real exporter against an upstream that echoes its key altered in every way one was seen to
/// (issue 27): cut and followed by `...`, `…` or `"`, its end at the start of the text, upper-cased,
/// in base64, percent-encoded twice, split by a line break; and as a page or a terminal shows it
/// (issue 38): full-width, as character references, mixed. Its log and its pages carry none of it.
@Suite(.endToEnd) struct RedactionEndToEndTests {
    static let key = "9f86d081884c7d659a2feaa0c55ad015"

    /// Each place's upstream error text, as a JSON string's content (escapes as JSON writes them).
    static let echoes: [String] = {
        let key = Array(Self.key)
        let doublePercent = key.map { "%25" + String(String($0).utf8.first!, radix: 16) }.joined()
        return [
            "Invalid API key \(String(key[..<22]))...", "Invalid API key \(String(key[..<23]))…",
            "appid=\\\"\(String(key[..<24]))\\\" is wrong",
            "\(String(key[10...])) is not a key", "KEY \(String(key).uppercased()) REFUSED",
            "auth \(Base64.encoded(("appid=" + String(key)).utf8)) refused",
            "GET /data/2.5/weather?appid=\(doublePercent)", "key \(String(key[..<9]))\\n\(String(key[9...])) refused",
            "KEY \(fullWidth(String(key))) refused",
            // Each character in turn raw, hex without `;` (a full-width form follows), full-width, decimal.
            "appid="
                + key.enumerated().map { index, character in
                    let value = character.unicodeScalars.first!.value
                    let forms = [
                        String(character), "&#x\(String(value, radix: 16))", fullWidth(String(character)),
                        "&#\(value);",
                    ]
                    return forms[index % 4]
                }.joined() + " refused",
        ]
    }()

    /// `text` in full-width forms.
    static func fullWidth(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { Unicode.Scalar($0.value + 0xFEE0)! }))
    }

    /// `text` as a browser shows it: character references decoded (twice, since the landing page writes
    /// the `&` of one as `&amp;`), full-width forms as ASCII.
    static func asShown(_ text: String) -> String {
        var text = text
        for _ in 0..<2 {
            text = text.replacing(/&#[xX]([0-9a-fA-F]+);?/) { match in
                UInt32(match.1, radix: 16).flatMap(Unicode.Scalar.init).map { String($0) } ?? String(match.0)
            }
            text = text.replacing(/&#([0-9]+);?/) { match in
                UInt32(match.1).flatMap(Unicode.Scalar.init).map { String($0) } ?? String(match.0)
            }
            text = text.replacing("&amp;", with: "&")
        }
        let folded = text.unicodeScalars.map {
            (0xFF01...0xFF5E).contains($0.value) ? Unicode.Scalar($0.value - 0xFEE0)! : $0
        }
        return String(String.UnicodeScalarView(folded))
    }

    /// A window of 8 characters of the key in `text`, as shown (line breaks and their `\n` escapes
    /// skipped, any case, references decoded, full-width as ASCII), or in its base64 or percent-decoded
    /// forms.
    static func leak(in text: String) -> String? {
        let plain = asShown(text).replacing("\\n", with: "").replacing("\n", with: "").lowercased()
        let decoded = plain.replacing("%25", with: "%")
        let windows = (0...(key.count - 8)).map { String(Array(key)[$0..<($0 + 8)]) }
        for window in windows
        where plain.contains(window)
            || decoded.contains(window.map { "%" + String(String($0).utf8.first!, radix: 16) }.joined())
        {
            return window
        }
        let encoded = Base64.encoded(("appid=" + key).utf8)
        for start in stride(from: 0, to: encoded.count - 12, by: 4)
        where text.contains(String(Array(encoded)[start..<(start + 12)])) {
            return "base64 \(String(Array(encoded)[start..<(start + 12)]))"
        }
        return nil
    }

    @Test func anUpstreamEchoingTheKeyAlteredLeavesNoneOfItInTheLogOrThePages() async throws {
        let simulator = try Simulator()
        defer { simulator.stop() }
        var arguments = [
            "--web.listen-address=127.0.0.1:0", "--openweather.url=\(simulator.baseURL)",
            "--collector.weather.interval=1m",
            "--no-collector.forecast", "--openweather.max-requests-per-minute=6000", "--log.level=debug",
        ]
        for (index, echo) in Self.echoes.enumerated() {
            let latitude = 10.0 + Double(index)
            simulator.addFault(
                Fault(response: .answer(status: 400, body: "{\"cod\":400,\"message\":\"\(echo)\"}"), latitude: latitude)
            )
            arguments += ["--location", "P\(index)=\(latitude),20"]
        }
        let process = try ChildProcess(
            DemoModeTests.executable, arguments, environment: ["OPENWEATHER_API_KEY": Self.key])
        defer {
            process.signal(SIGKILL)
            _ = process.wait(seconds: 5)
        }
        let port = try #require(await process.port(after: "address=127.0.0.1:"), "\(process.standardError)")
        #expect(
            await waitUntil(seconds: 60) {
                let metrics = (try? LoopbackHTTP.request(port: port, path: "/metrics").text) ?? ""
                return Self.echoes.indices.allSatisfy {
                    metrics.contains("openweather_api_requests_total")
                        && metrics.contains("openweather_up{location=\"P\($0)\",source=\"weather\"} 0")
                }
                    && Self.echoes.indices.allSatisfy { index in
                        process.standardError.split(separator: "\n").contains {
                            $0.contains("location=P\(index) ") && $0.contains("400")
                        }
                    }
            }, "\(process.standardError)")
        let log = process.standardError
        #expect(log.contains("<redacted>"), "the echoes reached the log, redacted: \(log)")
        let pages = [
            try LoopbackHTTP.request(port: port, path: "/metrics").text,
            try LoopbackHTTP.request(port: port, path: "/").text,
            try LoopbackHTTP.request(port: port, path: "/-/ready").text,
        ]
        for (name, text) in [("the log", log)] + pages.map({ ("a page", $0) }) {
            #expect(Self.leak(in: text) == nil, "\(name) holds \(Self.leak(in: text) ?? ""): \(text.suffix(3000))")
        }
    }
}
