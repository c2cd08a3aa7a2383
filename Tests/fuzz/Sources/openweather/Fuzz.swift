// Every OpenWeather decoder over the same answer, and the message made of an error answer. A decoder
// refuses with an OpenWeatherError or gives a value; the message never holds the API key, however
// the answer echoes it.
import FuzzSupport

@testable import OpenWeather

private let key = "0123456789abcdef0123456789abcdef"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    _ = try? WeatherDecoder.decode(body)
    _ = try? ForecastDecoder.decode(body)
    _ = try? OneCallDecoder.decode(body)
    _ = try? OneCall4Decoder.decode(document: body)
    _ = try? AirPollutionDecoder.decode(body)
    _ = try? AirPollutionForecastDecoder.decode(body)
    _ = try? TimemachineDecoder.decode(body)
    _ = try? AirPollutionHistoryDecoder.decode(body)
    _ = try? Geocoding.decode(body, for: .name("London,GB"))
    _ = try? Geocoding.decode(body, for: .zip("94040,US"))
    let message = OpenWeatherClient.errorMessage(body, redacting: [key])
    require(!message.contains(key), "the key in an error message: \(message)")
    require(message.utf8.count <= 4 * 400, "an error message of \(message.utf8.count) bytes")
    return 0
}
