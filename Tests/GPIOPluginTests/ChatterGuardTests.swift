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
            #expect(guard_.change(change, at: at(i * 1000)) == .pass(change))
        }
        #expect(!guard_.isChattering)
        #expect(guard_.deadline == nil)
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
            let change = try #require(debouncer.tick(at(ms + 20)))
            switch guard_.change(change, at: at(ms + 20)) {
            case .pass(let c): passed.append(c.level)
            case .tripped(let restore):
                trips += 1
                if let r = restore { restored.append(r.level) }
            case .suppressed: break
            }
            #expect(guard_.tick(at(ms + 20)) == nil, "still chattering")
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
        #expect(guard_.tick(at(last + 20 + 9_999)) == nil)
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
        #expect(guard_.change(LevelChange(level: true, timestampNanoseconds: 3), at: at(200)) == .tripped(restore: nil))
        #expect(guard_.change(LevelChange(level: false, timestampNanoseconds: 4), at: at(300)) == .suppressed)
        #expect(guard_.change(LevelChange(level: true, timestampNanoseconds: 5), at: at(400)) == .suppressed)
        #expect(guard_.tick(at(5_399)) == nil)
        #expect(guard_.tick(at(5_400)) == .some(LevelChange(level: true, timestampNanoseconds: 5)))
        let change = LevelChange(level: false, timestampNanoseconds: 6)
        #expect(guard_.change(change, at: at(20_000)) == .pass(change))
        #expect(guard_.steady == true, "true held for the quiet period before this change")
    }
}
