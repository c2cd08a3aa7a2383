/// The sharding part of loading: which locations and what share of the request budget this replica has.
extension ConfigurationLoader {
    /// `--shard`/`--pod` of `--total-shards`: keeps the locations this replica owns and its share of the budget.
    func shard(_ settings: RawSettings, into config: inout Configuration) throws(ConfigError) {
        let total = try settings.resolved(Settings.totalShards)
        let index: Int
        switch (settings.values[Settings.shard.flag.name], settings.values[Settings.pod.flag.name]) {
        case (.some(let shard), .some(let pod)):
            throw ConfigError(
                """
                \(shard.origin) and \(pod.origin) both choose the shard: give only one (--pod for a StatefulSet, \
                --shard otherwise)
                """
            )
        case (.some(let shard), nil):
            guard let value = Int(shard.text), value >= 0 else {
                throw ConfigError(
                    """
                    \(shard.origin) "\(shard.text)" is not a shard number: use 0 to \(total - 1) (shards are \
                    numbered from 0 up to --total-shards - 1)
                    """
                )
            }
            guard value < total else {
                throw ConfigError(
                    """
                    \(shard.origin)=\(value) is not below --total-shards=\(total): shards are numbered from 0 to \
                    \(total - 1); set --total-shards to the number of replicas
                    """
                )
            }
            index = value
        case (nil, .some(let pod)):
            guard let ordinal = Shard.ordinal(ofPod: pod.text) else {
                throw ConfigError(
                    """
                    \(pod.origin) "\(pod.text)" does not end in a StatefulSet ordinal like -0 or -2: pass the pod's \
                    own name (the downward API's metadata.name, e.g. --pod=$(POD_NAME)) or use --shard
                    """
                )
            }
            guard ordinal < total else {
                throw ConfigError(
                    """
                    \(pod.origin) "\(pod.text)" is shard \(ordinal), but --total-shards is \(total): set \
                    --total-shards to the StatefulSet's replicas
                    """
                )
            }
            index = ordinal
        case (nil, nil):
            index = 0
        }
        guard total > 1 else { return }
        let share = config.maxRequestsPerMinute / total
        guard share >= 1 else {
            throw ConfigError(
                """
                --openweather.max-requests-per-minute=\(config.maxRequestsPerMinute) cannot be split among \
                --total-shards=\(total) (each shard needs at least 1 a minute): raise the budget to your plan's or use \
                fewer shards
                """
            )
        }
        config.shard = Shard(index: index, total: total)
        config.maxRequestsPerMinute = share
        config.maxRequestsPerDay = config.maxRequestsPerDay.map { max($0 / total, 1) }
        let configured = config.locations.count
        config.locations = config.locations.filter { config.shard.owns($0.name) }
        if config.locations.isEmpty {
            config.warnings.append(
                """
                shard \(config.shard) owns none of the \(configured) locations: it serves only the exporter's own \
                metrics; use fewer shards for so few locations
                """
            )
        }
    }
}
