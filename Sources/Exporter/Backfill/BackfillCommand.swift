import Glibc
import OpenWeather
import Platform

/// `openweather-exporter backfill`, for `main`.
public enum BackfillCommand {
    /// Runs it against `configuration`'s API (the simulator's with `--demo`); the exit status.
    public static func run(_ configuration: Configuration, _ options: BackfillOptions) -> Int32 {
        func enabled(_ name: String) -> (any Source)? {
            configuration.collectors.first { $0.name == name && $0.enabled }?.source
        }
        // One Call (3.0 or 4.0, one subscription) stands in for the weather: its past is timemachine's.
        let weather =
            enabled(WeatherSource.name)
            ?? (enabled(OneCallSource.name) ?? enabled(OneCall4Source.name)).flatMap { _ in
                configuration.sources.first { $0.name == WeatherSource.name }
            }
        let report = { (line: String) in
            let text = Array("backfill: \(line)\n".utf8)
            _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        guard weather != nil || enabled(AirPollutionSource.name) != nil else {
            report(
                """
                nothing to backfill: enable --collector.weather (or --collector.onecall) for the weather, \
                --collector.air_pollution for air quality
                """
            )
            return 2
        }
        let client: OpenWeatherClient
        do {
            client = try configuration.openWeatherClient()
        } catch {
            report(error.description)
            return 2
        }
        // The exporter's state directory as the exporter uses it: the day's counts are its counts.
        var sharedDay: SharedDay?
        if let path = configuration.storagePath {
            do throws(StateStorageError) {
                sharedDay = SharedDay(storage: try StateStorage(directory: path))
            } catch {
                report(error.description)
                return 2
            }
        }
        let backfill = Backfill(
            locations: configuration.locations, weather: weather, airPollution: enabled(AirPollutionSource.name),
            language: configuration.language, perMinute: configuration.maxRequestsPerMinute,
            oneCallPerDay: configuration.sources.first { $0.name == OneCallSource.name }?.maxRequestsPerDay,
            keyPerDay: configuration.maxRequestsPerDay, output: options.output, labels: options.labels,
            transport: client, time: SystemBackfillTime(), report: report, sharedDay: sharedDay)
        do {
            try backfill.run(since: options.since, until: options.until)
            return 0
        } catch {
            report(error.description)
            return error.status
        }
    }
}
