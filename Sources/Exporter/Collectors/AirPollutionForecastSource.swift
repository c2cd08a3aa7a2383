import Exposition
import OpenWeather

/// The hourly air-quality forecast (`/data/2.5/air_pollution/forecast`, 4 days), shaped as the
/// weather forecast is: values at now + H (`hours_ahead`) and the highest index over the next W
/// (`window_hours`), for "poor air expected tomorrow". "Now" is the render's, so the lines are
/// re-rendered every `timePeriod` without a new poll.
struct AirPollutionForecastSource: Source {
    static let name = "air_pollution_forecast"
    static let summary =
        """
        Air quality forecast (/data/2.5/air_pollution/forecast): the AQI (OpenWeather's and US EPA, CAQI, DAQI) and \
        pollutants at fixed horizons ahead, the highest AQI over windows; one more request per location each interval.
        """
    static let enabledByDefault = false
    /// OpenWeather models it hourly.
    static let defaultInterval = Duration.seconds(3600)
    static let demoInterval = Duration.seconds(60)
    let timePeriod: Double? = 60

    /// Where it is read, as the weather forecast is: its horizons and windows (over which the highest
    /// index is shown), with the weather forecast's defaults.
    typealias Options = ForecastSource.Options

    var options = Options()

    /// The forecast's reach: 96 hourly steps from the current hour.
    static let longest = Duration.seconds(96 * 3600)

    static let horizonsSetting = Spans.setting(
        "air_pollution_forecast", "horizons",
        doc:
            "Times ahead at which the air quality forecast is shown (hours_ahead label), comma-separated, at most 96h.",
        default: Options().horizons, shown: "the weather forecast's (--collector.forecast.horizons) up to 96h",
        reach: longest)

    static let windowsSetting = Spans.setting(
        "air_pollution_forecast", "windows",
        doc:
            """
            Spans from now over which the highest forecast air quality index is shown (window_hours label), \
            comma-separated, at most 96h.
            """,
        default: Options().windows, shown: "the weather forecast's (--collector.forecast.windows) up to 96h",
        reach: longest)

    /// Unless given, the weather forecast's horizons and windows within this forecast's reach: the
    /// same `hours_ahead` and `window_hours` on both, so a dashboard or rule lines them up.
    static let settings = SourceSettings<Options>(flags: [horizonsSetting.flag, windowsSetting.flag]) {
        given, options throws(ConfigError) in
        var weather = ForecastSource.Options()
        try ForecastSource.settings.read(given, &weather)
        let horizons = weather.horizons.filter { $0 <= longest }
        let windows = weather.windows.filter { $0 <= longest }
        // Beyond this forecast's reach altogether: its own defaults, rather than no series at all.
        options.horizons = try given.value(horizonsSetting) ?? (horizons.isEmpty ? Options().horizons : horizons)
        options.windows = try given.value(windowsSetting) ?? (windows.isEmpty ? Options().windows : windows)
    }

    func request(for poll: PollFacts) -> APIRequest {
        AirPollutionForecast.request(
            latitude: poll.latitude, longitude: poll.longitude)
    }

    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> AirPollutionForecast {
        try AirPollutionForecastDecoder.decode(body)
    }

    func gaps(of reading: AirPollutionForecast) -> AnswerGaps { reading.gaps }

    private static let index: StaticString = "openweather_forecast_air_quality_index"
    private static let scaleIndex: StaticString = "openweather_forecast_air_quality_scale_index"
    private static let pollutant: StaticString = "openweather_forecast_air_pollutant_grams_per_cubic_meter"
    private static let maxIndex: StaticString = "openweather_forecast_air_quality_max_index"
    private static let scaleMaxIndex: StaticString = "openweather_forecast_air_quality_scale_max_index"

    /// Positions in `families`, where each family's buffer is in the lines a shard is written to.
    /// Every family is labelled by horizon or window, most also by scale or pollutant, so none is
    /// a `Gauge` record: each is written by hand.
    private enum Family: Int, FamilyPosition {
        case index, scaleIndex, pollutant, maxIndex, scaleMaxIndex
    }

    var families: [MetricFamily] {
        [
            MetricFamily(
                name: Self.index.description,
                help: "Forecast air quality index (OpenWeather's 1 to 5) of the hour covering hours_ahead."),
            MetricFamily(
                name: Self.scaleIndex.description,
                help:
                    """
                    Forecast air quality index of the hour covering hours_ahead, in each scale: openweather (1-5), \
                    us_epa (0-500), eu_caqi (0-100+), uk_daqi (1-10); computed from that hour's concentrations.
                    """
            ),
            MetricFamily(
                name: Self.pollutant.description,
                help:
                    """
                    Forecast concentration of a pollutant near the ground at hours_ahead, interpolated between hours: \
                    co, nh3, no, no2, o3, pm10, pm2_5, so2.
                    """
            ),
            MetricFamily(
                name: Self.maxIndex.description,
                help: "Highest forecast air quality index (OpenWeather's 1 to 5) over the next window_hours."),
            MetricFamily(
                name: Self.scaleMaxIndex.description,
                help:
                    """
                    Highest forecast air quality index over the next window_hours, in each scale (see \
                    openweather_forecast_air_quality_scale_index).
                    """
            ),
        ]
    }

