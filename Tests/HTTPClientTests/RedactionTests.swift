@testable import HTTPClient
import Testing

@Suite struct RedactionTests {
    static let key = "held-out-secret-key-0123456789abcdef"

    @Test func theKeyInEveryEncodingIsCut() {
        for echo in [Self.key, "held%2dout-secret-key-0123456789abcdef", "held%2Dout-secret-key-0123456789abcdef", "%68eld-out-secret-key-0123456789abcdef"] {
            #expect(Redaction.redacted("a \(echo) b", secrets: [Self.key]) == "a <redacted> b", "\(echo)")
        }
        #expect(Redaction.redacted("a b+c", secrets: ["b c"]) == "a <redacted>")
    }

    /// The cut comes after the redaction: a secret across it is found whole; the marker may pass the limit.
    @Test func redactedBeforeItIsCut() {
        let text = String(repeating: "x", count: 140) + Self.key + "tail"
        #expect(Redaction.excerpt(text, maxBytes: 160, secrets: [Self.key]) == String(repeating: "x", count: 140) + "<redacted>tail")
        #expect(Redaction.excerpt(text, maxBytes: 145, secrets: [Self.key]) == String(repeating: "x", count: 140) + "<redacted>")
        #expect(Redaction.excerpt(text, maxBytes: 160, secrets: []) == String(text.prefix(160)))
        #expect(Redaction.excerpt("ab" + Self.key, maxBytes: 1, secrets: [Self.key]) == "a")
        // The cut never splits a character.
        #expect(Redaction.excerpt("aé", maxBytes: 2, secrets: []) == "a")
    }

    /// A text that stops inside a secret (its echo was cut upstream) loses the piece, from 4 bytes on.
    @Test func aPieceAtTheEndIsCut() {
        #expect(Redaction.redacted("appid=held-out-sec", secrets: [Self.key]) == "appid=<redacted>")
        #expect(Redaction.redacted("appid=held%2D", secrets: [Self.key]) == "appid=<redacted>")
        #expect(Redaction.redacted("appid=held%2", secrets: [Self.key]) == "appid=<redacted>", "inside an escape")
        #expect(Redaction.redacted("the end: hel", secrets: [Self.key]) == "the end: hel", "3 bytes match too many endings")
        #expect(Redaction.redacted("held-out in the middle", secrets: [Self.key]) == "held-out in the middle", "only at the end")
    }

    /// A proxy's credentials, in every form an echo can take, are secrets like the key.
    @Test func proxyCredentialsInEveryForm() throws {
        let proxy = try ProxyServer(parsing: "http://alice:pa%40ss%2Fw0rd@proxy.example:3128", origin: "test")
        let secrets = ProxySettings(proxy: proxy).secrets
        for echo in [
            "alice:pa@ss/w0rd", "alice:pa%40ss%2Fw0rd", "alice%3Apa%40ss%2fw0rd", "Proxy-Authorization: Basic YWxpY2U6cGFAc3MvdzByZA==",
            "password pa@ss/w0rd", "pa%40ss%2Fw0rd",
        ] {
            let shown = Redaction.redacted(echo, secrets: secrets)
            #expect(!shown.contains("pa@ss") && !shown.contains("pa%40ss") && !shown.contains("cGFAc3Mv") && shown.contains("<redacted>"), "\(echo): \(shown)")
        }
        #expect(Redaction.redacted("user alice here", secrets: secrets) == "user alice here", "the user name alone is not a secret")
        #expect(Redaction.redacted("user alice", secrets: secrets) == "user <redacted>", "but may be the start of `alice:password`, cut short")
        // A password too short to look for alone is still cut in its other forms.
        let short = try ProxyServer(parsing: "http://bob:abc@proxy.example", origin: "test")
        #expect(ProxySettings(proxy: short).secrets == ["bob:abc", "Ym9iOmFiYw=="])
        #expect(ProxySettings.direct.secrets.isEmpty)
    }
}
