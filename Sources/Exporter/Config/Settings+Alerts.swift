/// The alert settings of the table: the defaults of every location's thresholds.
extension Settings {
    // The defaults of a location's alert values: each setting reads one field, the others stay nil.
    static let temperatureAbove = Setting<AlertThresholds>.alert(
        .above, placeholder: "TEMP",
        doc: "Default upper temperature threshold for locations that set none: 35 or 35C (°C), 95F (°F).",
        default: AlertThresholds())

    static let temperatureBelow = Setting<AlertThresholds>.alert(
        .below, placeholder: "TEMP",
        doc: "Default lower temperature threshold for locations that set none: 0 or 0C (°C), 32F (°F).",
        default: AlertThresholds())

    static let hysteresis = Setting<AlertThresholds>.alert(
        .hysteresis, placeholder: "C",
        doc:
            """
            How far back past its threshold (°C) the temperature must come before a firing alert resolves, so a \
            reading that wavers around it does not flap.
            """,
        default: AlertThresholds(hysteresisCelsius: AlertThresholds.builtIn.hysteresisCelsius), shown: "1")

    static let gust = Setting<AlertThresholds>.alert(
        .gust, placeholder: "M/S",
        doc: "Default wind gust threshold (m/s), now and in the 24-hour forecast; none unless given.",
        default: AlertThresholds())

    static let rain = Setting<AlertThresholds>.alert(
        .rain, placeholder: "MM",
        doc: "Default heavy-rain threshold: the forecast's rain over the next 24 hours, in mm.",
        default: AlertThresholds(rainMeters: AlertThresholds.builtIn.rainMeters), shown: "20")

    static let heatIndexAbove = Setting<AlertThresholds>.alert(
        .heatIndex, placeholder: "TEMP",
        doc:
            """
            Default heat index threshold (the US NWS formula), now and forecast, for locations that set none: 40 or \
            40C (°C), 104F (°F); none unless given.
            """,
        default: AlertThresholds())

    static let wetBulbAbove = Setting<AlertThresholds>.alert(
        .wetBulb, placeholder: "TEMP",
        doc:
            """
            Default wet-bulb temperature threshold (Stull 2011), now and forecast, for locations that set none: 30 or \
            30C (°C), 86F (°F); none unless given.
            """,
        default: AlertThresholds())

    static let windChillBelow = Setting<AlertThresholds>.alert(
        .windChill, placeholder: "TEMP",
        doc:
            """
            Default wind chill threshold (the 2001 index), now and forecast, for locations that set none: -30 or -30C \
            (°C), -22F (°F); none unless given.
            """,
        default: AlertThresholds())

    /// Each sets one field of `Configuration.alertDefaults`.
    static let alertDefaults = [
        temperatureAbove, temperatureBelow, hysteresis, gust, rain, heatIndexAbove, wetBulbAbove, windChillBelow,
    ]
}
