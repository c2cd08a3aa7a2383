import Exposition
import OpenWeather

/// Current weather (`/data/2.5/weather`). A location whose reading is stale (or that never
/// succeeded) shows no weather at all, so Prometheus marks its series stale instead of graphing
/// an old value as if it were current.
struct WeatherSource: Source {
    static let name = "weather"
    static let summary =
        "Current weather (/data/2.5/weather): temperature, humidity, pressure, wind, clouds, rain, snow, sun."
    static let enabledByDefault = true
    static let defaultInterval = Duration.seconds(600)
    static let demoInterval = Duration.seconds(15)
    /// `--poll.interval`: the interval's name from before every collector had its own.
    static let settings = SourceSettings<NoOptions>(
        flags: [
            .formerName("poll.interval", key: "poll.interval", of: Settings.collectorInterval(WeatherSource()).flag)
        ]
    ) { _, _ throws(ConfigError) in }

    func request(for poll: PollFacts) -> APIRequest {
        CurrentWeather.request(
            latitude: poll.latitude, longitude: poll.longitude,
            language: poll.language)
    }

    func decode(_ body: [UInt8], for location: Location) throws(OpenWeatherError) -> CurrentWeather {
        try WeatherDecoder.decode(body)
    }

    func gaps(of reading: CurrentWeather) -> AnswerGaps { reading.gaps }

    func glance(at reading: CurrentWeather) -> String? { "\(reading.temperatureCelsius)\u{A0}°C" }

    /// The reading and its indices, worked out once per reading by the render that reads them.
    struct Observed {
        let reading: CurrentWeather
        let thermal: ThermalIndex.Values
    }

