import Exposition
import OpenWeather

/// Air quality (`/data/2.5/air_pollution`): the index and each pollutant's concentration. The
/// data is modelled hourly, so polling more often spends requests on the same numbers.
struct AirPollutionSource: Source {
    static let name = "air_pollution"
    static let formerName: String? = "air-pollution"
    static let summary =
        """
        Air quality (/data/2.5/air_pollution): the AQI and eight pollutants; one more request per location each \
        interval.
        """
    static let enabledByDefault = false
    static let defaultInterval = Duration.seconds(3600)
    static let demoInterval = Duration.seconds(60)

    func request(for poll: PollFacts) -> APIRequest {
        AirPollution.request(latitude: poll.latitude, longitude: poll.longitude)
    }

    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> AirPollution {
        try AirPollutionDecoder.decode(body)
    }

    func gaps(of reading: AirPollution) -> AnswerGaps { reading.gaps }

    /// One gauge per field of the reading, first in `families`. The pollutants' and the scales'
    /// families carry a label of their own, so they are written by hand.
    static let gauges: [Gauge<AirPollution>] = [
        .init(
            name: "openweather_air_quality_index",
            help: "Air quality index (main.aqi): 1 good, 2 fair, 3 moderate, 4 poor, 5 very poor."
        ) { $0.airQualityIndex.map(Double.init) },
        .init(
            name: "openweather_air_pollution_observation_timestamp_seconds",
            help: "When OpenWeather modelled this air quality, Unix time (dt)."
        ) { $0.observationTime },
    ]

    private static let gaugeNames = gauges.map { Array($0.name.utf8) }
    private static let pollutant: StaticString = "openweather_air_pollutant_grams_per_cubic_meter"
    private static let scaleIndex: StaticString = "openweather_air_quality_scale_index"

    /// Positions in `families`, where each family's buffer is in the lines a shard is written to.
    private enum Family: FamilyPosition {
        case gauge(Int)
        case pollutant, scaleIndex

        var position: Int {
            switch self {
            case .gauge(let index): index
            case .pollutant: AirPollutionSource.gauges.count
            case .scaleIndex: AirPollutionSource.gauges.count + 1
            }
        }
    }

    var families: [MetricFamily] {
        Self.gauges.map(\.family) + [
            MetricFamily(
                name: Self.pollutant.description,
                help:
                    """
                    Concentration of a pollutant near the ground (components, µg/m³ × 1e-6): co, nh3, no, no2, o3, \
                    pm10, pm2_5, so2.
                    """
            ),
            MetricFamily(
                name: Self.scaleIndex.description,
                help:
                    """
                    Air quality index in each scale: openweather (main.aqi, 1-5), us_epa (0-500), eu_caqi (0-100+), \
                    uk_daqi (1-10); computed from this hour's concentrations.
                    """
            ),
        ]
    }

    func appendSeries(of shard: ShardSeries, readings: ShardReadings<AirPollution>, to lines: CollectorLines) {
        let shown = readings.shown
        guard !shown.isEmpty else { return }
        shard.withOpenings { openings in
            for (index, gauge) in Self.gauges.enumerated() {
                guard let buffer = lines[family: Family.gauge(index)] else { continue }
                for (position, reading) in shown {
                    guard let value = gauge.value(reading) else { continue }
                    buffer.append(Self.gaugeNames[index])
                    buffer.append(openings[position])
                    buffer.appendClosing(value)
                }
            }
            if let buffer = lines[family: Family.pollutant] {
                for (position, reading) in shown {
                    for (pollutant, value) in zip(AirPollution.pollutants, reading.gramsPerCubicMeter) {
                        guard let value else { continue }
                        buffer.append(Self.pollutant)
                        buffer.append(openings[position])
                        buffer.appendLabel("pollutant", pollutant)
                        buffer.appendClosing(value)
                    }
                }
            }
            if let buffer = lines[family: Family.scaleIndex] {
                for (position, reading) in shown {
                    for (scale, value) in Self.scales(of: reading) {
                        buffer.append(Self.scaleIndex)
                        buffer.append(openings[position])
                        buffer.appendLabel("scale", scale)
                        buffer.appendClosing(value)
                    }
                }
            }
        }
    }

    /// The `scale` label values in byte order with the reading's index in each: OpenWeather's own,
    /// and those computed from the concentrations (a scale none of whose pollutants came is left out).
    static func scales(of reading: AirPollution) -> [(scale: String, value: Double)] {
        let computed = AirQualityScale.allCases.compactMap { scale in
            scale.index(reading.gramsPerCubicMeter).map { (scale.rawValue, $0) }
        }
        let own = reading.airQualityIndex.map { [("openweather", Double($0))] } ?? []
        return (own + computed).sorted {
            $0.0.utf8.lexicographicallyPrecedes($1.0.utf8)
        }
    }
}
