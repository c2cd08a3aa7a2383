import JSON
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The field policies written beside the decoders, proven on every fixture an endpoint has: each
/// field is taken out in turn (from every entry, in a list). A required one makes the reading fail;
/// one an entry of an optional part needs takes those entries away (skipped, noted); any other leaves
/// the reading standing, is noted itself and nothing else, and takes away (or changes) only the
/// series of its own families: every other series stays as it was, and none is made up.
@Suite struct FieldPolicyTests {
    /// An endpoint's answers and what the test knows of its policy.
    struct Endpoint: Sendable, CustomTestStringConvertible {
        let name: String
        let fixtures: [String]
        /// Fields whose absence fails the reading.
        let required: Set<String>
        /// Fields whose absence skips every entry of an optional part: the part's list, as noted.
        let entryRequired: [String: String]
        /// Fields read, and the families (without `openweather_`) their absence may take away or change;
        /// a field not here is not read, and taking it out changes nothing.
        let families: [String: [String]]
        /// The reading stored in the fixture's sources' slots, and its gaps.
        let store: @Sendable ([UInt8]) throws -> (ReadingStore, AnswerGaps)
        let now: Double

        var testDescription: String { name }
    }

    static let place = Location(name: "Here", latitude: 10, longitude: 20)

    /// A store of `sources` with `readings` (by source name) for `place`, fresh at `now`.
    static func store(_ sources: [any Source], _ readings: [(String, any Sendable)], now: Double) -> ReadingStore {
        let store = ReadingStore(
            locations: [place], sources: sources, intervals: sources.map { _ in .seconds(3600) },
            maxStaleness: sources.map { _ in 400 * 3600 }, thresholds: { _ in .init() }, now: now - 60)
        for (name, reading) in readings { store.success(place.name, name, reading, now: now - 60) }
        return store
    }

    static let weatherFamilies: [String: [String]] = [
        "main.feels_like": ["feels_like_celsius"], "main.temp_min": ["temperature_min_celsius"],
        "main.temp_max": ["temperature_max_celsius"], "main.pressure": ["pressure_pascals"],
        "main.sea_level": ["pressure_pascals"], "main.humidity": ["humidity_ratio"] + humidityIndices,
        "main.grnd_level": ["ground_level_pressure_pascals"], "visibility": ["visibility_meters"],
        "wind.speed": ["wind_speed_meters_per_second"] + windIndices, "wind.deg": ["wind_direction_degrees"],
        "wind.gust": ["wind_gust_meters_per_second"], "clouds.all": ["cloudiness_ratio"],
        "rain.1h": ["rain_1h_meters"], "rain.3h": ["rain_3h_meters"], "snow.1h": ["snow_1h_meters"],
        "snow.3h": ["snow_3h_meters"], "sys.sunrise": ["sunrise_timestamp_seconds"],
        "sys.sunset": ["sunset_timestamp_seconds"], "timezone": ["timezone_offset_seconds"],
        "sys.country": ["location_info"], "name": ["location_info"],
        "weather[].id": ["condition_id", "condition_info", "secondary_condition_info"],
        "weather[].main": ["condition_info", "secondary_condition_info"],
        "weather[].description": ["condition_info", "secondary_condition_info"],
        "weather[].icon": ["condition_info", "secondary_condition_info"],
    ]

    /// The heat and cold indices computed from the humidity and from the wind: without it, they are left out.
    static let humidityIndices = [
        "heat_index_celsius", "humidex_celsius", "wet_bulb_temperature_celsius", "apparent_temperature_celsius",
    ]
    static let windIndices = ["wind_chill_celsius", "apparent_temperature_celsius"]

