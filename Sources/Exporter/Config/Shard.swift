/// The share of the locations this replica polls and serves: `--shard` of `--total-shards`
/// (or the ordinal of a StatefulSet pod name given with `--pod`), as kube-state-metrics shards.
///
/// A location belongs to the shard that scores its name highest (rendezvous, or highest random
/// weight, hashing). Going from N to N+1 shards then moves only the locations the new shard wins,
/// about 1/(N+1) of them, and none between the old shards; `hash % N` would move about N/(N+1).
/// The score is FNV-1a over the name's UTF-8 and the shard number, finished with MurmurHash3's
/// fmix64: the same on every run, platform and Swift version (Swift's `Hasher` is seeded per process).
struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 0-based.
    let index: Int
    let total: Int

    /// No sharding: one replica polls every location.
    static let whole = Shard(index: 0, total: 1)

    init(index: Int, total: Int) {
        precondition(total >= 1 && (0..<total).contains(index), "the loader validates the shard")
        self.index = index
        self.total = total
    }

    var description: String { "\(index) of \(total)" }

    func owns(_ locationName: String) -> Bool {
        total == 1 || Self.owner(of: locationName, shards: total) == index
    }

    /// The shard, of `shards`, that scores `name` highest; ties (a 2^-64 chance) go to the lower number.
    static func owner(of name: String, shards: Int) -> Int {
        let prefix = fnv1a(name.utf8, seed: fnvOffset)
        var best = 0
        var bestScore: UInt64 = 0
        for shard in 0..<shards {
            let score = score(prefix: prefix, shard: shard)
            if shard == 0 || score > bestScore {
                best = shard
                bestScore = score
            }
        }
        return best
    }

    /// The weight of `shard` for a name whose FNV-1a state is `prefix`: the shard number goes in as four
    /// little-endian bytes after a 0xFF separator (a byte UTF-8 never holds), then fmix64 spreads the bits.
    static func score(prefix: UInt64, shard: Int) -> UInt64 {
        let number = UInt32(truncatingIfNeeded: shard)
        let tail: [UInt8] = [
            0xFF, UInt8(number & 0xFF), UInt8(number >> 8 & 0xFF), UInt8(number >> 16 & 0xFF), UInt8(number >> 24),
        ]
        return fmix64(fnv1a(tail, seed: prefix))
    }

    static let fnvOffset: UInt64 = 0xcbf2_9ce4_8422_2325
    static let fnvPrime: UInt64 = 0x0000_0100_0000_01b3

    static func fnv1a(_ bytes: some Sequence<UInt8>, seed: UInt64) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* fnvPrime
        }
        return hash
    }

    /// MurmurHash3's 64-bit finalizer: FNV-1a alone leaves the last bytes in the low bits.
    static func fmix64(_ value: UInt64) -> UInt64 {
        var k = value
        k ^= k >> 33
        k = k &* 0xff51_afd7_ed55_8ccd
        k ^= k >> 33
        k = k &* 0xc4ce_b9fe_1a85_ec53
        k ^= k >> 33
        return k
    }

    /// The ordinal at the end of a StatefulSet pod's name (`openweather-exporter-2` is 2), or nil.
    static func ordinal(ofPod name: String) -> Int? {
        guard let dash = name.lastIndex(of: "-"), dash != name.startIndex else { return nil }
        let digits = name[name.index(after: dash)...]
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }
}
