/// The address a connection comes from, without its port: what tells one client from another when
/// sharing out something scarce. IPv4 is held as IPv6 maps it (::ffff:a.b.c.d), so the same client is
/// the same address whether the listener is IPv4 or dual-stack.
public struct PeerAddress: Hashable, Sendable {
    /// The 128 bits, most significant first.
    let high: UInt64
    let low: UInt64
}
