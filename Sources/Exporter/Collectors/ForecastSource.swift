import Exposition
import OpenWeather

/// The 5 day / 3 hour forecast (`/data/2.5/forecast`), shaped as gauges that stay meaningful as
/// time passes (Prometheus stores no future samples): the value forecast for now + H at fixed
/// horizons, and extremes and totals over the next W. "Now" is the render's, so the lines are
/// re-rendered every `timePeriod` even without a new poll.
struct ForecastSource: Source {
    static let name = "forecast"
    static let summary =
        """
        5 day / 3 hour forecast (/data/2.5/forecast): values at fixed horizons ahead and extremes over windows, which \
        the forecast alerts read; one more request per location each interval.
        """
    /// On: the forecast alerts (below and above the thresholds, heavy rain) have nothing to read without it.
    static let enabledByDefault = true
    /// OpenWeather recomputes it about every 3 hours.
    static let defaultInterval = Duration.seconds(3600)
    static let demoInterval = Duration.seconds(60)
    let timePeriod: Double? = 60

    /// Where the forecast is read and summed up.
    struct Options: Sendable, Equatable {
        /// Ahead of now, in rising order (`hours_ahead`).
        var horizons: [Duration] = [3, 6, 12, 24, 48].map { .seconds($0 * 3600) }
        /// Spans from now over which extremes and totals are shown, rising (`window_hours`).
        var windows: [Duration] = [24, 72].map { .seconds($0 * 3600) }
    }

    var options = Options()
    var horizons: [Duration] { options.horizons }
    var windows: [Duration] { options.windows }

    /// The free forecast's reach.
    static let longest = Duration.seconds(120 * 3600)

    static let horizonsSetting = Spans.setting(
        "forecast", "horizons",
        doc: "Times ahead at which the forecast is shown (hours_ahead label), comma-separated, at most 120h.",
        default: Options().horizons,
        shown: Options().horizons.map { Spans.hoursLabel($0) + "h" }.joined(separator: ","), reach: longest)

    static let windowsSetting = Spans.setting(
        "forecast", "windows",
        doc:
            """
            Spans from now over which the forecast's extremes and totals are shown (window_hours label), \
            comma-separated, at most 120h.
            """,
        default: Options().windows, shown: Options().windows.map { Spans.hoursLabel($0) + "h" }.joined(separator: ","),
        reach: longest)

    static let settings = SourceSettings<Options>(flags: [horizonsSetting.flag, windowsSetting.flag]) {
        given, options throws(ConfigError) in
        options.horizons = try given.resolved(horizonsSetting)
        options.windows = try given.resolved(windowsSetting)
    }

    func request(for poll: PollFacts) -> APIRequest {
        Forecast.request(
            latitude: poll.latitude, longitude: poll.longitude,
            language: poll.language)
    }

    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> Forecast {
        try ForecastDecoder.decode(body)
    }

    func gaps(of reading: Forecast) -> AnswerGaps { reading.gaps }

    /// A family at the horizons: interpolated between steps, or the value of the step covering the time.
    struct AtHorizon: Sendable {
        let name: String
        let help: String
        let interpolated: Bool
        let value: @Sendable (Forecast.Step) -> Double?
    }

