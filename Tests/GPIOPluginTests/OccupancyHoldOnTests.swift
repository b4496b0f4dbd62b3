import DriverTesting
import GPIOKit
import Testing

@Suite struct OccupancyHoldOnTests {
    typealias Instant = ManualClock.Instant
    func at(_ s: Int64) -> Instant { Instant(offset: .seconds(s)) }

    @Test func occupiedAtOnce_andClearedAfterHoldOn() {
        var o = OccupancyHoldOn<Instant>(holdOn: .seconds(30), initial: false)
        #expect(o.level(true, at: at(0)) == true)
        #expect(o.level(false, at: at(2)) == nil)
        #expect(o.deadline == at(32))
        #expect(o.tick(at(31)) == nil)
        #expect(o.tick(at(32)) == false)
        #expect(!o.occupied)
    }

    @Test func pulseWithinHoldOn_keepsOccupied_andRestartsHold() {
        var o = OccupancyHoldOn<Instant>(holdOn: .seconds(30), initial: false)
        _ = o.level(true, at: at(0))
        _ = o.level(false, at: at(1))
        #expect(o.level(true, at: at(20)) == nil)
        #expect(o.deadline == nil)
        _ = o.level(false, at: at(21))
        #expect(o.tick(at(40)) == nil)
        #expect(o.tick(at(51)) == false)
    }

    @Test func clearsAtOnce_withoutHoldOn() {
        var o = OccupancyHoldOn<Instant>(holdOn: .zero, initial: false)
        _ = o.level(true, at: at(0))
        #expect(o.level(false, at: at(1)) == false)
    }
}
