/// What a place alerts on; exported as gauges so that one generic rule serves every location with
/// its own values. nil: not set here (in a location's own settings, the default applies).
struct AlertThresholds: Sendable, Equatable {
    var above: TemperatureThreshold?
    var below: TemperatureThreshold?
    /// How far back past a bound the temperature must come before a firing alert resolves.
    var hysteresisCelsius: Double?
    /// Gusts above this alert, now and in the 24-hour forecast; no default.
    var gustMetersPerSecond: Double?
    /// The forecast's 24-hour rain at or above this alerts (with an even chance).
    var rainMeters: Double?
    /// The heat and cold indices (`ThermalIndex`), now and forecast: heat stress above the heat index or
    /// the wet-bulb temperature, cold below the wind chill. No default: what is dangerous depends on the
    /// climate (the weather services' own criteria differ by region).
    var heatIndex: TemperatureThreshold?
    var wetBulb: TemperatureThreshold?
    var windChill: TemperatureThreshold?

    /// Bounds given in °C; one given in °F is set through `above` or `below`.
    init(
        aboveCelsius: Double? = nil, belowCelsius: Double? = nil, hysteresisCelsius: Double? = nil,
        gustMetersPerSecond: Double? = nil, rainMeters: Double? = nil
    ) {
        above = aboveCelsius.map { TemperatureThreshold(celsius: $0) }
        below = belowCelsius.map { TemperatureThreshold(celsius: $0) }
        self.hysteresisCelsius = hysteresisCelsius
        self.gustMetersPerSecond = gustMetersPerSecond
        self.rainMeters = rainMeters
    }

    var aboveCelsius: Double? { above?.celsius }
    var belowCelsius: Double? { below?.celsius }

    /// Each value set here wins; an unset one falls back to `defaults`.
    func merged(over defaults: AlertThresholds) -> AlertThresholds {
        var merged = AlertThresholds(
            hysteresisCelsius: hysteresisCelsius ?? defaults.hysteresisCelsius,
            gustMetersPerSecond: gustMetersPerSecond ?? defaults.gustMetersPerSecond,
            rainMeters: rainMeters ?? defaults.rainMeters)
        merged.above = above ?? defaults.above
        merged.below = below ?? defaults.below
        merged.heatIndex = heatIndex ?? defaults.heatIndex
        merged.wetBulb = wetBulb ?? defaults.wetBulb
        merged.windChill = windChill ?? defaults.windChill
        return merged
    }

    /// Whether a bound the hysteresis serves is set: the temperature's, or an index's.
    var hasTemperatureBound: Bool {
        above != nil || below != nil || heatIndex != nil || wetBulb != nil || windChill != nil
    }

    /// One value a place or the defaults can set: its `--location` option, its key in an `alerts:`
    /// block of the file (the same keys as the defaults' settings), and how its text is read.
    enum Field: CaseIterable, Sendable {
        case above, below, hysteresis, gust, rain, heatIndex, wetBulb, windChill

        var option: String {
            switch self {
            case .above: "above"
            case .below: "below"
            case .hysteresis: "hysteresis"
            case .gust: "gust"
            case .rain: "rain"
            case .heatIndex: "heat_index"
            case .wetBulb: "wet_bulb"
            case .windChill: "wind_chill"
            }
        }

        var key: String {
            switch self {
            case .above: "temperature_above_celsius"
            case .below: "temperature_below_celsius"
            case .hysteresis: "hysteresis_celsius"
            case .gust: "wind_gust_meters_per_second"
            case .rain: "rain_millimeters"
            case .heatIndex: "heat_index_above_celsius"
            case .wetBulb: "wet_bulb_above_celsius"
            case .windChill: "wind_chill_below_celsius"
            }
        }

        /// Where a bound in °C or °F is kept; nil for the fields that are not temperatures.
        private var temperature: WritableKeyPath<AlertThresholds, TemperatureThreshold?>? {
            switch self {
            case .above: \.above
            case .below: \.below
            case .heatIndex: \.heatIndex
            case .wetBulb: \.wetBulb
            case .windChill: \.windChill
            case .hysteresis, .gust, .rain: nil
            }
        }

