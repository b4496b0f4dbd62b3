import DriverTesting
import GPIOKit
import Testing

@Suite struct ChatterGuardTests {
    typealias Instant = ManualClock.Instant
    let t0 = ManualClock().now

    func at(_ ms: Int) -> Instant { t0.advanced(by: .milliseconds(ms)) }

    @Test func ordinaryChanges_pass() {
        var guard_ = ChatterGuard<Instant>(limit: 4, window: .seconds(10), quiet: .seconds(10), initial: false)
        for (i, level) in [true, false, true, false].enumerated() {
            let change = LevelChange(level: level, timestampNanoseconds: UInt64(i))
            let got1 = guard_.change(change, at: at(i * 1000))
            #expect(got1 == .pass(change))
        }
        #expect(!guard_.isChattering)
        #expect(guard_.deadline == nil)
    }

    @Test func off_passesEveryChange_andNeverTrips() {
        var guard_ = ChatterGuard<Instant>(limit: .max, initial: false)
        var level = false
        for i in 0..<10_000 {
            level.toggle()
            let change = LevelChange(level: level, timestampNanoseconds: UInt64(i))
            #expect(guard_.change(change, at: at(i)) == .pass(change))
        }
        #expect(!guard_.isChattering && guard_.deadline == nil && guard_.reported == level)
    }

    @Test func aLineChatteringForMinutes_behindA20msDebounce_isSetAsideOnce_andKeepsItsLastSteadyLevel() throws {
        // A failing contact: each level holds 25 ms, just longer than the 20 ms debounce window,
        // for three minutes. The debouncer lets every change through; the guard must not.
        var debouncer = Debouncer<Instant>(window: .milliseconds(20), initial: false)
        var guard_ = ChatterGuard<Instant>(initial: false)
        var passed: [Bool] = []
        var trips = 0
        var restored: [Bool] = []
        var level = false
        var ms = 60_000  // steady (false) for a minute first
        while ms < 60_000 + 180_000 {
            level.toggle()
            _ = debouncer.edge(level, at: at(ms), timestamp: UInt64(ms))
            let ticked = debouncer.tick(at(ms + 20))
            let change = try #require(ticked)
            switch guard_.change(change, at: at(ms + 20)) {
            case .pass(let c): passed.append(c.level)
            case .tripped(let restore):
                trips += 1
                if let r = restore { restored.append(r.level) }
            case .suppressed: break
            }
            let got2 = guard_.tick(at(ms + 20))
            #expect(got2 == nil, "still chattering")
            ms += 25
        }
        #expect(trips == 1, "one warning for the whole chatter")
        #expect(passed.count == guard_.limit, "only the changes before it was recognised reached the home")
        #expect(guard_.reported == false, "the device keeps its last steady level")
        #expect(restored == (passed.last == true ? [false] : []))
        #expect(guard_.ignored > 7000)
        // The contact settles (true) and holds: after the quiet period it counts again.
        let last = ms - 25
        #expect(guard_.deadline == at(last + 20).advanced(by: .seconds(10)))
        let got3 = guard_.tick(at(last + 20 + 9_999))
        #expect(got3 == nil)
        let ended = guard_.tick(at(last + 20 + 10_000))
        #expect(ended == .some(level == false ? nil : LevelChange(level: true, timestampNanoseconds: UInt64(last))))
        #expect(!guard_.isChattering)
        #expect(guard_.reported == level)
    }

    @Test func afterRecovery_ordinaryChangesPassAgain_andTheSteadyLevelMoves() {
        var guard_ = ChatterGuard<Instant>(limit: 2, window: .seconds(1), quiet: .seconds(5), initial: false)
        _ = guard_.change(LevelChange(level: true, timestampNanoseconds: 1), at: at(0))
        _ = guard_.change(LevelChange(level: false, timestampNanoseconds: 2), at: at(100))
        // third change within a second: chatter; the steady level is the initial false
        let got4 = guard_.change(LevelChange(level: true, timestampNanoseconds: 3), at: at(200))
        #expect(got4 == .tripped(restore: nil))
        let got5 = guard_.change(LevelChange(level: false, timestampNanoseconds: 4), at: at(300))
        #expect(got5 == .suppressed)
        let got6 = guard_.change(LevelChange(level: true, timestampNanoseconds: 5), at: at(400))
        #expect(got6 == .suppressed)
        let got7 = guard_.tick(at(5_399))
        #expect(got7 == nil)
        let got8 = guard_.tick(at(5_400))
        #expect(got8 == .some(LevelChange(level: true, timestampNanoseconds: 5)))
        let change = LevelChange(level: false, timestampNanoseconds: 6)
        let got9 = guard_.change(change, at: at(20_000))
        #expect(got9 == .pass(change))
        #expect(guard_.steady == true, "true held for the quiet period before this change")
    }
}