    /// The `scale` label values in byte order, each with its column of `scaleIndices` (nil:
    /// OpenWeather's own index, as sent).
    static let scales: [(label: String, column: Int?)] =
        ([("openweather", nil)] + AirQualityScale.allCases.enumerated().map { ($0.element.rawValue, $0.offset) })
        .sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }

    static func value(_ forecast: AirPollutionForecast, step: Int, column: Int?) -> Double? {
        guard let column else { return forecast.steps[step].airQualityIndex.map(Double.init) }
        return forecast.scaleIndices[step][column]
    }

    /// The highest index of the hours in `span`. OpenWeather's is absent when an hour lacks it (the
    /// highest of fewer hours could mislead); a computed scale's takes the hours that have one.
    static func highest(_ forecast: AirPollutionForecast, _ span: Range<Int>, column: Int?) -> Double? {
        let values = span.map { value(forecast, step: $0, column: column) }
        if column == nil && values.contains(nil) { return nil }
        return values.compactMap { $0 }.max()
    }

    func appendSeries(of shard: ShardSeries, readings: ShardReadings<AirPollutionForecast>, to lines: CollectorLines) {
        let shown = readings.shown
        guard !shown.isEmpty else { return }
        let now = shard.now
        let horizons = Spans.labelled(options.horizons)
        let windows = Spans.labelled(options.windows)
        let indexLines = lines[family: Family.index]
        let scaleIndexLines = lines[family: Family.scaleIndex]
        let pollutantLines = lines[family: Family.pollutant]
        let maxIndexLines = lines[family: Family.maxIndex]
        let scaleMaxIndexLines = lines[family: Family.scaleMaxIndex]
        shard.withOpenings { openings in
            for (position, forecast) in shown {
                let covering = horizons.map { forecast.step(covering: now + $0.0.seconds) }
                let spans = windows.map { forecast.steps(from: now, to: now + $0.0.seconds) }
                if let buffer = indexLines {
                    for (step, (_, label)) in zip(covering, horizons) {
                        guard let step, let index = Self.value(forecast, step: step, column: nil) else { continue }
                        buffer.append(Self.index)
                        buffer.append(openings[position])
                        buffer.appendLabel("hours_ahead", label)
                        buffer.appendClosing(index)
                    }
                }
                if let buffer = scaleIndexLines {
                    for scale in Self.scales {
                        for (step, (_, label)) in zip(covering, horizons) {
                            guard let step, let value = Self.value(forecast, step: step, column: scale.column) else {
                                continue
                            }
                            buffer.append(Self.scaleIndex)
                            buffer.append(openings[position])
                            buffer.appendLabel("scale", scale.label)
                            buffer.appendLabel("hours_ahead", label)
                            buffer.appendClosing(value)
                        }
                    }
                }
                if let buffer = pollutantLines {
                    let concentrations = horizons.map { forecast.gramsPerCubicMeter(at: now + $0.0.seconds) }
                    for (index, pollutant) in AirPollution.pollutants.enumerated() {
                        for (values, (_, label)) in zip(concentrations, horizons) {
                            guard let value = values?[index] else { continue }
                            buffer.append(Self.pollutant)
                            buffer.append(openings[position])
                            buffer.appendLabel("pollutant", pollutant)
                            buffer.appendLabel("hours_ahead", label)
                            buffer.appendClosing(value)
                        }
                    }
                }
                if let buffer = maxIndexLines {
                    for (span, (_, label)) in zip(spans, windows) {
                        guard let span, let highest = Self.highest(forecast, span, column: nil) else { continue }
                        buffer.append(Self.maxIndex)
                        buffer.append(openings[position])
                        buffer.appendLabel("window_hours", label)
                        buffer.appendClosing(highest)
                    }
                }
                if let buffer = scaleMaxIndexLines {
                    for scale in Self.scales {
                        for (span, (_, label)) in zip(spans, windows) {
                            guard let span, let highest = Self.highest(forecast, span, column: scale.column) else {
                                continue
                            }
                            buffer.append(Self.scaleMaxIndex)
                            buffer.append(openings[position])
                            buffer.appendLabel("scale", scale.label)
                            buffer.appendLabel("window_hours", label)
                            buffer.appendClosing(highest)
                        }
                    }
                }
            }
        }
    }
}
