/// Renders a reading in the exact shape of `/data/2.5/air_pollution`.
enum AirPollutionJSON {
    static func render(_ reading: AirPollutionModel.Reading, latitude: Double, longitude: Double) -> String {
        let components = reading.components.map { #""\#($0.name)":\#(WeatherJSON.number($0.value))"# }.joined(separator: ",")
        return """
            {"coord":{"lon":\(WeatherJSON.number(longitude)),"lat":\(WeatherJSON.number(latitude))},\
            "list":[{"main":{"aqi":\(reading.index)},"components":{\(components)},"dt":\(WeatherJSON.number(reading.observationTime))}]}
            """
    }
}