    static let atHorizons: [AtHorizon] = [
        .init(
            name: "openweather_forecast_dew_point_celsius", help: "Forecast dew point at hours_ahead (One Call only).",
            interpolated: true
        ) { $0.dewPointCelsius },
        .init(
            name: "openweather_forecast_uv_index", help: "Forecast UV index at hours_ahead (One Call only).",
            interpolated: true
        ) { $0.uvIndex },
        .init(
            name: "openweather_forecast_cloudiness_ratio", help: "Forecast cloud cover, 0 to 1, at hours_ahead.",
            interpolated: true
        ) { $0.cloudinessRatio },
        .init(
            name: "openweather_forecast_condition_id",
            help: "Forecast primary condition code (weather[0].id) of the step covering hours_ahead.",
            interpolated: false
        ) { $0.conditionID.map(Double.init) },
        .init(
            name: "openweather_forecast_feels_like_celsius",
            help: "Forecast felt temperature at hours_ahead, interpolated between steps.", interpolated: true
        ) {
            $0.feelsLikeCelsius
        },
        .init(
            name: "openweather_forecast_humidity_ratio", help: "Forecast relative humidity, 0 to 1, at hours_ahead.",
            interpolated: true
        ) { $0.humidityRatio },
        .init(
            name: "openweather_forecast_precipitation_probability_ratio",
            help: "Forecast probability of precipitation (pop), 0 to 1, of the step covering hours_ahead.",
            interpolated: false
        ) { $0.precipitationProbability },
        .init(
            name: "openweather_forecast_pressure_pascals", help: "Forecast sea-level pressure at hours_ahead.",
            interpolated: true
        ) { $0.pressurePascals },
        .init(name: "openweather_forecast_rain_meters", help: rainHelp("rain"), interpolated: false) { $0.rainMeters },
        .init(name: "openweather_forecast_snow_meters", help: rainHelp("snow"), interpolated: false) { $0.snowMeters },
        .init(
            name: "openweather_forecast_temperature_celsius",
            help: "Forecast air temperature at hours_ahead, interpolated between steps.", interpolated: true
        ) {
            $0.temperatureCelsius
        },
        .init(
            name: "openweather_forecast_visibility_meters",
            help: "Forecast visibility at hours_ahead, interpolated between steps, when reported.",
            interpolated: true
        ) { $0.visibilityMeters },
        .init(
            name: "openweather_forecast_wind_direction_degrees",
            help: "Forecast direction the wind comes from, meteorological degrees, of the step covering hours_ahead.",
            interpolated: false
        ) { $0.windDirectionDegrees },
        .init(
            name: "openweather_forecast_wind_gust_meters_per_second",
            help: "Forecast wind gust speed at hours_ahead, when reported.", interpolated: true
        ) {
            $0.windGustMetersPerSecond
        },
        .init(
            name: "openweather_forecast_wind_speed_meters_per_second", help: "Forecast wind speed at hours_ahead.",
            interpolated: true
        ) { $0.windSpeedMetersPerSecond },
    ]

    /// A step's amount as sent, never divided into hours nobody forecast: how long a step is depends on
    /// the source, so the HELP says it (the window families mean the same whatever the source).
    static func rainHelp(_ kind: String) -> String {
        "Forecast \(kind) of the step covering hours_ahead, as sent: from the 5 day forecast a 3-hour step "
            + "(\(kind).3h / 1000); from One Call an hour (hourly \(kind).1h; One Call 4.0 also a quarter hour) "
            + "up to its last hour, then a whole day's total (daily.\(kind))."
    }

    /// Families over the next `window`.
    static let overWindows: [Gauge<Forecast.Window>] = [
        .init(
            name: "openweather_forecast_precipitation_probability_max_ratio",
            help: "Highest forecast probability of precipitation over the next window_hours; absent when a step "
                + "in it has none."
        ) { $0.precipitationProbabilityMax },
        .init(
            name: "openweather_forecast_temperature_max_celsius",
            help: "Highest forecast temperature over the next window_hours."
        ) { $0.temperatureMaxCelsius },
        .init(
            name: "openweather_forecast_temperature_min_celsius",
            help: "Lowest forecast temperature over the next window_hours."
        ) { $0.temperatureMinCelsius },
        .init(name: "openweather_forecast_window_rain_meters", help: windowHelp("rain")) { $0.rainMeters },
        .init(name: "openweather_forecast_window_snow_meters", help: windowHelp("snow")) { $0.snowMeters },
        .init(
            name: "openweather_forecast_wind_gust_max_meters_per_second",
            help: "Strongest forecast wind gust of the steps in the next window_hours, when reported."
        ) { $0.windGustMaxMetersPerSecond },
        .init(
            name: "openweather_forecast_heat_index_max_celsius",
            help: "Highest forecast heat index (US NWS: the simple formula, else the Rothfusz regression) over the "
                + "next window_hours; absent when a step in it has no humidity."
        ) { $0.heatIndexMaxCelsius },
        .init(
            name: "openweather_forecast_wet_bulb_temperature_max_celsius",
            help: "Highest forecast wet-bulb temperature (Stull 2011; the temperature at 100 % humidity) over the "
                + "next window_hours; absent when a step in it has no humidity or is outside Stull's domain "
                + "(humidity 5 to 99 %, -20 to 50 °C)."
        ) { $0.wetBulbMaxCelsius },
        .init(
            name: "openweather_forecast_wind_chill_min_celsius",
            help: "Lowest forecast wind chill (the 2001 index; the temperature above 10 °C or in wind under 4.8 "
                + "km/h) over the next window_hours; absent when a step in it has no wind speed."
        ) { $0.windChillMinCelsius },
    ]

