import MatterMessaging
import Testing

@Suite struct CounterTests {
    @Test func secureUnicastWindow() {
        var r = MessageReceptionState(policy: .secureUnicast)
        #expect(r.accept(1000) == true)           // trust first
        #expect(r.accept(1000) == false)          // duplicate
        #expect(r.accept(1003) == true)
        #expect(r.accept(1001) == true)           // late, inside the window
        #expect(r.accept(1001) == false)
        #expect(r.accept(1002) == true)
        #expect(r.accept(1003 - 32) == true)      // the oldest counter the window holds
        #expect(r.accept(1003 - 33) == false)     // behind the window: refused, never rolls over
        #expect(r.accept(5000) == true)
        #expect(r.accept(1004) == false)          // far behind now
        #expect(r.accept(0) == false)
    }

    @Test func groupCountersRollOverButRefuseBehindTheWindow() {
        var r = MessageReceptionState(policy: .group)
        #expect(r.accept(UInt32.max - 1) == true)
        #expect(r.accept(1) == true)              // rolled over: ahead in modular arithmetic
        #expect(r.accept(UInt32.max) == true)     // late, inside the window across the wrap
        #expect(r.accept(UInt32.max) == false)
        #expect(r.accept(1 &- 40) == false)       // behind the window
    }

    @Test func unencryptedCountersBehindTheWindowRestartIt() {
        var r = MessageReceptionState(policy: .unencrypted)
        #expect(r.accept(500) == true)
        #expect(r.accept(500) == false)
        #expect(r.accept(490) == true)
        #expect(r.accept(490) == false)
        #expect(r.accept(10) == true)             // peer rebooted with a lower counter: accepted
        #expect(r.maxCounter == 10)
        #expect(r.accept(10) == false)
    }

    @Test func windowSlidesByExactAmounts() {
        var r = MessageReceptionState(policy: .secureUnicast)
        _ = r.accept(100)
        _ = r.accept(132)                 // 100 is exactly 32 behind
        #expect(r.accept(100) == false)
        #expect(r.accept(101) == true)
        _ = r.accept(200)                 // jump past the window: everything before forgotten but refused
        #expect(r.accept(167) == false)
        #expect(r.accept(168) == true)
    }

    @Test func outgoingCounters() throws {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let c = MessageCounter.secureSession(using: &rng)
            #expect(c.next >= 1 && c.next <= 1 << 28)
        }
        var last = MessageCounter(start: UInt32.max - 1, wraps: false)
        #expect(try last.take() == UInt32.max - 1)
        #expect(try last.take() == UInt32.max)
        #expect(throws: MessagingError.self) { try last.take() }
        var global = MessageCounter(start: UInt32.max, wraps: true)
        #expect(try global.take() == UInt32.max)
        #expect(try global.take() == 0)
    }
}
