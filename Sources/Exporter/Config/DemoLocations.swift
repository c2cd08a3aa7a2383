/// The cities `--demo` polls when no location is given: four climates, four time zones.
enum DemoLocations {
    static let all = [
        Location(name: "London", latitude: 51.5074, longitude: -0.1278),
        Location(name: "New York", latitude: 40.7128, longitude: -74.006),
        Location(name: "Tokyo", latitude: 35.6762, longitude: 139.6503),
        Location(name: "Sydney", latitude: -33.8688, longitude: 151.2093),
    ]
}
