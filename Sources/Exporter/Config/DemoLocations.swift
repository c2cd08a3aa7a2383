/// The cities `--demo` polls when no location is given: five climates, five time zones, each with
/// alert thresholds, so the threshold series and rules have something to show. La Rinconada (5,100 m,
/// which the simulator cools by its height) is below 0 °C at almost any hour, now and forecast, so
/// its current-temperature alert fires and Alertmanager mutes its forecast's. The forecast alert
/// that reaches the receiver is Tokyo's: the simulator forecasts it a cold spell (`coldSpell`).
/// The heat and cold indices' thresholds: La Rinconada's wind chill (its nights near -15 °C, its wind
/// about 3.5 m/s) falls below -15 °C almost every night, so its forecast crosses within any 24 hours;
/// the heat index (New York in °F, Sydney) and Tokyo's wet bulb are crossed in their summers.
enum DemoLocations {
    static let all = [
        Location(name: "London", latitude: 51.5074, longitude: -0.1278, alerts: thresholds(above: 30, below: -5)),
        Location(
            name: "New York", latitude: 40.7128, longitude: -74.006,
            alerts: thresholds(above: 33, below: -10) {
                $0.heatIndex = TemperatureThreshold(celsius: 30, unit: .fahrenheit)
            }),
        Location(
            name: "Tokyo", latitude: 35.6762, longitude: 139.6503,
            alerts: thresholds(above: 35, below: -2) { $0.wetBulb = TemperatureThreshold(celsius: 24) }),
        Location(
            name: "Sydney", latitude: -33.8688, longitude: 151.2093,
            alerts: thresholds(above: 38, below: 3) { $0.heatIndex = TemperatureThreshold(celsius: 30) }),
        Location(
            name: "La Rinconada", latitude: -14.6306, longitude: -69.4456,
            alerts: thresholds(above: 20, below: 0) { $0.windChill = TemperatureThreshold(celsius: -15) }),
    ]

    /// Tokyo's forecasts 30 °C colder from 6 hours ahead on, a spell that never comes: below its
    /// -2 °C within any 24 hours of the year, while its current temperature (never below about 4 °C in
    /// the simulator) stays above, so `OpenWeatherForecastBelowThreshold` fires with nothing to mute it.
    static let coldSpell = (place: "Tokyo", latitude: 35.6762, celsius: -30.0, hoursAhead: 6.0)

    private static func thresholds(
        above: Double, below: Double, _ more: (inout AlertThresholds) -> Void = { _ in }
    ) -> AlertSetting {
        var thresholds = AlertThresholds(aboveCelsius: above, belowCelsius: below)
        more(&thresholds)
        return .custom(thresholds)
    }
}