    /// One gauge per reading field, in this order: a new gauge is one record.
    static let gauges: [Gauge<Observed>] = [
        .init(name: "openweather_temperature_celsius", help: "Air temperature (main.temp).") {
            $0.reading.temperatureCelsius
        },
        .init(
            name: "openweather_feels_like_celsius",
            help: "Temperature as a person feels it (main.feels_like), when reported."
        ) { $0.reading.feelsLikeCelsius },
        .init(
            name: "openweather_temperature_min_celsius",
            help: "Lowest temperature observed in the area now (main.temp_min), not the day's minimum."
        ) { $0.reading.temperatureMinCelsius },
        .init(
            name: "openweather_temperature_max_celsius",
            help: "Highest temperature observed in the area now (main.temp_max), not the day's maximum."
        ) { $0.reading.temperatureMaxCelsius },
        .init(
            name: "openweather_humidity_ratio", help: "Relative humidity, 0 to 1 (main.humidity / 100), when reported."
        ) { $0.reading.humidityRatio },
        .init(
            name: "openweather_pressure_pascals",
            help: "Atmospheric pressure at sea level (main.sea_level, else main.pressure, × 100), when reported."
        ) { $0.reading.pressurePascals },
        .init(
            name: "openweather_ground_level_pressure_pascals",
            help: "Atmospheric pressure at ground level (main.grnd_level × 100), when reported."
        ) { $0.reading.groundLevelPressurePascals },
        .init(name: "openweather_wind_speed_meters_per_second", help: "Wind speed (wind.speed), when reported.") {
            $0.reading.windSpeedMetersPerSecond
        },
        .init(name: "openweather_wind_gust_meters_per_second", help: "Wind gust speed (wind.gust), when reported.") {
            $0.reading.windGustMetersPerSecond
        },
        .init(
            name: "openweather_wind_direction_degrees",
            help: "Direction the wind comes from, meteorological degrees (wind.deg), when reported."
        ) { $0.reading.windDirectionDegrees },
        .init(name: "openweather_cloudiness_ratio", help: "Cloud cover, 0 to 1 (clouds.all / 100), when reported.") {
            $0.reading.cloudinessRatio
        },
        .init(
            name: "openweather_visibility_meters",
            help: "Visibility, capped at 10 km by OpenWeather (visibility), when reported."
        ) { $0.reading.visibilityMeters },
        .init(name: "openweather_rain_1h_meters", help: fallenHelp("Rain", "rain", "1h", "hour")) {
            $0.reading.rain1hMeters
        },
        .init(name: "openweather_rain_3h_meters", help: fallenHelp("Rain", "rain", "3h", "3 hours")) {
            $0.reading.rain3hMeters
        },
        .init(name: "openweather_snow_1h_meters", help: fallenHelp("Snow", "snow", "1h", "hour")) {
            $0.reading.snow1hMeters
        },
        .init(name: "openweather_snow_3h_meters", help: fallenHelp("Snow", "snow", "3h", "3 hours")) {
            $0.reading.snow3hMeters
        },
        .init(
            name: "openweather_sunrise_timestamp_seconds",
            help: "Today's sunrise, Unix time (sys.sunrise); absent in polar day and night."
        ) { $0.reading.sunrise },
        .init(
            name: "openweather_sunset_timestamp_seconds",
            help: "Today's sunset, Unix time (sys.sunset); absent in polar day and night."
        ) { $0.reading.sunset },
        .init(
            name: "openweather_observation_timestamp_seconds",
            help: "When OpenWeather computed this reading, Unix time (dt)."
        ) { $0.reading.observationTime },
        .init(
            name: "openweather_timezone_offset_seconds",
            help: "Offset of local time from UTC (timezone), when reported."
        ) { $0.reading.timezoneOffsetSeconds },
        .init(
            name: "openweather_condition_id",
            help: """
                OpenWeather condition code of the primary condition (weather[0].id): 2xx thunderstorm, 3xx drizzle, \
                5xx rain, 6xx snow, 7xx atmosphere, 800 clear, 80x clouds.
                """
        ) { $0.reading.primaryCondition.map { Double($0.id) } },
        .init(
            name: "openweather_heat_index_celsius",
            help: """
                Heat index, the US National Weather Service's (Steadman's simple formula, else the Rothfusz regression \
                with its adjustments), from the temperature and humidity; the temperature below 26.7 °C or where the \
                index is lower, at most 58.3 °C (the NWS chart's top) unless the temperature is higher; absent \
                without the humidity.
                """
        ) { $0.thermal.heatIndex },
        .init(
            name: "openweather_humidex_celsius",
            help: """
                Humidex, Environment Canada's (Masterton and Richardson 1979), from the temperature and humidity; \
                absent without the humidity.
                """
        ) { $0.thermal.humidex },
        .init(
            name: "openweather_wind_chill_celsius",
            help: """
                Wind chill, the 2001 index of Environment Canada and the US NWS (wind at 10 m in km/h); the \
                temperature above 10 °C or in wind under 4.8 km/h; absent without the wind speed.
                """
        ) { $0.thermal.windChill },
        .init(
            name: "openweather_wet_bulb_temperature_celsius",
            help: """
                Wet-bulb temperature, Stull's (2011) formula at sea-level pressure; the temperature at 100 % \
                humidity; absent without the humidity or outside Stull's domain (humidity 5 to 99 %, -20 to 50 °C).
                """
        ) { $0.thermal.wetBulb },
        .init(
            name: "openweather_apparent_temperature_celsius",
            help: """
                Apparent temperature, the Australian Bureau of Meteorology's (Steadman 1994, without radiation), from \
                the temperature, humidity and wind; absent without the humidity or the wind speed; not OpenWeather's \
                feels_like.
                """
        ) { $0.thermal.apparentTemperature },
    ]

    static func fallenHelp(_ what: String, _ key: String, _ span: String, _ words: String) -> String {
        "\(what) in the last \(words) (\(key).\(span) / 1000); 0 when the answer has no \(key), absent when its "
            + "\(key) has no \(span)."
    }

    var families: [MetricFamily] {
        Self.gauges.map(\.family) + [
            MetricFamily(
                name: Self.conditionInfo.description, help: "The primary weather condition (weather[0]); always 1."),
            MetricFamily(
                name: Self.secondaryConditionInfo.description,
                help: "Another weather condition reported beside the primary one (weather[1...], \"mist\" beside "
                    + "\"shower rain\"), by its code; always 1."),
            MetricFamily(
                name: Self.locationInfo.description,
                help:
                    """
                    Where the location is: the coordinates polled, and the place's name, state and country (from the \
                    geocoder for places given by name, else from the weather answer; \"\" over the ocean); always 1.
                    """
            ),
        ]
    }

    /// Positions in `families`, where each family's buffer is in the lines a shard is written to:
    /// the fields' in their order, then the conditions' and the location's.
    private enum Family: FamilyPosition {
        case gauge(Int)
        case condition, secondaryCondition, location

