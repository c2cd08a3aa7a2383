import OpenWeather

/// The engine's view of a source, whatever it reads: the schedule, the store, the renderer and the
/// settings hold `any Source` and use only these. It is the one place where a reading's type is erased
/// (into the store's slots) and given back (to its collector): every reading in a slot comes from that
/// slot's source's `decode`, from a state file through it, or from a `StandIn` typed for it.
extension Source {
    var name: String { Self.name }
    var summary: String { Self.summary }
    var enabledByDefault: Bool { Self.enabledByDefault }
    var defaultInterval: Duration { Self.defaultInterval }
    var demoInterval: Duration { Self.demoInterval }
    var resolves: Bool { Self.resolves }
    var formerName: String? { Self.formerName }
    /// Its own settings' flags, for `--help`, the config file and the environment.
    var settingFlags: [Flag] { Self.settings.flags }
    /// The names of the sources it stands in for.
    var standsIn: [String] { Self.standsIn.map(\.name) }

    /// This source with its options read from `settings`.
    func configured(by settings: RawSettings) throws(ConfigError) -> any Source {
        var configured = self
        try Self.settings.read(settings, &configured.options)
        return configured
    }

    /// From one of its readings, the readings of the sources it stands in for, in `standsIn` order
    /// (`PlannedSource.StandIn.derived` says which is whose); nil for a reading not of this source.
    func readings(standingIn stored: any Sendable) -> [any Sendable]? {
        guard let reading: Reading = recovered(stored) else { return nil }
        return Self.standsIn.map { $0.derive(reading) }
    }

    /// Its collector, writing its families from the readings in `slot`.
    func collector(slot: Int) -> any Collector { SourceCollector(source: self, slot: slot) }

    /// A poll from the engine's (its last reading as stored); the reading comes back erased, with its body.
    func fetch(
        erased poll: Poll<any Sendable>, get: (APIRequest) throws(OpenWeatherError) -> [UInt8]
    ) throws(OpenWeatherError) -> Fetched<any Sendable> {
        let typed = Poll<Reading>(
            facts: poll.facts, previous: poll.previous.flatMap(recovered), interval: poll.interval,
            configured: poll.configured)
        let fetched = try fetch(typed, get: get)
        return Fetched(reading: fetched.reading, body: fetched.body)
    }

    /// The landing page's glance at a stored reading of this source.
    func glance(atStored stored: any Sendable) -> String? { (recovered(stored) as Reading?).flatMap(glance(at:)) }

    /// What the answer of a stored reading of this source lacked.
    func gaps(ofStored stored: any Sendable) -> AnswerGaps {
        (recovered(stored) as Reading?).map(gaps(of:)) ?? AnswerGaps()
    }

    /// The place a stored reading of this source found; nil unless the source resolves.
    func resolvedPlace(ofStored stored: any Sendable) -> ResolvedPlace? {
        (recovered(stored) as Reading?).flatMap(resolvedPlace(of:))
    }
}

/// A stored reading with its type given back. It cannot miss (see above); if a change made it miss,
/// a debug build stops here rather than a series going silently empty.
private func recovered<Reading>(_ stored: any Sendable) -> Reading? {
    guard let reading = stored as? Reading else {
        assertionFailure("a \(type(of: stored)) where readings of \(Reading.self) are kept")
        return nil
    }
    return reading
}

/// One source's fresh readings in a shard, by position, with their type: the store's slot is read
/// here and the reading cast back once, where the source asks for it.
struct ShardReadings<Reading: Sendable> {
    private let shard: ShardSeries
    private let slot: Int
    /// The source's bit in `shard.fresh`.
    private let freshBit: UInt64

    init(shard: ShardSeries, slot: Int) {
        self.shard = shard
        self.slot = slot
        freshBit = 1 << UInt64(slot)
    }

    /// The reading at `position` when it is fresh enough to show.
    subscript(position: Int) -> Reading? {
        guard shard.fresh[position] & freshBit != 0, let stored = shard.locations[position].slots[slot].reading else {
            return nil
        }
        return recovered(stored)
    }

    /// The positions with a fresh reading, in order, with it.
    var shown: [(position: Int, reading: Reading)] {
        shard.locations.indices.compactMap { position in self[position].map { (position, $0) } }
    }
}
