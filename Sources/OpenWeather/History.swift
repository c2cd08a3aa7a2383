/// The past at one place, for a backfill: One Call's weather at one moment
/// (`/data/3.0/onecall/timemachine`, one billed call per moment, the One Call subscription) and the
/// free hourly air pollution over a range (`/data/2.5/air_pollution/history`, one call for it all).
public enum History {
    /// The weather at `time` (Unix seconds), in metric units.
    public static func weatherRequest(
        latitude: Double, longitude: Double, at time: Double, language: String
    ) -> APIRequest {
        APIRequest(
            path: "/data/3.0/onecall/timemachine",
            query: [
                .init("lat", String(latitude)), .init("lon", String(longitude)), .init("dt", String(Int64(time))),
                .init("units", "metric"), .init("lang", language),
            ])
    }

    /// Every hour from `start` to `end` (Unix seconds; OpenWeather includes an hour at `end`).
    public static func airPollutionRequest(
        latitude: Double, longitude: Double, from start: Double, to end: Double
    ) -> APIRequest {
        APIRequest(
            path: "/data/2.5/air_pollution/history",
            query: [
                .init("lat", String(latitude)), .init("lon", String(longitude)), .init("start", String(Int64(start))),
                .init("end", String(Int64(end))),
            ])
    }
}

/// Decodes a `/data/3.0/onecall/timemachine` body: its one `data` record, checked as One Call's
/// `current` is, by the same field policy (`OneCallDecoder`; no `temp_min`/`temp_max`, city or country,
/// which One Call does not report).
public enum TimemachineDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> CurrentWeather {
        try Fields.decode(body) { (root: Fields) throws(FieldError) in
            guard let record = try root.requireObject().list("data").first else {
                throw FieldError(reason: "`data` is empty: no weather reported for that moment")
            }
            var weather = try OneCallDecoder.weather(record, in: root)
            weather.gaps = root.gaps
            return weather
        }
    }
}

/// Decodes a `/data/2.5/air_pollution/history` body: every hour read as the forecast's are (an hour
/// without `dt`, or not after the one before, is skipped; one without a usable `main.aqi` keeps its
/// concentrations); an empty `list` is no data for the range (before 2020-11-27, say).
public enum AirPollutionHistoryDecoder {
    public static func decode(_ body: [UInt8]) throws(OpenWeatherError) -> [AirPollution] {
        try Fields.decode(body) { (root: Fields) throws(FieldError) in
            let root = try root.requireObject()
            try root.requireList("list")
            return root.entries("list", follows: AirPollutionDecoder.rising) { (entry: Fields) throws(FieldError) in
                try AirPollutionDecoder.item(entry)
            } ?? []
        }
    }
}
