import DriverTesting
import GPIOKit
import Testing

@Suite struct DebouncerTests {
    typealias Instant = ManualClock.Instant
    func at(_ ms: Int64) -> Instant { Instant(offset: .milliseconds(ms)) }

    @Test func passesAtOnce_whenWindowIsZero() {
        var d = Debouncer<Instant>(window: .zero, initial: false)
        #expect(d.edge(true, at: at(0), timestamp: 7) == LevelChange(level: true, timestampNanoseconds: 7))
        #expect(d.edge(true, at: at(1), timestamp: 8) == nil)
        #expect(d.deadline == nil)
    }

    @Test func reportsLevel_onlyAfterItHeldForTheWindow() {
        var d = Debouncer<Instant>(window: .milliseconds(20), initial: false)
        #expect(d.edge(true, at: at(0), timestamp: 100) == nil)
        #expect(d.deadline == at(20))
        #expect(d.tick(at(19)) == nil)
        #expect(d.tick(at(20)) == LevelChange(level: true, timestampNanoseconds: 100))
        #expect(d.level == true)
        #expect(d.deadline == nil)
    }

    @Test func dropsBounce_whenLevelReturnsWithinWindow() {
        var d = Debouncer<Instant>(window: .milliseconds(20), initial: false)
        _ = d.edge(true, at: at(0), timestamp: 1)
        _ = d.edge(false, at: at(5), timestamp: 2)
        #expect(d.deadline == nil)
        #expect(d.tick(at(100)) == nil)
        #expect(d.level == false)
    }

    @Test func restartsWindow_fromLastEdgeOfABurst() {
        var d = Debouncer<Instant>(window: .milliseconds(20), initial: false)
        _ = d.edge(true, at: at(0), timestamp: 1)
        _ = d.edge(false, at: at(5), timestamp: 2)
        _ = d.edge(true, at: at(10), timestamp: 3)
        #expect(d.tick(at(25)) == nil)
        #expect(d.tick(at(30)) == LevelChange(level: true, timestampNanoseconds: 3))
    }
}
