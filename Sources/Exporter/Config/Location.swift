/// A place to poll, as the user configured it.
public struct Location: Sendable, Equatable {
    /// The `location` label; unique.
    public var name: String
    public var latitude: Double
    public var longitude: Double
    /// What this location says about alert thresholds; resolved against the global defaults.
    public var alerts: AlertSetting

    public init(name: String, latitude: Double, longitude: Double, alerts: AlertSetting = .inherit) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.alerts = alerts
    }
}

/// Temperatures beyond which an alert should fire; exposed as gauges so that
/// one generic rule serves every location with its own values.
public struct TemperatureThresholds: Sendable, Equatable {
    public var aboveCelsius: Double?
    public var belowCelsius: Double?

    public init(aboveCelsius: Double? = nil, belowCelsius: Double? = nil) {
        self.aboveCelsius = aboveCelsius
        self.belowCelsius = belowCelsius
    }

    /// Each bound set here wins; an unset one falls back to `defaults`.
    func merged(over defaults: TemperatureThresholds) -> TemperatureThresholds {
        TemperatureThresholds(aboveCelsius: aboveCelsius ?? defaults.aboveCelsius, belowCelsius: belowCelsius ?? defaults.belowCelsius)
    }
}

public enum AlertSetting: Sendable, Equatable {
    /// Use the global defaults.
    case inherit
    /// Own bounds; an unset bound falls back to the default.
    case custom(TemperatureThresholds)
    /// No thresholds at all, whatever the defaults.
    case off

    func resolved(defaults: TemperatureThresholds) -> TemperatureThresholds {
        switch self {
        case .inherit: defaults
        case .custom(let own): own.merged(over: defaults)
        case .off: TemperatureThresholds()
        }
    }
}
