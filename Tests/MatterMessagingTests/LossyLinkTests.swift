@testable import MatterMessaging
import Testing

/// Two message layers joined by an in-memory link that loses, duplicates, delays and reorders
/// datagrams (seeded, so every run is the same), under a manual clock.
struct LossyLink {
    struct InFlight { var datagram: [UInt8]; var to: PeerAddress; var from: PeerAddress; var arrives: TestInstant }
    var rng: SplitMix64
    var loss: Double
    var duplication: Double
    var maxDelay: Duration
    var inFlight: [InFlight] = []
    var sent = 0, lost = 0, duplicated = 0

    mutating func transmit(_ effects: [MessageEffect], from: PeerAddress, now: TestInstant) {
        for case .send(let d, let to) in effects {
            sent += 1
            if unit() < loss { lost += 1; continue }
            let copies = unit() < duplication ? 2 : 1
            if copies == 2 { duplicated += 1 }
            for _ in 0..<copies {
                let delay = Duration.milliseconds(Int64(unit() * Double(maxDelay.components.seconds * 1000 + maxDelay.components.attoseconds / 1_000_000_000_000_000)))
                inFlight.append(InFlight(datagram: d, to: to, from: from, arrives: now.advanced(by: delay)))
            }
        }
    }

    /// Datagrams that have arrived by `now`, in arrival order (random delays reorder them).
    mutating func arrivals(by now: TestInstant) -> [InFlight] {
        let due = inFlight.filter { $0.arrives <= now }.sorted { $0.arrives < $1.arrives }
        inFlight.removeAll { $0.arrives <= now }
        return due
    }

    mutating func unit() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
}

@Suite struct LossyLinkTests {
    /// A sends 40 requests one after another (each on its own exchange); B answers each. With
    /// 30 % loss, 15 % duplication and up to 80 ms of reordering delay, every request must
    /// reach B exactly once and every answer reach A exactly once.
    @Test(arguments: [UInt64(1), 2, 3])
    func requestsSurviveLossDuplicationAndReordering(seed: UInt64) throws {
        let pair = try securePair(seedA: seed * 10, seedB: seed * 10 + 1)
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        b.acceptUnsolicited(.interactionModel)
        var link = LossyLink(rng: SplitMix64(seed: seed), loss: 0.3, duplication: 0.15, maxDelay: .milliseconds(80))
        var now = TestInstant.zero
        var requestsAtB: [UInt8: Int] = [:]
        var answersAtA: [UInt8: Int] = [:]
        var failures = 0
        let total: UInt8 = 40
        var next: UInt8 = 0
        var current: ExchangeKey?

        for _ in 0..<200_000 {  // 10 ms steps: at most ~33 simulated minutes
            if current == nil && next < total {
                let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
                link.transmit(try a.send(on: ex, opcode: 2, payload: [next], now: now), from: addressA, now: now)
                current = ex
                next += 1
            }
            for arrival in link.arrivals(by: now) {
                if arrival.to == addressB {
                    let effects = b.receive(arrival.datagram, from: arrival.from, now: now)
                    link.transmit(effects, from: addressB, now: now)
                    for m in effects.delivered {
                        requestsAtB[m.payload[0], default: 0] += 1
                        link.transmit(try b.send(on: m.exchange, opcode: 5, payload: m.payload, now: now), from: addressB, now: now)
                        link.transmit(b.close(m.exchange, now: now), from: addressB, now: now)
                    }
                } else {
                    let effects = a.receive(arrival.datagram, from: arrival.from, now: now)
                    link.transmit(effects, from: addressA, now: now)
                    for m in effects.delivered {
                        answersAtA[m.payload[0], default: 0] += 1
                        link.transmit(a.close(m.exchange, now: now), from: addressA, now: now)
                        if m.exchange == current { current = nil }
                    }
                }
            }
            let ea = a.advance(to: now)
            failures += ea.failures.count
            if !ea.failures.isEmpty { current = nil }
            link.transmit(ea, from: addressA, now: now)
            let eb = b.advance(to: now)
            failures += eb.failures.count
            link.transmit(eb, from: addressB, now: now)
            if next == total && current == nil && link.inFlight.isEmpty && a.nextDeadline == nil && b.nextDeadline == nil { break }
            now = now.advanced(by: .milliseconds(10))
        }
        // Every request that reached B reached it once; every answer reached A once.
        #expect(requestsAtB.values.allSatisfy { $0 == 1 }, "\(requestsAtB)")
        #expect(answersAtA.values.allSatisfy { $0 == 1 }, "\(answersAtA)")
        // With 5 transmissions at 30 % loss a round trip fails rarely; most must complete.
        #expect(answersAtA.count + failures >= Int(total))
        #expect(answersAtA.count >= Int(total) - 4, "answers \(answersAtA.count), failures \(failures)")
        #expect(link.lost > 0 && link.duplicated > 0)
        #expect(a.exchangeCount == 0 && b.exchangeCount == 0)
    }

    @Test func reorderedMessagesInsideTheWindowAreAllDelivered() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        b.acceptUnsolicited(.interactionModel)
        var datagrams: [[UInt8]] = []
        for i in 0..<10 {
            let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
            datagrams += try a.send(on: ex, opcode: 1, payload: [UInt8(i)], reliable: false, now: .zero).datagrams
        }
        var got: [UInt8] = []
        for d in datagrams.reversed() + datagrams {  // reversed, then all again as duplicates
            got += b.receive(d, from: addressA, now: .zero).delivered.map { $0.payload[0] }
        }
        #expect(got == Array((0..<10).reversed()))
    }
}
