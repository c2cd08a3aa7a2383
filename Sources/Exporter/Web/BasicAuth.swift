import CCrypt
import Dispatch
import Encoding
import HTTPServer
import Locking

/// `basic_auth_users` checked as exporter-toolkit does: bcrypt through libcrypt, one hash at a time, an
/// unknown user hashed against a decoy (no timing difference reveals who exists), and outcomes cached by
/// (user, hash, password), so a scraper sending the same credentials pays for bcrypt once. Successes and
/// failures are cached apart: however many wrong passwords arrive, they cannot push a right one out.
final class BasicAuth: Sendable {
    private let users: [String: String]
    private let cache = Locked<Cache>(Cache())

    private struct Cache {
        var allowed: Set<String> = []
        var refused: Set<String> = []
    }

    /// As the toolkit: at most 100 entries of each kind; when full, about a tenth is dropped at random.
    static let cacheSize = 100
    /// bcrypt of a password nobody is told, for unknown users.
    private static let decoyHash = "$2y$10$/dC1A/h2DV1RmsWn2PTWNu74Z1PPc79CKN7vfCKujBKAQuYE72.I2"

    /// `previous`: the users in force before a change; its successes carry over where the hash is the same.
    init(users: [String: String], previous: BasicAuth? = nil) {
        self.users = users
        if let previous {
            let kept = previous.cache.withLock { $0.allowed }.filter { key in
                let parts = key.split(separator: "\u{0}", maxSplits: 2, omittingEmptySubsequences: false)
                return parts.count == 3 && users[String(parts[0])] == String(parts[1])
            }
            cache.withLock { $0.allowed = kept }
        }
    }

    var isEmpty: Bool { users.isEmpty }

    /// The answer already known for these credentials, if any; cheap enough for the event loop.
    func cached(user: String, password: String) -> Bool? {
        let key = cacheKey(user, password)
        return cache.withLock { cache in
            cache.allowed.contains(key) ? true : cache.refused.contains(key) ? false : nil
        }
    }

    /// The slow path (bcrypt): call through a `BcryptQueue`.
    func verify(user: String, password: String) -> Bool {
        if let known = cached(user: user, password: password) { return known }
        let hash = users[user]
        let matches = password.withCString { ccrypt_verify($0, password.utf8.count, hash ?? Self.decoyHash) } == 1
        let allowed = matches && hash != nil
        let key = cacheKey(user, password)
        cache.withLock { cache in
            if allowed { Self.insert(key, into: &cache.allowed) } else { Self.insert(key, into: &cache.refused) }
        }
        return allowed
    }

    private static func insert(_ key: String, into set: inout Set<String>) {
        if set.count >= cacheSize {
            for _ in 0...max(1, set.count / 10) {
                if let victim = set.randomElement() { set.remove(victim) }
            }
        }
        set.insert(key)
    }

    /// As the toolkit's key: the user's hash is part of it, so a changed password never matches an old entry.
    private func cacheKey(_ user: String, _ password: String) -> String {
        user + "\u{0}" + (users[user] ?? "") + "\u{0}" + password
    }

    /// `$2a$`, `$2b$` or `$2y$`, a two-digit cost from 04 to 31, `$`, then 53 characters of bcrypt's base64.
    static func isBcryptHash(_ hash: String) -> Bool {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
            bytes[6] == UInt8(ascii: "$"), let cost = Int(String(decoding: bytes[4...5], as: UTF8.self)),
            (4...31).contains(cost)
        else { return false }
        let alphabet = Set("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        return bytes[7...].allSatisfy { alphabet.contains($0) }
    }

    /// User and password of an `Authorization: Basic` header (RFC 7617); nil when absent or malformed.
    static func credentials(_ header: String?) -> (user: String, password: String)? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = Base64.decoded(parts[1].utf8) else {
            return nil
        }
        guard let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        guard let user = String(validating: decoded[..<colon], as: UTF8.self),
            let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else { return nil }
        return (user, password)
    }
}

/// Where bcrypt runs: off the event loops, one check at a time (the toolkit's bcrypt mutex), at most
/// `limit` checks waiting or running, and at most `perPeer` of them for one client address. Past either
/// bound a check is refused at once, so a flood of wrong passwords costs a bounded wait (`limit` checks
/// of bcrypt, 0.05-0.1 s each at cost 10) instead of minutes, and a flood from one address holds only
/// `perPeer` places: a scraper elsewhere whose password is not cached yet still gets one.
final class BcryptQueue: Sendable {

    let limit: Int
    let perPeer: Int
    private let queue = DispatchQueue(label: "openweather-exporter.bcrypt")
    private let inFlight = Locked<InFlight>(InFlight())

    private struct InFlight {
        var total = 0
        var byPeer: [PeerAddress: Int] = [:]
    }

    init(limit: Int = 16, perPeer: Int = 2) {
        self.limit = limit
        self.perPeer = perPeer
    }

    /// Queues `work` for a request from `peer` unless a bound is reached; false when refused.
    func submit(from peer: PeerAddress, _ work: @escaping @Sendable () -> Void) -> Bool {
        let admitted = inFlight.withLock { state in
            guard state.total < limit, state.byPeer[peer, default: 0] < perPeer else { return false }
            state.total += 1
            state.byPeer[peer, default: 0] += 1
            return true
        }
        guard admitted else { return false }
        queue.async {
            work()
            self.inFlight.withLock { state in
                state.total -= 1
                let left = state.byPeer[peer, default: 1] - 1
                state.byPeer[peer] = left > 0 ? left : nil
            }
        }
        return true
    }
}
