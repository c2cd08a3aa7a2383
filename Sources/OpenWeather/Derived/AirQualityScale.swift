/// The air quality indices people read, computed from an hour's concentrations (OpenWeather sends
/// only its own 1–5). Each scale takes a sub-index per pollutant it covers and reports the highest.
/// Every scale here is fed hourly values where its definition averages over longer (8 h or 24 h
/// means, the DAQI's 15 minutes for SO₂): an hour of rush-hour traffic reads worse than the
/// official daily figure would. `deploy/docs/sources.md` lists what each scale simplifies.
public enum AirQualityScale: String, CaseIterable, Sendable {
    /// The European Common Air Quality Index (CAQI), hourly background grid: 0–100, above 100 "very high".
    case europeanCAQI = "eu_caqi"
    /// The UK Daily Air Quality Index: bands 1 to 10.
    case ukDAQI = "uk_daqi"
    /// The US EPA Air Quality Index, 0 to 500, with the 2024 PM2.5 breakpoints.
    case usEPA = "us_epa"

    /// The index of one hour, from its concentrations in g/m³ in `AirPollution.pollutants` order:
    /// the highest sub-index; nil when none of the scale's pollutants is known.
    public func index(_ gramsPerCubicMeter: [Double?]) -> Double? {
        var highest: Double?
        for (pollutant, grams) in zip(AirPollution.pollutants, gramsPerCubicMeter) {
            guard let grams, let sub = subIndex(pollutant, microgramsPerCubicMeter: (grams * 1e12).rounded() / 1e6)
            else { continue }
            highest = max(highest ?? sub, sub)
        }
        // The CAQI is published in whole numbers; its sub-indices are continuous.
        return self == .europeanCAQI ? highest?.rounded() : highest
    }

    /// One pollutant's sub-index; nil for a pollutant the scale does not cover (NH₃ and NO in all three).
    func subIndex(_ pollutant: String, microgramsPerCubicMeter concentration: Double) -> Double? {
        switch self {
        case .europeanCAQI: CAQI.subIndex(pollutant, concentration)
        case .ukDAQI: DAQI.subIndex(pollutant, concentration)
        case .usEPA: USAQI.pollutant(pollutant).map { $0.subIndex($0.inTableUnit(concentration)) }
        }
    }
}

/// The US AQI (EPA, Technical Assistance Document EPA-454/B-24-002, May 2024, Table 6).
enum USAQI {
    /// The index ranges of the table's rows: Good, Moderate, Unhealthy for Sensitive Groups,
    /// Unhealthy, Very Unhealthy, Hazardous.
    static let indexRows: [ClosedRange<Double>] = [0...50, 51...100, 101...150, 151...200, 201...300, 301...500]

    /// One pollutant's column: concentrations truncated to the table's precision (`step`, in the
    /// table's unit) are counted in steps, so each row is a range of whole numbers.
    struct Pollutant {
        /// The table's precision: 0.1 µg/m³, 1 ppb, 0.1 ppm.
        let step: Double
        /// µg/m³ into the table's unit: gases at 25 °C and 1 atm (24.45 L/mol) over their molar mass.
        let fromMicrograms: Double
        /// In steps, per index row from the first.
        let rows: [ClosedRange<Int>]

        func inTableUnit(_ micrograms: Double) -> Double { micrograms * fromMicrograms }

        /// The sub-index of a concentration in the table's unit: truncated to the table's precision,
        /// then linear within its row, rounded to the nearest whole number; above the table, 500.
        func subIndex(_ concentration: Double) -> Double {
            // A hair above, so that 9.0 / 0.1 = 89.999… still counts as 90 steps.
            let steps = Int((max(0, concentration) / step + 1e-7).rounded(.down))
            for (row, range) in zip(USAQI.indexRows, rows) {
                guard range.contains(steps) else { continue }
                let fraction = Double(steps - range.lowerBound) / Double(range.upperBound - range.lowerBound)
                return (row.lowerBound + (row.upperBound - row.lowerBound) * fraction).rounded()
            }
            // Ozone between the 8-hour table's top (0.200 ppm) and the 1-hour table's 0.405 ppm (see `ozone`).
            if let top = rows.last, steps < top.lowerBound { return 300 }
            return 500
        }
    }