    static func windowHelp(_ kind: String) -> String {
        "Forecast \(kind) over the next window_hours, whatever the source: each step's amount in proportion to "
            + "the part of its span inside (a One Call day's total over its 24 hours); absent when a step in it "
            + "has none."
    }

    /// One gauge per field of the whole forecast, after the window families in `families`.
    static let gauges: [Gauge<Forecast>] = [
        .init(
            name: "openweather_forecast_issued_timestamp_seconds",
            help:
                """
                When the forecast was made, Unix time: One Call's current.dt; the 2.5 answer has none, so the \
                3-hour mark before its first step (it is made within those 3 hours).
                """
        ) { $0.issued }
    ]

    private static let gaugeNames = gauges.map { Array($0.name.utf8) }

    /// Positions in `families`, where each family's buffer is in the lines a shard is written to:
    /// the horizon families, the window families, then the whole forecast's.
    private enum Family: FamilyPosition {
        case atHorizon(Int)
        case overWindow(Int)
        case gauge(Int)

        var position: Int {
            switch self {
            case .atHorizon(let number): number
            case .overWindow(let number): ForecastSource.atHorizons.count + number
            case .gauge(let number): ForecastSource.atHorizons.count + ForecastSource.overWindows.count + number
            }
        }
    }

    var families: [MetricFamily] {
        Self.atHorizons.map { MetricFamily(name: $0.name, help: $0.help) }
            + Self.overWindows.map(\.family) + Self.gauges.map(\.family)
    }

    func appendSeries(of shard: ShardSeries, readings: ShardReadings<Forecast>, to lines: CollectorLines) {
        let shown = readings.shown
        guard !shown.isEmpty else { return }
        let now = shard.now
        let horizons = Spans.labelled(horizons)
        let windows = Spans.labelled(windows)
        shard.withOpenings { openings in
            for (number, family) in Self.atHorizons.enumerated() {
                guard let buffer = lines[family: Family.atHorizon(number)] else { continue }
                let name = Array(family.name.utf8)
                for (position, forecast) in shown {
                    for (horizon, label) in horizons {
                        let time = now + horizon.seconds
                        let value =
                            family.interpolated
                            ? forecast.value(family.value, at: time)
                            : forecast.step(covering: time).flatMap(family.value)
                        guard let value else { continue }
                        buffer.append(name)
                        buffer.append(openings[position])
                        buffer.appendLabel("hours_ahead", label)
                        buffer.appendClosing(value)
                    }
                }
            }
            let summaries = shown.map { _, forecast in
                windows.map { forecast.window(from: now, to: now + $0.0.seconds) }
            }
            for (number, family) in Self.overWindows.enumerated() {
                guard let buffer = lines[family: Family.overWindow(number)] else { continue }
                let name = Array(family.name.utf8)
                for ((position, _), perWindow) in zip(shown, summaries) {
                    for (summary, (_, label)) in zip(perWindow, windows) {
                        guard let summary, let value = family.value(summary) else { continue }
                        buffer.append(name)
                        buffer.append(openings[position])
                        buffer.appendLabel("window_hours", label)
                        buffer.appendClosing(value)
                    }
                }
            }
            for (index, gauge) in Self.gauges.enumerated() {
                guard let buffer = lines[family: Family.gauge(index)] else { continue }
                for (position, forecast) in shown {
                    guard let value = gauge.value(forecast) else { continue }
                    buffer.append(Self.gaugeNames[index])
                    buffer.append(openings[position])
                    buffer.appendClosing(value)
                }
            }
        }
    }
}
