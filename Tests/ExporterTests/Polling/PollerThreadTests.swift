import Dispatch
import Locking
import OpenWeather
import TestSupport
import Testing

@testable import Exporter

/// The poller with its requests on its own threads, on a clock the test moves, against a transport
/// whose answers wait until the test lets them go: what is in flight together is an event the test
/// waits for, never a race with the machine's speed.
@Suite(.blocking) struct PollerThreadTests {
    /// Requests held upstream until released: each `pass` waits (while not open) for a `release`.
    final class Gate: Sendable {
        private let state = Locked((waiting: 0, open: false))
        private let semaphore = DispatchSemaphore(value: 0)

        /// Requests waiting at the gate now.
        var waiting: Int { state.withLock { $0.waiting } }

        func pass() {
            let wait = state.withLock { state in
                if !state.open { state.waiting += 1 }
                return !state.open
            }
            guard wait else { return }
            semaphore.wait()
            state.withLock { $0.waiting -= 1 }
        }

        func release(_ count: Int) { for _ in 0..<count { semaphore.signal() } }

        /// Lets every waiting request go, and every later one through.
        func open() {
            let waiting = state.withLock { state in
                state.open = true
                return state.waiting
            }
            release(waiting)
        }
    }

    /// Steps the poller, moving the clock to each start the budget allows in the next `horizon`
    /// seconds, until the schedule waits for an answer or for later.
    @discardableResult
    static func launch(_ rig: Rig, horizon: Double = 1) -> PollSchedule.Decision {
        let end = rig.time.monotonic() + horizon
        while true {
            let decision = rig.poller.step()
            guard case .wait(let until) = decision, until <= end else { return decision }
            rig.time.set(max(until, rig.time.monotonic()))
        }
    }

    /// Requests mostly wait for the network: the 16 allowed in flight are all out at once, on
    /// threads of the poller's own, and the 17th waits for an answer. libdispatch's global queue
    /// would start with about a thread a core and add one a second while they all wait (16 took
    /// 14 s on 2 cores); the pool starts 16 as they are handed over, so 10 s is a wide margin.
    @Test func sixteenSlowRequestsAreInFlightTogether() {
        let rig = Rig(configuration(PollerClockTests.places(24), budget: 6000), execute: nil)
        let gate = Gate()
        defer { gate.open() }
        rig.transport.answer { request in
            gate.pass()
            return FakeTransport.fixtures(request)
        }
        #expect(Self.launch(rig) == .idle)
        #expect(rig.poller.core.withLock { $0.schedule.inFlightCount } == 16)
        #expect(waitUntil(seconds: 10) { gate.waiting == 16 }, "\(gate.waiting) requests in flight together")
        #expect(Self.launch(rig) == .idle && rig.transport.log.count == 16, "none answered: no 17th")
        gate.release(1)
        #expect(
            waitUntil {
                Self.launch(rig)
                return rig.transport.log.count == 17
            }, "an answer lets the 17th go")
        #expect(waitUntil { gate.waiting == 16 })
    }

    /// A source whose endpoint hangs holds its share of the 16 requests in flight (8 of 16 beside one
    /// other source), so the other source's jobs all go: air quality up at all 60 places while no
    /// weather request ever answers.
    @Test func aSourceWhoseRequestsHangLeavesTheOthersTheirShare() throws {
        let places = PollerClockTests.places(60)
        let rig = Rig(configuration(places, collectors: PollerClockTests.weatherAndAir, budget: 6000), execute: nil)
        let gate = Gate()
        defer { gate.open() }
        rig.transport.answer { request in
            if request.path == "/data/2.5/weather" { gate.pass() }
            return FakeTransport.fixtures(request)
        }
        let air = { places.count { rig.state($0.name, "air_pollution")?.up == true } }
        #expect(
            waitUntil(seconds: 30) {
                Self.launch(rig)
                return air() == 60
            }, "air quality up at \(air()) of 60 places")
        let weather = try #require(rig.store.snapshot().layout.sourceNames.firstIndex(of: "weather"))
        #expect(rig.poller.core.withLock { $0.schedule.inFlightBySlot[weather] } == 8)
        #expect(rig.transport.requests(to: "/data/2.5/weather").count <= 8)
    }
}