    /// One Call's `current` (and a timemachine record) as the weather's families read it, under `prefix`.
    static func oneCallCurrent(_ prefix: String) -> [String: [String]] {
        var families: [String: [String]] = [
            "feels_like": ["feels_like_celsius"], "pressure": ["pressure_pascals"],
            "humidity": ["humidity_ratio"] + humidityIndices, "clouds": ["cloudiness_ratio"],
            "visibility": ["visibility_meters"], "wind_speed": ["wind_speed_meters_per_second"] + windIndices,
            "wind_deg": ["wind_direction_degrees"], "wind_gust": ["wind_gust_meters_per_second"],
            "rain.1h": ["rain_1h_meters"], "snow.1h": ["snow_1h_meters"], "sunrise": ["sunrise_timestamp_seconds"],
            "sunset": ["sunset_timestamp_seconds"], "dew_point": ["dew_point_celsius"], "uvi": ["uv_index"],
        ]
        for key in ["id", "main", "description", "icon"] {
            families["weather[].\(key)"] = weatherFamilies["weather[].\(key)"]
        }
        return Dictionary(uniqueKeysWithValues: families.map { (prefix + $0.key, $0.value) })
    }

    /// A forecast step's fields (the 2.5 forecast's or One Call's hours and days) and the forecast families.
    static let horizonFamilies: [String: [String]] = [
        "feels_like": ["forecast_feels_like_celsius"],
        "humidity": [
            "forecast_humidity_ratio", "forecast_heat_index_max_celsius",
            "forecast_wet_bulb_temperature_max_celsius",
        ],
        "pressure": ["forecast_pressure_pascals"], "clouds": ["forecast_cloudiness_ratio"],
        "visibility": ["forecast_visibility_meters"],
        "wind_speed": ["forecast_wind_speed_meters_per_second", "forecast_wind_chill_min_celsius"],
        "wind_deg": ["forecast_wind_direction_degrees"],
        "wind_gust": ["forecast_wind_gust_meters_per_second", "forecast_wind_gust_max_meters_per_second"],
        "pop": ["forecast_precipitation_probability_ratio", "forecast_precipitation_probability_max_ratio"],
        "rain": ["forecast_rain_meters", "forecast_window_rain_meters"],
        "snow": ["forecast_snow_meters", "forecast_window_snow_meters"],
        "dew_point": ["forecast_dew_point_celsius"], "uvi": ["forecast_uv_index"],
        "weather[].id": ["forecast_condition_id"],
    ]

    /// Every family the forecast writes, which an hour or a day gone may change.
    static let forecastFamilies = ForecastSource().families.map { String($0.name.dropFirst("openweather_".count)) }

    static let weather = Endpoint(
        name: "weather",
        fixtures: [
            "current-barcelona-clouds.json", "current-longyearbyen-polar-night-snow.json", "current-ocean-no-name.json",
            "current-zocca-rain.json", "current-london-2017-no-feels-like.json",
            "current-zocca-calm-ground-pressure.json",
        ],
        required: ["dt", "main.temp"], entryRequired: [:], families: weatherFamilies,
        store: { body in
            let reading = try WeatherDecoder.decode(body)
            return (FieldPolicyTests.store([WeatherSource()], [("weather", reading)], now: 1_700_000_000), reading.gaps)
        }, now: 1_700_000_000)

    static let timemachine = Endpoint(
        name: "timemachine",
        fixtures: ["onecall-timemachine-london-rain.json", "onecall-timemachine-longyearbyen-1990-polar-night.json"],
        required: ["data[].dt", "data[].temp"], entryRequired: [:],
        families: oneCallCurrent("data[].").merging(["timezone_offset": ["timezone_offset_seconds"]]) { $1 },
        store: { body in
            let reading = try TimemachineDecoder.decode(body)
            return (FieldPolicyTests.store([WeatherSource()], [("weather", reading)], now: 1_700_000_000), reading.gaps)
        }, now: 1_700_000_000)

    static let forecast = Endpoint(
        name: "forecast", fixtures: ["forecast-zocca.json"], required: ["list[].dt", "list[].main.temp"],
        entryRequired: [:],
        families: Dictionary(
            uniqueKeysWithValues: [
                ("list[].main.feels_like", "feels_like"), ("list[].main.humidity", "humidity"),
                ("list[].main.pressure", "pressure"),
                ("list[].main.sea_level", "pressure"), ("list[].clouds.all", "clouds"),
                ("list[].visibility", "visibility"),
                ("list[].wind.speed", "wind_speed"), ("list[].wind.deg", "wind_deg"), ("list[].wind.gust", "wind_gust"),
                ("list[].pop", "pop"), ("list[].rain.3h", "rain"), ("list[].snow.3h", "snow"),
                ("list[].weather[].id", "weather[].id"),
            ].map { ($0.0, horizonFamilies[$0.1]!) }),
        store: { body in
            let reading = try ForecastDecoder.decode(body)
            return (
                FieldPolicyTests.store([ForecastSource()], [("forecast", reading)], now: 1_661_875_200), reading.gaps
            )
        }, now: 1_661_875_200)