        /// What the value must be, for the error that names a wrong one.
        var expected: String {
            switch self {
            case .above, .below, .heatIndex, .wetBulb, .windChill:
                "a temperature: \(TemperatureThreshold.forms), from -150 to 150 °C (-238 to 302 °F)"
            case .hysteresis:
                """
                a margin in °C from 0 to 50, like 1, 0.5 or 1C, or one in °F like 2F (0: resolve as soon as the \
                bound is crossed back)
                """
            case .gust: "a gust speed in m/s above 0 and at most 200, like 20 or 20m/s (72 km/h)"
            case .rain: "a rain total in mm above 0 and at most 10000, like 20 or 20mm"
            }
        }

        /// The units a value may end in, as written after the number (either case, spaces before it
        /// allowed): each quantity's own, as temperatures take C and F.
        private var units: [String] {
            switch self {
            case .hysteresis: ["°C", "C", "°F", "F"]
            case .gust: ["m/s"]
            case .rain: ["mm"]
            case .above, .below, .heatIndex, .wetBulb, .windChill: []
            }
        }

        /// Reads `text` into this field of `thresholds`; false when it is not `expected`.
        func read(_ text: String, into thresholds: inout AlertThresholds) -> Bool {
            if let bound = temperature {
                guard let temperature = TemperatureThreshold.parse(text) else { return false }
                thresholds[keyPath: bound] = temperature
                return true
            }
            var trimmed = text.trimmed
            let unit = units.first { trimmed.lowercased().hasSuffix($0.lowercased()) }
            if let unit { trimmed = String(trimmed.dropLast(unit.count)).trimmed }
            guard trimmed.allSatisfy({ "0123456789.+-eE".contains($0) }), let value = Double(trimmed), value.isFinite
            else { return false }
            switch self {
            case .hysteresis:
                // A margin is a difference: 1.8 °F is 1 °C, with no 32 to take away.
                let celsius = unit?.hasSuffix("F") == true ? value * 5 / 9 : value
                guard (0...50).contains(celsius) else { return false }
                thresholds.hysteresisCelsius = celsius
            case .gust:
                guard value > 0, value <= 200 else { return false }
                thresholds.gustMetersPerSecond = value
            default:
                guard value > 0, value <= 10000, let meters = Self.meters(millimeters: trimmed), meters > 0 else {
                    return false
                }
                thresholds.rainMeters = meters
            }
            return true
        }