    static let litersPerMole = 24.45

    /// An hour's ozone is taken as the 8-hour mean up to 0.200 ppm (the 8-hour table's top, index
    /// 300), and as the 1-hour value from 0.405 ppm (301–500, which only the 1-hour table defines).
    /// In between, the higher of the two is 300: the 8-hour table's top, since the 1-hour table
    /// gives less (201–300 from 0.205 ppm) and the EPA reports the maximum of the two.
    static let ozone = Pollutant(
        step: 1, fromMicrograms: litersPerMole / 48.00,
        rows: [0...54, 55...70, 71...85, 86...105, 106...200, 405...604])
    static let table: [String: Pollutant] = [
        "pm2_5": Pollutant(
            step: 0.1, fromMicrograms: 1, rows: [0...90, 91...354, 355...554, 555...1254, 1255...2254, 2255...3254]),
        "pm10": Pollutant(
            step: 1, fromMicrograms: 1, rows: [0...54, 55...154, 155...254, 255...354, 355...424, 425...604]),
        "o3": ozone,
        // ppm: µg/m³ → mg/m³ → ppm.
        "co": Pollutant(
            step: 0.1, fromMicrograms: litersPerMole / 28.01 / 1000,
            rows: [0...44, 45...94, 95...124, 125...154, 155...304, 305...504]),
        "so2": Pollutant(
            step: 1, fromMicrograms: litersPerMole / 64.07,
            rows: [0...35, 36...75, 76...185, 186...304, 305...604, 605...1004]),
        "no2": Pollutant(
            step: 1, fromMicrograms: litersPerMole / 46.01,
            rows: [0...53, 54...100, 101...360, 361...649, 650...1249, 1250...2049]),
    ]

    static func pollutant(_ name: String) -> Pollutant? { table[name] }
}

/// The CAQI's hourly grid for background stations (CiteAir II, 2012), every pollutant of it, core and
/// auxiliary: OpenWeather's values are modelled for an area, not a roadside. Linear within each
/// band (0–25, 25–50, 50–75, 75–100), continued above 100 along the last band.
enum CAQI {
    /// µg/m³ at index 25, 50, 75 and 100.
    static let grid: [String: [Double]] = [
        "no2": [50, 100, 200, 400],
        "pm10": [25, 50, 90, 180],
        "pm2_5": [15, 30, 55, 110],
        "o3": [60, 120, 180, 240],
        "co": [5000, 7500, 10000, 20000],
        "so2": [50, 100, 350, 500],
    ]

    static func subIndex(_ pollutant: String, _ concentration: Double) -> Double? {
        guard let bounds = grid[pollutant] else { return nil }
        let value = max(0, concentration)
        var low = 0.0
        for (band, high) in bounds.enumerated() {
            if value <= high || band == bounds.count - 1 {
                return 25 * Double(band) + 25 * (value - low) / (high - low)
            }
            low = high
        }
        return nil
    }
}

/// The UK Daily Air Quality Index (Defra, 2013 bands): the concentration rounded to a whole µg/m³,
/// then the band it falls in; no carbon monoxide.
enum DAQI {
    /// µg/m³ at which bands 2 to 10 begin.
    static let bandStarts: [String: [Double]] = [
        "o3": [34, 67, 101, 121, 141, 161, 188, 214, 241],
        "no2": [68, 135, 201, 268, 335, 401, 468, 535, 601],
        "so2": [89, 178, 267, 355, 444, 533, 711, 888, 1065],
        "pm2_5": [12, 24, 36, 42, 48, 54, 59, 65, 71],
        "pm10": [17, 34, 51, 59, 67, 76, 84, 92, 101],
    ]

    static func subIndex(_ pollutant: String, _ concentration: Double) -> Double? {
        guard let starts = bandStarts[pollutant] else { return nil }
        let whole = concentration.rounded()
        return Double(1 + starts.filter { whole >= $0 }.count)
    }
}
