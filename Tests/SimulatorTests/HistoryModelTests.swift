import OpenWeather
import Testing

@testable import Simulator

/// The simulated past: what `timemachine` and `air_pollution/history` say about a moment is what the
/// live answers reported at it, since every model is a function of place and time.
@Suite struct HistoryModelTests {
    @Test func theTimemachineIsTheLiveWeatherOfThatMoment() throws {
        let now = ForecastModelTests.now
        for hour in stride(from: 0.0, to: 48, by: 5) {
            let time = now - hour * 3600
            let past = try TimemachineDecoder.decode(
                Array(OneCallJSON.timemachine(latitude: 41.3888, longitude: 2.159, at: time).utf8))
            var live = try OneCallDecoder.decode(
                Array(OneCallJSON.render(latitude: 41.3888, longitude: 2.159, at: time).utf8)
            ).current
            #expect(past.observationTime == time, "dt echoes the moment asked for")
            live.observationTime = time
            #expect(past == live)
        }
    }

    @Test func theAirPollutionHistoryIsTheLiveAnswersHourByHour() throws {
        let now = ForecastModelTests.now
        let start = now - 24 * 3600
        let body = Endpoint.airPollutionHistory.answer(
            ["start": String(Int(start)), "end": String(Int(now))], latitude: 35.68, longitude: 139.69, at: now + 60)
        #expect(body.status == 200)
        let hours = try AirPollutionHistoryDecoder.decode(Array(body.body.utf8))
        // The whole hours from start to end: `now` is 53 min 20 s past an hour, so 24 of them.
        #expect(hours.count == 24)
        #expect(hours.first!.observationTime == (start / 3600).rounded(.up) * 3600)
        for hour in hours {
            let live = try AirPollutionDecoder.decode(
                Array(
                    AirPollutionJSON.render(
                        AirPollutionModel.reading(latitude: 35.68, longitude: 139.69, at: hour.observationTime + 1800),
                        latitude: 35.68, longitude: 139.69
                    ).utf8))
            #expect(hour == live)
        }
        #expect(Endpoint.airPollutionHistory.answer([:], latitude: 35.68, longitude: 139.69, at: now).status == 400)
    }

    @Test func theTimemachineRefusesMomentsOutsideItsRange() {
        let now = ForecastModelTests.now
        for moment in ["", "0", String(Int(now + 5 * 86_400))] {
            #expect(
                Endpoint.oneCallTimemachine.answer(["dt": moment], latitude: 1, longitude: 2, at: now).status == 400)
        }
    }
}