    static let airPollution = Endpoint(
        name: "air_pollution", fixtures: ["air-pollution-barcelona.json"], required: ["list[].dt", "list[].main.aqi"],
        entryRequired: [:],
        families: Dictionary(
            uniqueKeysWithValues: AirPollution.pollutants.map {
                ("list[].components.\($0)", ["air_pollutant_grams_per_cubic_meter", "air_quality_scale_index"])
            }),
        store: { body in
            let reading = try AirPollutionDecoder.decode(body)
            return (
                FieldPolicyTests.store([AirPollutionSource()], [("air_pollution", reading)], now: 1_700_000_000),
                reading.gaps
            )
        }, now: 1_700_000_000)

    static let airPollutionForecast = Endpoint(
        name: "air_pollution_forecast",
        fixtures: ["air-pollution-forecast-barcelona.json", "air-pollution-forecast-aqi-zero.json"],
        required: ["list[].dt"], entryRequired: [:],
        families: Dictionary(
            uniqueKeysWithValues: AirPollution.pollutants.map {
                (
                    "list[].components.\($0)",
                    [
                        "forecast_air_pollutant_grams_per_cubic_meter", "forecast_air_quality_scale_index",
                        "forecast_air_quality_scale_max_index",
                    ]
                )
            } + [
                (
                    "list[].main.aqi",
                    [
                        "forecast_air_quality_index", "forecast_air_quality_max_index",
                        "forecast_air_quality_scale_index", "forecast_air_quality_scale_max_index",
                    ]
                )
            ]),
        store: { body in
            let reading = try AirPollutionForecastDecoder.decode(body)
            let store = FieldPolicyTests.store(
                [AirPollutionForecastSource()], [("air_pollution_forecast", reading)], now: 1_764_590_400 + 1800)
            return (store, reading.gaps)
        }, now: 1_764_590_400 + 1800)

    static let oneCall: Endpoint = {
        var families = oneCallCurrent("current.").merging(["timezone_offset": ["timezone_offset_seconds"]]) { $1 }
        for (key, kinds) in horizonFamilies {
            families["hourly[].\(key == "rain" || key == "snow" ? key + ".1h" : key)"] = kinds
            families["daily[].\(key)"] = kinds
        }
        families["daily[].visibility"] = nil
        families["daily[].feels_like.day"] = ["forecast_feels_like_celsius"]
        families["daily[].feels_like"] = nil
        families["daily[].temp.day"] = forecastFamilies
        for key in ["sender_name", "tags"] {
            families["alerts[].\(key)"] = ["weather_alert_info", "weather_alert_end_timestamp_seconds"]
        }
        let days =
            forecastFamilies + ["forecast_daily_temperature_min_celsius", "forecast_daily_temperature_max_celsius"]
        let alerts = ["weather_alert_info", "weather_alert_end_timestamp_seconds"]
        let minutes = ["precipitation_next_start_timestamp_seconds", "precipitation_next_hour_meters"]
        for (field, list) in [
            ("minutely[].dt", "minutely"), ("minutely[].precipitation", "minutely"), ("hourly[].dt", "hourly"),
            ("hourly[].temp", "hourly"), ("daily[].dt", "daily"), ("daily[].temp.min", "daily"),
            ("daily[].temp.max", "daily"),
            ("alerts[].event", "alerts"), ("alerts[].start", "alerts"), ("alerts[].end", "alerts"),
        ] {
            families[field] =
                switch list {
                case "minutely": minutes
                case "hourly": forecastFamilies
                case "daily": days
                default: alerts
                }
        }
        return Endpoint(
            name: "onecall", fixtures: ["onecall-texarkana-alerts.json"], required: ["current.dt", "current.temp"],
            entryRequired: [
                "minutely[].dt": "minutely", "minutely[].precipitation": "minutely", "hourly[].dt": "hourly",
                "hourly[].temp": "hourly", "daily[].dt": "daily", "daily[].temp.min": "daily",
                "daily[].temp.max": "daily",
                "alerts[].event": "alerts", "alerts[].start": "alerts", "alerts[].end": "alerts",
            ],
            families: families,
            store: { body in
                let reading = try OneCallDecoder.decode(body)
                let store = FieldPolicyTests.store(
                    [ForecastSource(), OneCallSource(), WeatherSource()],
                    [("onecall", reading), ("weather", reading.current), ("forecast", reading.hourly)],
                    now: 1_684_945_000)
                return (store, reading.gaps)
            }, now: 1_684_945_000)
    }()

