/// What a person reads first in the log: what runs, where, on which key, at what request pace, and
/// every warning the configuration earned.
extension Logger {
    /// `addresses`: where the server listens (`Exporter.addresses`).
    public func announceStart(_ configuration: Configuration, addresses: [String], simulator: String?) {
        info("starting openweather-exporter", summary(configuration, addresses: addresses))
        describe(configuration, simulator: simulator)
    }

    /// `--config.check`'s lines: the start's, said of what was checked, without the listening.
    func announceCheck(_ configuration: Configuration, webConfig: String?) {
        describe(configuration, simulator: nil)
        let addresses =
            configuration.systemdSockets.map { _ in ["systemd sockets"] }
            ?? configuration.listenAddresses.map(\.description)
        info(
            "the configuration is valid (--config.check: not starting)",
            [("config_file", configuration.configFile ?? "none"), ("web_config_file", webConfig ?? "none")]
                + summary(configuration, addresses: addresses))
    }

    private func summary(_ configuration: Configuration, addresses: [String]) -> [(String, String)] {
        let shard = configuration.shard
        return [
            ("version", BuildInfo.version),
            ("address", addresses.joined(separator: ",")),
            ("telemetry_path", configuration.telemetryPath),
            ("locations", String(configuration.locations.count)),
        ] + (shard.total == 1 ? [] : [("shard", String(shard.index)), ("total_shards", String(shard.total))]) + [
            ("collectors", configuration.sourcePolling.requests.entries.map(\.name).joined(separator: ",")),
            ("api_key", configuration.apiKeySource),
        ]
    }

    /// The request plan, quiet places, the demo and every warning the configuration earned.
    private func describe(_ configuration: Configuration, simulator: String?) {
        let active = configuration.sourcePolling
        info(
            "request plan",
            active.requests.logFields + [
                ("places_to_resolve_once", String(configuration.locations.count { $0.query != nil }))
            ])
        // Said once, so that a place that never alerts is known to be quiet on purpose.
        let off = configuration.locations.filter { $0.alerts == .off }.map(\.name)
        if !off.isEmpty {
            let listed = off.prefix(20).joined(separator: ", ") + (off.count > 20 ? " and \(off.count - 20) more" : "")
            info(
                """
                weather alerts are off (alerts=off) for \(off.count) of \(configuration.locations.count) locations: no \
                weather alert fires there
                """,
                [("locations", listed)])
        }
        if let fallback = active.fallback {
            info(
                """
                request plan when the sources standing in for others cannot be used (One Call without its subscription)
                """,
                fallback.logFields)
        }
        if configuration.demo {
            warn(
                "DEMO MODE: the weather is SIMULATED by a built-in server on loopback, not real data",
                [("simulator", simulator ?? "")])
            if let simulator {
                // Its port is random: said plainly, with what it is for, so a newcomer can steer it.
                info(
                    """
                    demo simulator: make a place hot, cold or failing; the controls are listed at \
                    \(simulator)/_simulator/ and on the landing page
                    """,
                    [
                        ("simulator", simulator),
                        ("example", "curl -X POST '\(simulator)/_simulator/weather?lat=51.51&shift=35'"),
                    ])
                if let spell = configuration.demoColdSpell {
                    info(
                        """
                        demo showcase: the simulator forecasts \(spell.place) a cold spell that never comes \
                        (\(AlertThresholds.written(-spell.celsius)) °C colder from \
                        \(AlertThresholds.written(spell.hoursAhead)) hours ahead), so \
                        OpenWeatherForecastBelowThreshold fires for \(spell.place) while it is mild there now
                        """
                    )
                }
            }
        }
        for warning in configuration.warnings { warn(warning) }
    }
}