        /// A rain total in mm as metres, exactly as written: the decimal exponent lowered by three and the
        /// text read once, so 1.1 is 0.0011 (1.1 / 1000 is 0.0011000000000000001) and 0.0001 is 1e-07.
        /// A threshold rounded to some step would export a small one as 0, which any forecast reaches.
        static func meters(millimeters text: String) -> Double? {
            var mantissa = Substring(text)
            var exponent = 0
            if let mark = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
                guard let given = Int(text[text.index(after: mark)...]) else { return nil }
                mantissa = text[..<mark]
                exponent = given
            }
            let (lowered, overflow) = exponent.subtractingReportingOverflow(3)
            return overflow ? nil : Double("\(mantissa)e\(lowered)")
        }
    }

    /// A value as people write it: whole numbers without a fraction (`35`, not `35.0`), others in
    /// Swift's shortest form.
    static func written(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    /// What the landing page says of a place: each threshold in the unit it was given in (gusts in
    /// m/s, rain in mm), `off`, or `none`. A value and its unit are joined by a no-break space, so a
    /// narrow cell never wraps between them.
    func summary(off: Bool) -> String {
        guard !off else { return "off" }
        let space = "\u{A0}"
        func temperature(_ bound: TemperatureThreshold) -> String { bound.shown.replacing(" ", with: space) }
        var parts: [String] = []
        if let above { parts.append("above \(temperature(above))") }
        if let below { parts.append("below \(temperature(below))") }
        if let gustMetersPerSecond { parts.append("gusts \(Self.written(gustMetersPerSecond))\(space)m/s") }
        // To a millionth of a mm: 0.0011 m is 1.1 mm, not 1.1000000000000001.
        if let rainMeters { parts.append("rain \(Self.written((rainMeters * 1e9).rounded() / 1e6))\(space)mm") }
        if let heatIndex { parts.append("heat index above \(temperature(heatIndex))") }
        if let wetBulb { parts.append("wet bulb above \(temperature(wetBulb))") }
        if let windChill { parts.append("wind chill below \(temperature(windChill))") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }

    /// What a place that sets nothing gets when the flags and the file set nothing either: a margin
    /// of 1 °C, and heavy rain at 20 mm a day, what the shipped rule had fixed before it was per place.
    static let builtIn = AlertThresholds(hysteresisCelsius: 1, rainMeters: 0.020)
}

/// A temperature bound as the user wrote it: in °C, which the metrics carry, and the unit it was
/// given in, which the alerts' text repeats.
struct TemperatureThreshold: Sendable, Equatable {
    enum Unit: String, Sendable { case celsius, fahrenheit }

    var celsius: Double
    var unit: Unit
    /// The number as written, in `unit`: what messages and the landing page repeat, so that 100F is
    /// never said as 37.77777777777778.
    var written: Double

    init(celsius: Double, unit: Unit = .celsius) {
        self.celsius = celsius
        self.unit = unit
        self.written = unit == .fahrenheit ? celsius * 9 / 5 + 32 : celsius
    }

    init(written: Double, unit: Unit) {
        self.celsius = unit == .fahrenheit ? (written - 32) * 5 / 9 : written
        self.unit = unit
        self.written = written
    }

    /// As an option takes it: `35`, `-5.5`, `100F`.
    var option: String { AlertThresholds.written(written) + (unit == .fahrenheit ? "F" : "") }

    /// As a person reads it: `35 °C`, `100 °F`.
    var shown: String { AlertThresholds.written(written) + (unit == .fahrenheit ? " °F" : " °C") }

    /// The accepted forms, for error messages.
    static let forms = "a number in °C (35, -5.5), or one with a unit: 35C or 95F"
    /// What a thermometer on Earth can need, with room: -150 to 150 °C (-238 to 302 °F).
    static let range: ClosedRange<Double> = -150...150

    /// `35` and `35C` are °C, `95F` is °F (a `°` before the letter and either case are fine); nil
    /// for anything else or a temperature outside `range`.
    static func parse(_ text: String) -> TemperatureThreshold? {
        var number = Substring(text.trimmed)
        var unit = Unit.celsius
        if let last = number.last, "CcFf".contains(last) {
            unit = "Ff".contains(last) ? .fahrenheit : .celsius
            number = number.dropLast()
            if number.hasSuffix("°") { number = number.dropLast() }
            number = Substring(String(number).trimmed)
        }
        // Decimal only: Double also reads "0x1F" (hex, whose F is no unit), "inf" and "nan".
        guard number.allSatisfy({ "0123456789.+-eE".contains($0) }), let value = Double(number), value.isFinite else {
            return nil
        }
        let threshold = TemperatureThreshold(written: value, unit: unit)
        guard range.contains(threshold.celsius) else { return nil }
        return threshold
    }
}

enum AlertSetting: Sendable, Equatable {
    /// Use the global defaults.
    case inherit
    /// Own values; an unset one falls back to the default.
    case custom(AlertThresholds)
    /// No thresholds at all, whatever the defaults: no weather alert of any kind.
    case off

    func resolved(defaults: AlertThresholds) -> AlertThresholds {
        switch self {
        case .inherit: defaults
        case .custom(let own): own.merged(over: defaults)
        case .off: AlertThresholds()
        }
    }
}