    // MARK: The property

    /// The series of the endpoint's families, by name and labels, with their values.
    static func series(_ store: ReadingStore, now: Double) -> [String: String] {
        let snapshot = store.snapshot()
        let names = Set(snapshot.layout.sources.flatMap(\.families).map(\.name))
        var series: [String: String] = [:]
        for line in String(decoding: renderPlain(snapshot, now: now), as: UTF8.self).split(separator: "\n")
        where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let key = String(line[..<space])
            guard names.contains(String(key.prefix { $0 != "{" })) else { continue }
            series[key] = String(line[line.index(after: space)...])
        }
        return series
    }

    /// Families that are an extreme of what the answer reported: one value fewer may change them.
    static let ofWhatCame: Set<String> = [
        "forecast_wind_gust_max_meters_per_second", "air_quality_scale_index", "forecast_air_quality_scale_index",
        "forecast_air_quality_scale_max_index",
    ]

    static func family(_ key: String) -> String { String(key.prefix { $0 != "{" }.dropFirst("openweather_".count)) }

    /// How a field is taken out: removed, or its number made one too large to hold (`1e999`, which
    /// used to fail the whole answer: issue 49). Either way the field is unusable, and only it.
    enum Change: String, Sendable, CaseIterable {
        case removed, tooLarge

        /// The body with `field` changed; nil when there is no number there to make too large.
        func body(_ field: String, _ document: JSONValue) -> [UInt8]? {
            guard self == .tooLarge else { return FieldPolicyTests.removing(field, from: document).encoded() }
            let marker = "owx-number-too-large"
            let changed = FieldPolicyTests.removing(field, from: document, replacingNumbersWith: .string(marker))
            guard changed != document else { return nil }
            return Array(
                String(decoding: changed.encoded(), as: UTF8.self).replacing("\"\(marker)\"", with: "1e999").utf8)
        }
    }

    @Test(arguments: [weather, timemachine, forecast, airPollution, airPollutionForecast, oneCall], Change.allCases)
    func everyFieldTakenOutTakesOnlyItsOwnSeries(_ endpoint: Endpoint, _ change: Change) throws {
        var fields = 0
        defer { #expect(fields >= 10 * endpoint.fixtures.count, "\(fields) fields taken out") }
        for fixture in endpoint.fixtures {
            let document = try JSONParser.parse(Fixture.bytes(fixture))
            let (baseStore, baseGaps) = try endpoint.store(Fixture.bytes(fixture))
            let base = Self.series(baseStore, now: endpoint.now)
            #expect(!base.isEmpty, "\(fixture) shows nothing")
            for field in Self.leaves(document).sorted() {
                guard let body = change.body(field, document) else { continue }
                fields += 1
                if endpoint.required.contains(field) {
                    #expect(throws: OpenWeatherError.self, "\(fixture) without \(field)") {
                        _ = try endpoint.store(body)
                    }
                    continue
                }
                let (store, gaps): (ReadingStore, AnswerGaps)
                do {
                    (store, gaps) = try endpoint.store(body)
                } catch {
                    Issue.record("\(fixture) without \(field): \(error)")
                    continue
                }
                let after = Self.series(store, now: endpoint.now)
                let own = Set(endpoint.families[field] ?? [])
                // Every other series as it was; none made up.
                for (key, value) in base where !own.contains(Self.family(key)) {
                    #expect(
                        after[key] == value,
                        "\(fixture) without \(field): \(key) was \(value), is \(after[key] ?? "gone")")
                }
                for key in after.keys where base[key] == nil {
                    #expect(own.contains(Self.family(key)), "\(fixture) without \(field): \(key) appeared")
                }
                // Noted: the field itself, or the part whose entries need it; nothing else.
                let noted = Set(gaps.missing).subtracting(baseGaps.missing)
                let skipped = Set(gaps.skipped.map(\.field)).subtracting(baseGaps.skipped.map(\.field))
                if let list = endpoint.entryRequired[field] {
                    #expect(
                        skipped == [list] && noted.isEmpty,
                        "\(fixture) without \(field): noted \(noted), skipped \(skipped)")
                } else {
                    #expect(
                        noted.isSubset(of: [field]) && skipped.isEmpty,
                        "\(fixture) without \(field): noted \(noted), skipped \(skipped)")
                }
                // A field noted as gone took some of its own series with it (where they showed at all: the
                // minute forecast is over at the render's now), and made none of them another number: a
                // series goes or stays, never takes a made-up value. (Two are of what was reported, by design:
                // the strongest gust, of the steps that report one; an air quality scale's index, the
                // highest sub-index of the pollutants that came, as a monitoring site reports it.)
                if !noted.isEmpty || !skipped.isEmpty, base.keys.contains(where: { own.contains(Self.family($0)) }) {
                    let mine = base.filter { own.contains(Self.family($0.key)) }
                    #expect(
                        mine.contains { after[$0.key] == nil },
                        "\(fixture) without \(field): noted, yet every series of \(own.sorted()) stayed")
                    for (key, value) in mine where !Self.ofWhatCame.contains(Self.family(key)) {
                        #expect(
                            after[key] == nil || after[key] == value,
                            "\(fixture) without \(field): \(key) was \(value), is \(after[key]!)")
                    }
                }
            }
        }
    }

    /// Every leaf of `value` by the policies' names (`list[].main.temp`): a list of objects is entered,
    /// any other value is a leaf.
    static func leaves(_ value: JSONValue, _ path: String = "") -> Set<String> {
        switch value {
        case .object(let members):
            return members.reduce(into: []) {
                $0.formUnion(leaves($1.value, path.isEmpty ? $1.key : "\(path).\($1.key)"))
            }
        case .array(let items) where items.contains(where: { if case .object = $0 { true } else { false } }):
            return items.reduce(into: []) { $0.formUnion(leaves($1, path + "[]")) }
        default:
            return path.isEmpty ? [] : [path]
        }
    }

    /// `value` without the leaf `field`, from every entry of the lists on its way; with `replacement`, the
    /// leaf's numbers replaced by it instead (other values stay).
    static func removing(
        _ field: String, from value: JSONValue, replacingNumbersWith replacement: JSONValue? = nil
    )
        -> JSONValue
    {
        func remove(_ parts: ArraySlice<Substring>, _ value: JSONValue) -> JSONValue {
            guard let first = parts.first else { return value }
            switch value {
            case .object(let members):
                let key = first.hasSuffix("[]") ? first.dropLast(2) : first
                if parts.count == 1 && !first.hasSuffix("[]") {
                    guard let replacement else { return .object(members.filter { $0.key != key }) }
                    return .object(
                        members.map { member in
                            guard member.key == key, case .number = member.value else { return member }
                            return (key: member.key, value: replacement)
                        })
                }
                return .object(
                    members.map { member -> (key: String, value: JSONValue) in
                        guard member.key == key else { return member }
                        guard first.hasSuffix("[]"), case .array(let items) = member.value else {
                            return (key: member.key, value: remove(parts.dropFirst(), member.value))
                        }
                        return (key: member.key, value: .array(items.map { remove(parts.dropFirst(), $0) }))
                    })
            default:
                return value
            }
        }
        // `list[].main.temp` as `list[]`, `main`, `temp`: a part ending in [] enters every entry.
        return remove(ArraySlice(field.split(separator: ".")), value)
    }
}

extension AnswerGaps {
    /// The fields noted, by name.
    var missing: [String] { fields.map(\.field) }
}
