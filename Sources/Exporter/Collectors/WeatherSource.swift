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

    /// One gauge per reading field, in this order.
    private enum Field: Int, CaseIterable {
        case temperature, feelsLike, temperatureMin, temperatureMax, humidity, pressure, groundLevelPressure
        case windSpeed, windGust, windDirection, cloudiness, visibility, rain1h, rain3h, snow1h, snow3h
        case sunrise, sunset, observation, timezoneOffset, condition
        case heatIndex, humidex, windChill, wetBulb, apparentTemperature

        var name: String {
            switch self {
            case .temperature: "openweather_temperature_celsius"
            case .feelsLike: "openweather_feels_like_celsius"
            case .temperatureMin: "openweather_temperature_min_celsius"
            case .temperatureMax: "openweather_temperature_max_celsius"
            case .humidity: "openweather_humidity_ratio"
            case .pressure: "openweather_pressure_pascals"
            case .groundLevelPressure: "openweather_ground_level_pressure_pascals"
            case .windSpeed: "openweather_wind_speed_meters_per_second"
            case .windGust: "openweather_wind_gust_meters_per_second"
            case .windDirection: "openweather_wind_direction_degrees"
            case .cloudiness: "openweather_cloudiness_ratio"
            case .visibility: "openweather_visibility_meters"
            case .rain1h: "openweather_rain_1h_meters"
            case .rain3h: "openweather_rain_3h_meters"
            case .snow1h: "openweather_snow_1h_meters"
            case .snow3h: "openweather_snow_3h_meters"
            case .sunrise: "openweather_sunrise_timestamp_seconds"
            case .sunset: "openweather_sunset_timestamp_seconds"
            case .observation: "openweather_observation_timestamp_seconds"
            case .timezoneOffset: "openweather_timezone_offset_seconds"
            case .condition: "openweather_condition_id"
            case .heatIndex: "openweather_heat_index_celsius"
            case .humidex: "openweather_humidex_celsius"
            case .windChill: "openweather_wind_chill_celsius"
            case .wetBulb: "openweather_wet_bulb_temperature_celsius"
            case .apparentTemperature: "openweather_apparent_temperature_celsius"
            }
        }

        var help: String {
            switch self {
            case .temperature: "Air temperature (main.temp)."
            case .feelsLike: "Temperature as a person feels it (main.feels_like), when reported."
            case .temperatureMin: "Lowest temperature observed in the area now (main.temp_min), not the day's minimum."
            case .temperatureMax: "Highest temperature observed in the area now (main.temp_max), not the day's maximum."
            case .humidity: "Relative humidity, 0 to 1 (main.humidity / 100), when reported."
            case .pressure:
                "Atmospheric pressure at sea level (main.sea_level, else main.pressure, × 100), when reported."
            case .groundLevelPressure: "Atmospheric pressure at ground level (main.grnd_level × 100), when reported."
            case .windSpeed: "Wind speed (wind.speed), when reported."
            case .windGust: "Wind gust speed (wind.gust), when reported."
            case .windDirection: "Direction the wind comes from, meteorological degrees (wind.deg), when reported."
            case .cloudiness: "Cloud cover, 0 to 1 (clouds.all / 100), when reported."
            case .visibility: "Visibility, capped at 10 km by OpenWeather (visibility), when reported."
            case .rain1h: Self.fallenHelp("Rain", "rain", "1h", "hour")
            case .rain3h: Self.fallenHelp("Rain", "rain", "3h", "3 hours")
            case .snow1h: Self.fallenHelp("Snow", "snow", "1h", "hour")
            case .snow3h: Self.fallenHelp("Snow", "snow", "3h", "3 hours")
            case .sunrise: "Today's sunrise, Unix time (sys.sunrise); absent in polar day and night."
            case .sunset: "Today's sunset, Unix time (sys.sunset); absent in polar day and night."
            case .observation: "When OpenWeather computed this reading, Unix time (dt)."
            case .timezoneOffset: "Offset of local time from UTC (timezone), when reported."
            case .condition:
                """
                OpenWeather condition code of the primary condition (weather[0].id): 2xx thunderstorm, 3xx drizzle, \
                5xx rain, 6xx snow, 7xx atmosphere, 800 clear, 80x clouds.
                """
            case .heatIndex:
                """
                Heat index, the US National Weather Service's (Steadman's simple formula, else the Rothfusz regression \
                with its adjustments), from the temperature and humidity; the temperature below 26.7 °C or where the \
                index is lower, at most 58.3 °C (the NWS chart's top) unless the temperature is higher; absent \
                without the humidity.
                """
            case .humidex:
                """
                Humidex, Environment Canada's (Masterton and Richardson 1979), from the temperature and humidity; \
                absent without the humidity.
                """
            case .windChill:
                """
                Wind chill, the 2001 index of Environment Canada and the US NWS (wind at 10 m in km/h); the \
                temperature above 10 °C or in wind under 4.8 km/h; absent without the wind speed.
                """
            case .wetBulb:
                """
                Wet-bulb temperature, Stull's (2011) formula at sea-level pressure; the temperature at 100 % \
                humidity; absent without the humidity or outside Stull's domain (humidity 5 to 99 %, -20 to 50 °C).
                """
            case .apparentTemperature:
                """
                Apparent temperature, the Australian Bureau of Meteorology's (Steadman 1994, without radiation), from \
                the temperature, humidity and wind; absent without the humidity or the wind speed; not OpenWeather's \
                feels_like.
                """
            }
        }

        static func fallenHelp(_ what: String, _ key: String, _ span: String, _ words: String) -> String {
            "\(what) in the last \(words) (\(key).\(span) / 1000); 0 when the answer has no \(key), absent when its "
                + "\(key) has no \(span)."
        }

        /// `thermal`: the reading's indices, worked out once per reading by the render that reads them.
        func value(of reading: CurrentWeather, thermal: ThermalIndex.Values) -> Double? {
            switch self {
            case .temperature: reading.temperatureCelsius
            case .feelsLike: reading.feelsLikeCelsius
            case .temperatureMin: reading.temperatureMinCelsius
            case .temperatureMax: reading.temperatureMaxCelsius
            case .humidity: reading.humidityRatio
            case .pressure: reading.pressurePascals
            case .groundLevelPressure: reading.groundLevelPressurePascals
            case .windSpeed: reading.windSpeedMetersPerSecond
            case .windGust: reading.windGustMetersPerSecond
            case .windDirection: reading.windDirectionDegrees
            case .cloudiness: reading.cloudinessRatio
            case .visibility: reading.visibilityMeters
            case .rain1h: reading.rain1hMeters
            case .rain3h: reading.rain3hMeters
            case .snow1h: reading.snow1hMeters
            case .snow3h: reading.snow3hMeters
            case .sunrise: reading.sunrise
            case .sunset: reading.sunset
            case .observation: reading.observationTime
            case .timezoneOffset: reading.timezoneOffsetSeconds
            case .condition: reading.primaryCondition.map { Double($0.id) }
            case .heatIndex: thermal.heatIndex
            case .humidex: thermal.humidex
            case .windChill: thermal.windChill
            case .wetBulb: thermal.wetBulb
            case .apparentTemperature: thermal.apparentTemperature
            }
        }
    }

    var families: [MetricFamily] {
        Field.allCases.map { MetricFamily(name: $0.name, help: $0.help) } + [
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
        case field(Field)
        case condition, secondaryCondition, location

        var position: Int {
            switch self {
            case .field(let field): field.rawValue
            case .condition: Field.allCases.count
            case .secondaryCondition: Field.allCases.count + 1
            case .location: Field.allCases.count + 2
            }
        }
    }

    private static let conditionInfo: StaticString = "openweather_condition_info"
    private static let secondaryConditionInfo: StaticString = "openweather_secondary_condition_info"
    private static let locationInfo: StaticString = "openweather_location_info"
    private static let fieldNames = Field.allCases.map { Array($0.name.utf8) }

    /// Written straight from the readings: no family, sample or label array per series. Family by
    /// family, so each family's buffer is fetched once per shard.
    func appendSeries(of shard: ShardSeries, readings: ShardReadings<CurrentWeather>, to lines: CollectorLines) {
        let count = shard.locations.count
        // Which locations show weather, and their values field by field.
        var shown: [(position: Int, reading: CurrentWeather)] = []
        var values = [Double?](repeating: nil, count: Field.allCases.count * count)
        for position in shard.locations.indices {
            guard let reading = readings[position] else { continue }
            shown.append((position, reading))
            let thermal = ThermalIndex.Values(
                temperature: reading.temperatureCelsius, humidityRatio: reading.humidityRatio,
                windSpeed: reading.windSpeedMetersPerSecond)
            for field in Field.allCases {
                values[field.rawValue * count + position] = field.value(of: reading, thermal: thermal)
            }
        }
        guard !shown.isEmpty else { return }
        shard.withOpenings { openings in
            for field in Field.allCases {
                guard let buffer = lines[family: Family.field(field)] else { continue }
                Self.fieldNames[field.rawValue].withUnsafeBufferPointer { name in
                    for (position, _) in shown {
                        guard let value = values[field.rawValue * count + position] else { continue }
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
