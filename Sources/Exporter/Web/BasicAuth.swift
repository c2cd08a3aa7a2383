import CCrypt
import Dispatch
import Synchronization

/// `basic_auth_users` checked as exporter-toolkit does: bcrypt through libcrypt, one hash at a time, an
/// unknown user hashed against a decoy (no timing difference reveals who exists), and every outcome cached
/// by (user, hash, password), so a scraper sending the same credentials pays for bcrypt once.
final class BasicAuth: Sendable {
    private let users: [String: String]
    private let cache = Mutex<[String: Bool]>([:])

    /// As the toolkit: at most 100 entries; when full, about a tenth is dropped at random.
    static let cacheSize = 100
    /// bcrypt of a password nobody is told, for unknown users.
    private static let decoyHash = "$2y$10$/dC1A/h2DV1RmsWn2PTWNu74Z1PPc79CKN7vfCKujBKAQuYE72.I2"
    /// bcrypt runs here, off the event loops, one at a time (the toolkit's bcrypt mutex).
    static let hashing = DispatchQueue(label: "openweather-exporter.bcrypt")

    init(users: [String: String]) {
        self.users = users
    }

    var isEmpty: Bool { users.isEmpty }

    /// The answer already known for these credentials, if any; cheap enough for the event loop.
    func cached(user: String, password: String) -> Bool? {
        let key = Self.cacheKey(user, password)
        return cache.withLock { $0[key] }
    }

    /// The slow path (bcrypt): call on `hashing`.
    func verify(user: String, password: String) -> Bool {
        let key = Self.cacheKey(user, password)
        if let known = cache.withLock({ $0[key] }) { return known }
        let hash = users[user]
        let matches = password.withCString { ccrypt_verify($0, password.utf8.count, hash ?? Self.decoyHash) } == 1
        let allowed = matches && hash != nil
        cache.withLock { cache in
            if cache.count >= Self.cacheSize {
                for _ in 0...max(1, cache.count / 10) {
                    if let victim = cache.keys.randomElement() { cache[victim] = nil }
                }
            }
            cache[key] = allowed
        }
        return allowed
    }

    /// The user's hash is part of the key in the toolkit; a changed file builds a new `BasicAuth` instead.
    private static func cacheKey(_ user: String, _ password: String) -> String {
        user + "\u{0}" + password
    }

    /// `$2a$`, `$2b$` or `$2y$`, a two-digit cost from 04 to 31, `$`, then 53 characters of bcrypt's base64.
    static func isBcryptHash(_ hash: String) -> Bool {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
              bytes[6] == UInt8(ascii: "$"), let cost = Int(String(decoding: bytes[4...5], as: UTF8.self)), (4...31).contains(cost)
        else { return false }
        let alphabet = Set("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        return bytes[7...].allSatisfy { alphabet.contains($0) }
    }

    /// User and password of an `Authorization: Basic` header (RFC 7617); nil when absent or malformed.
    static func credentials(_ header: String?) -> (user: String, password: String)? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = base64Decode(parts[1].utf8) else { return nil }
        guard let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        guard let user = String(validating: decoded[..<colon], as: UTF8.self),
              let password = String(validating: decoded[(colon + 1)...], as: UTF8.self) else { return nil }
        return (user, password)
    }

    /// Standard base64 with padding, strictly (as Go's StdEncoding).
    static func base64Decode<Bytes: Collection<UInt8>>(_ text: Bytes) -> [UInt8]? {
        let input = Array(text)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var k = 0
        while k < input.count {
            var quad: UInt32 = 0
            var padding = 0
            for j in 0..<4 {
                let c = input[k + j]
                let value: UInt32
                switch c {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(c - UInt8(ascii: "A"))
                case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(c - UInt8(ascii: "a") + 26)
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(c - UInt8(ascii: "0") + 52)
                case UInt8(ascii: "+"): value = 62
                case UInt8(ascii: "/"): value = 63
                case UInt8(ascii: "=") where k + 4 == input.count && j >= 2:
                    padding += 1
                    value = 0
                default: return nil
                }
                if padding > 0 && c != UInt8(ascii: "=") { return nil }
                quad = quad << 6 | value
            }
            out.append(UInt8(truncatingIfNeeded: quad >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: quad >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: quad)) }
            k += 4
        }
        return out
    }
}
