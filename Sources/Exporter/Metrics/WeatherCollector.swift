import Exposition
import OpenWeather

/// The weather of every location with a fresh reading. A location whose last
/// success is older than `maxStaleness` (or that never succeeded) shows no
/// weather at all, so Prometheus marks its series stale instead of graphing an
/// old value as if it were current.
struct WeatherCollector: Collector {
    let maxStaleness: Double

    private typealias Field = (name: String, help: String, value: @Sendable (CurrentWeather) -> Double?)

    private static let fields: [Field] = [
        ("openweather_temperature_celsius", "Air temperature (main.temp).", { $0.temperatureCelsius }),
        ("openweather_feels_like_celsius", "Temperature as a person feels it (main.feels_like).", { $0.feelsLikeCelsius }),
        ("openweather_temperature_min_celsius", "Lowest temperature observed in the area now (main.temp_min), not the day's minimum.", { $0.temperatureMinCelsius }),
        ("openweather_temperature_max_celsius", "Highest temperature observed in the area now (main.temp_max), not the day's maximum.", { $0.temperatureMaxCelsius }),
        ("openweather_humidity_ratio", "Relative humidity, 0 to 1 (main.humidity / 100).", { $0.humidityRatio }),
        ("openweather_pressure_pascals", "Atmospheric pressure at sea level (main.pressure × 100).", { $0.pressurePascals }),
        ("openweather_ground_level_pressure_pascals", "Atmospheric pressure at ground level (main.grnd_level × 100), when reported.", { $0.groundLevelPressurePascals }),
        ("openweather_wind_speed_meters_per_second", "Wind speed (wind.speed).", { $0.windSpeedMetersPerSecond }),
        ("openweather_wind_gust_meters_per_second", "Wind gust speed (wind.gust), when reported.", { $0.windGustMetersPerSecond }),
        ("openweather_wind_direction_degrees", "Direction the wind comes from, meteorological degrees (wind.deg).", { $0.windDirectionDegrees }),
        ("openweather_cloudiness_ratio", "Cloud cover, 0 to 1 (clouds.all / 100).", { $0.cloudinessRatio }),
        ("openweather_visibility_meters", "Visibility, capped at 10 km by OpenWeather (visibility), when reported.", { $0.visibilityMeters }),
        ("openweather_rain_1h_meters", "Rain in the last hour (rain.1h / 1000); 0 when none.", { $0.rain1hMeters }),
        ("openweather_snow_1h_meters", "Snow in the last hour (snow.1h / 1000); 0 when none.", { $0.snow1hMeters }),
        ("openweather_sunrise_timestamp_seconds", "Today's sunrise, Unix time (sys.sunrise); absent in polar day and night.", { $0.sunrise }),
        ("openweather_sunset_timestamp_seconds", "Today's sunset, Unix time (sys.sunset); absent in polar day and night.", { $0.sunset }),
        ("openweather_observation_timestamp_seconds", "When OpenWeather computed this reading, Unix time (dt).", { $0.observationTime }),
        ("openweather_timezone_offset_seconds", "Offset of local time from UTC (timezone).", { $0.timezoneOffsetSeconds }),
        ("openweather_condition_id", "OpenWeather condition code of the primary condition (weather[0].id): 2xx thunderstorm, 3xx drizzle, 5xx rain, 6xx snow, 7xx atmosphere, 800 clear, 80x clouds.", { $0.primaryCondition.map { Double($0.id) } }),
    ]

    func collect(_ snapshot: WeatherStore.Snapshot, now: Double, into families: inout [MetricFamily]) {
        var byField = Self.fields.map { MetricFamily(name: $0.name, help: $0.help) }
        var condition = MetricFamily(name: Self.conditionInfo, help: "The primary weather condition (weather[0]); always 1.")
        var info = MetricFamily(name: Self.locationInfo, help: "The configured location and the place OpenWeather matched; always 1.")
        for state in snapshot.locations {
            guard let reading = state.reading, let success = state.lastSuccess, now - success <= maxStaleness else { continue }
            let location = [(name: "location", value: state.location.name)]
            for (index, field) in Self.fields.enumerated() {
                if let value = field.value(reading) { byField[index].add(location, value) }
            }
            if let primary = reading.primaryCondition {
                condition.add(location + [("main", primary.main), ("description", primary.description), ("icon", primary.icon)], 1)
            }
            info.add(
                location + [
                    ("city", reading.cityName), ("country", reading.country ?? ""),
                    ("latitude", Exposition.formatValue(state.location.latitude)),
                    ("longitude", Exposition.formatValue(state.location.longitude)),
                ], 1)
        }
        families += byField
        families += [condition, info]
    }

    private static let conditionInfo = "openweather_condition_info"
    private static let locationInfo = "openweather_location_info"
    private static let fieldNames = fields.map { Array($0.name.utf8) }
    private static let conditionInfoName = Array(conditionInfo.utf8)
    private static let locationInfoName = Array(locationInfo.utf8)

    /// The lines `collect` gives, written straight from the readings: no family, sample or label array per series.
    func appendSeries(of shard: ShardSeries, now: Double, to lines: inout FamilyLines) {
        let targets = Self.fields.map { lines.index[$0.name] }
        let condition = lines.index[Self.conditionInfo]
        let info = lines.index[Self.locationInfo]
        for position in shard.locations.indices {
            guard let reading = shard.locations[position].reading, let success = shard.locations[position].lastSuccess,
                now - success <= maxStaleness
            else { continue }
            let opening = shard.openings[position]
            for field in Self.fields.indices {
                guard let target = targets[field], let value = Self.fields[field].value(reading) else { continue }
                lines.buffers[target].append(contentsOf: Self.fieldNames[field])
                lines.buffers[target].append(contentsOf: opening)
                Exposition.appendClosing(value, to: &lines.buffers[target])
            }
            if let condition, let primary = reading.primaryCondition {
                lines.buffers[condition].append(contentsOf: Self.conditionInfoName)
                lines.buffers[condition].append(contentsOf: opening)
                Exposition.appendLabel("main", primary.main, to: &lines.buffers[condition])
                Exposition.appendLabel("description", primary.description, to: &lines.buffers[condition])
                Exposition.appendLabel("icon", primary.icon, to: &lines.buffers[condition])
                Exposition.appendClosing(1, to: &lines.buffers[condition])
            }
            if let info {
                let location = shard.locations[position].location
                lines.buffers[info].append(contentsOf: Self.locationInfoName)
                lines.buffers[info].append(contentsOf: opening)
                Exposition.appendLabel("city", reading.cityName, to: &lines.buffers[info])
                Exposition.appendLabel("country", reading.country ?? "", to: &lines.buffers[info])
                Exposition.appendLabel("latitude", Exposition.formatValue(location.latitude), to: &lines.buffers[info])
                Exposition.appendLabel("longitude", Exposition.formatValue(location.longitude), to: &lines.buffers[info])
                Exposition.appendClosing(1, to: &lines.buffers[info])
            }
        }
    }
}
