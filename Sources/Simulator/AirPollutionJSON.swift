/// Renders readings in the exact shape of `/data/2.5/air_pollution` (one) and its `/forecast` (the hours ahead).
enum AirPollutionJSON {
    static func render(_ reading: AirPollutionModel.Reading, latitude: Double, longitude: Double) -> String {
        render([reading], latitude: latitude, longitude: longitude)
    }

    static func render(_ readings: [AirPollutionModel.Reading], latitude: Double, longitude: Double) -> String {
        let items = readings.map { reading in
            let components = reading.components.map { #""\#($0.name)":\#(WeatherJSON.number($0.value))"# }.joined(
                separator: ",")
            return
                #"""
                {"main":{"aqi":\#(reading.index)},"components":{\#(components)},\#
                "dt":\#(WeatherJSON.number(reading.observationTime))}
                """#
        }
        return """
            {"coord":{"lon":\(WeatherJSON.number(longitude)),"lat":\(WeatherJSON.number(latitude))},\
            "list":[\(items.joined(separator: ","))]}
            """
    }
}
