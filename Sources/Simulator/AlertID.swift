/// One Call 4.0's alert IDs: GUID-like, the same for the same alert every time, and telling the
/// place (to 0.001°, as `WeatherModel.seed` tells places apart) and the alert's 6-hour block, so
/// `/alert/{id}` needs no memory of the answers given. 64 bits of payload (27 for the block,
/// 18 for the latitude, 19 for the longitude) behind 64 bits of its hash, which also scramble it:
/// an ID not made here fails the check.
enum AlertID {
    static func make(latitude: Double, longitude: Double, start: Double) -> String? {
        let block = (start / 21_600).rounded(.down)
        guard (0..<Double(1 << 27)).contains(block), (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { return nil }
        let payload =
            UInt64(block) << 37 | UInt64((latitude * 1000).rounded() + 90_000) << 19
            | UInt64((longitude * 1000).rounded() + 180_000)
        let check = mix(payload ^ 0x4F43_3441_4C45_5254)
        let bits = (check, payload ^ mix(check))
        let hex = hex16(bits.0) + hex16(bits.1)
        let cut = [0, 8, 12, 16, 20, 32].map { hex.index(hex.startIndex, offsetBy: $0) }
        return (0..<5).map { String(hex[cut[$0]..<cut[$0 + 1]]) }.joined(separator: "-")
    }

    /// The place and start of the alert an ID names; nil for anything else.
    static func parse(_ id: String) -> (latitude: Double, longitude: Double, start: Double)? {
        let groups = id.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
        let hex = groups.joined()
        guard let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16) else {
            return nil
        }
        let payload = low ^ mix(high)
        guard mix(payload ^ 0x4F43_3441_4C45_5254) == high else { return nil }
        let latitude = (Double(payload >> 19 & (1 << 18 - 1)) - 90_000) / 1000
        let longitude = (Double(payload & (1 << 19 - 1)) - 180_000) / 1000
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        return (latitude, longitude, Double(payload >> 37) * 21_600)
    }

    /// SplitMix64's finalizer: every input bit moves about half the output bits.
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x = (x ^ x >> 30) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ x >> 27) &* 0x94D0_49BB_1331_11EB
        return x ^ x >> 31
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
