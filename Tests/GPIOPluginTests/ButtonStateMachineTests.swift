import DriverTesting
import GPIOKit
import Testing

@Suite struct ButtonStateMachineTests {
    typealias Instant = ManualClock.Instant
    typealias Machine = ButtonStateMachine<Instant>
    func at(_ ms: Int64) -> Instant { Instant(offset: .milliseconds(ms)) }

    let settings = ButtonSettings(longPress: .milliseconds(800), multiPressWindow: .milliseconds(400), multiPressMax: 3)

    @Test func shortPress_givesInitialPressShortReleaseThenMultiPressCompleteOfOne() {
        var m = Machine(settings: settings)
        #expect(m.press(at: at(0)) == [.initialPress])
        #expect(m.deadline == at(800))
        #expect(m.release(at: at(100)) == [.shortRelease])
        #expect(m.deadline == at(500))
        #expect(m.tick(at(499)) == [])
        #expect(m.tick(at(500)) == [.multiPressComplete(1)])
        #expect(m.deadline == nil)
    }

    @Test func longPress_firesAtLongPressTime_andEndsWithLongRelease() {
        var m = Machine(settings: settings)
        _ = m.press(at: at(0))
        #expect(m.tick(at(799)) == [])
        #expect(m.tick(at(800)) == [.longPress])
        #expect(m.deadline == nil)
        #expect(m.release(at: at(2000)) == [.longRelease])
        #expect(m.deadline == nil)
    }

    @Test func releaseAfterDueLongPress_countsAsLong_evenWithoutTick() {
        var m = Machine(settings: settings)
        _ = m.press(at: at(0))
        #expect(m.release(at: at(900)) == [.longPress, .longRelease])
    }

    @Test func doublePress_reportsOngoingAtSecondPress_andCompleteOfTwo() {
        var m = Machine(settings: settings)
        _ = m.press(at: at(0))
        _ = m.release(at: at(100))
        #expect(m.press(at: at(300)) == [.initialPress, .multiPressOngoing(2)])
        #expect(m.release(at: at(400)) == [.shortRelease])
        #expect(m.tick(at(800)) == [.multiPressComplete(2)])
    }

    @Test func pressAfterWindow_startsANewSequence() {
        var m = Machine(settings: settings)
        _ = m.press(at: at(0))
        _ = m.release(at: at(100))
        #expect(m.tick(at(500)) == [.multiPressComplete(1)])
        #expect(m.press(at: at(600)) == [.initialPress])
    }

    @Test func morePressesThanMax_completeWithTotalZero() {
        var m = Machine(settings: settings)
        var t: Int64 = 0
        var outputs: [Machine.Output] = []
        for _ in 0..<4 {
            outputs += m.press(at: at(t))
            outputs += m.release(at: at(t + 50))
            t += 200
        }
        #expect(outputs.filter { if case .multiPressOngoing = $0 { true } else { false } } == [.multiPressOngoing(2), .multiPressOngoing(3)])
        #expect(m.tick(at(t + 1000)) == [.multiPressComplete(0)])
    }

    @Test func withoutMultiPressWindow_noMultiPressEvents() {
        var m = Machine(settings: ButtonSettings(longPress: .milliseconds(500), multiPressWindow: nil))
        #expect(m.press(at: at(0)) == [.initialPress])
        #expect(m.release(at: at(10)) == [.shortRelease])
        #expect(m.deadline == nil)
        #expect(m.press(at: at(20)) == [.initialPress])
    }

    @Test func repeatedPressOrRelease_isIgnored() {
        var m = Machine(settings: settings)
        #expect(m.release(at: at(0)) == [])
        _ = m.press(at: at(1))
        #expect(m.press(at: at(2)) == [])
    }
}