        var position: Int {
            switch self {
            case .gauge(let index): index
            case .condition: WeatherSource.gauges.count
            case .secondaryCondition: WeatherSource.gauges.count + 1
            case .location: WeatherSource.gauges.count + 2
            }
        }
    }

    private static let conditionInfo: StaticString = "openweather_condition_info"
    private static let secondaryConditionInfo: StaticString = "openweather_secondary_condition_info"
    private static let locationInfo: StaticString = "openweather_location_info"
    private static let gaugeNames = gauges.map { Array($0.name.utf8) }

    /// Written straight from the readings: no family, sample or label array per series. Family by
    /// family, so each family's buffer is fetched once per shard.
    func appendSeries(of shard: ShardSeries, readings: ShardReadings<CurrentWeather>, to lines: CollectorLines) {
        let count = shard.locations.count
        // Which locations show weather, and their values field by field.
        var shown: [(position: Int, reading: CurrentWeather)] = []
        var values = [Double?](repeating: nil, count: Self.gauges.count * count)
        for position in shard.locations.indices {
            guard let reading = readings[position] else { continue }
            shown.append((position, reading))
            let observed = Observed(
                reading: reading,
                thermal: ThermalIndex.Values(
                    temperature: reading.temperatureCelsius, humidityRatio: reading.humidityRatio,
                    windSpeed: reading.windSpeedMetersPerSecond))
            for (index, gauge) in Self.gauges.enumerated() {
                values[index * count + position] = gauge.value(observed)
            }
        }
        guard !shown.isEmpty else { return }
        shard.withOpenings { openings in
            for index in Self.gauges.indices {
                guard let buffer = lines[family: Family.gauge(index)] else { continue }
                Self.gaugeNames[index].withUnsafeBufferPointer { name in
                    for (position, _) in shown {
                        guard let value = values[index * count + position] else { continue }
                        buffer.appendLine(name: name, opening: openings[position], value: value)
                    }
                }
            }
            if let buffer = lines[family: Family.condition] {
                for (position, reading) in shown {
                    guard let primary = reading.primaryCondition else { continue }
                    buffer.append(Self.conditionInfo)
                    buffer.append(openings[position])
                    buffer.appendLabel("main", primary.main)
                    buffer.appendLabel("description", primary.description)
                    buffer.appendLabel("icon", primary.icon)
                    buffer.appendClosing(1)
                }
            }
            if let buffer = lines[family: Family.secondaryCondition] {
                for (position, reading) in shown {
                    for condition in Self.labelOrder(reading.secondaryConditions) {
                        buffer.append(Self.secondaryConditionInfo)
                        buffer.append(openings[position])
                        buffer.appendLabel("id", String(condition.id))
                        buffer.appendLabel("main", condition.main)
                        buffer.appendLabel("description", condition.description)
                        buffer.appendLabel("icon", condition.icon)
                        buffer.appendClosing(1)
                    }
                }
            }
            if let buffer = lines[family: Family.location] {
                for (position, reading) in shown {
                    buffer.append(Self.locationInfo)
                    buffer.append(openings[position])
                    let place = shard.locations[position].resolved
                    buffer.appendLabel("city", place?.name ?? reading.cityName)
                    buffer.appendLabel("country", place?.country ?? reading.country ?? "")
                    let coordinates = shard.locations[position].coordinates
                    // Known from the location, else from the answer; "" (never a made-up 0) without either.
                    if let latitude = coordinates?.latitude ?? reading.latitude {
                        buffer.appendLabel("latitude", latitude)
                    } else {
                        buffer.appendLabel("latitude", "")
                    }
                    if let longitude = coordinates?.longitude ?? reading.longitude {
                        buffer.appendLabel("longitude", longitude)
                    } else {
                        buffer.appendLabel("longitude", "")
                    }
                    buffer.appendLabel("state", place?.state ?? "")
                    buffer.appendClosing(1)
                }
            }
        }
    }

    /// Each condition once, in the order of their label values (`id` as text, then the words).
    static func labelOrder(_ conditions: [CurrentWeather.Condition]) -> [CurrentWeather.Condition] {
        guard conditions.count > 1 else { return conditions }
        func key(_ condition: CurrentWeather.Condition) -> [String] {
            [String(condition.id), condition.main, condition.description, condition.icon]
        }
        var seen: Set<[String]> = []
        return conditions.filter { seen.insert(key($0)).inserted }.sorted {
            key($0).lexicographicallyPrecedes(key($1)) { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }
}
