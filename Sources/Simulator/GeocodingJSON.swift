/// Renders places in the exact shapes of `/geo/1.0/direct` (a list) and `/geo/1.0/zip` (one object).
enum GeocodingJSON {
    static func direct(_ places: [SimulatedPlace]) -> String {
        "["
            + places.map { place in
                var fields = #""name":"\#(place.name)","local_names":{"en":"\#(place.name)"},"#
                fields += #""lat":\#(WeatherJSON.number(place.latitude)),"lon":\#(WeatherJSON.number(place.longitude))"#
                fields += #","country":"\#(place.country ?? "")""#
                if let state = place.state { fields += #","state":"\#(state)""# }
                return "{\(fields)}"
            }.joined(separator: ",") + "]"
    }

    static func zip(_ code: String, _ place: SimulatedPlace) -> String {
        #"""
        {"zip":"\#(code)","name":"\#(place.name)","lat":\#(WeatherJSON.number(place.latitude)),\#
        "lon":\#(WeatherJSON.number(place.longitude)),"country":"\#(place.country ?? "")"}
        """#
    }
}
