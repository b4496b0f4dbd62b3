@testable import MatterMessaging
import Testing

@Suite struct MRPTests {
    @Test func backoffFollowsTheSpecFormula() {
        let c = MRPConfiguration.default
        let ms: (Int, Double) -> Double = { n, j in
            let d = c.backoff(baseInterval: .milliseconds(500), transmission: n, jitter: j).components
            return Double(d.seconds) * 1000 + Double(d.attoseconds) / 1e15
        }
        // i · 1.1 · 1.6^max(0, n−1) · (1 + j · 0.25)
        #expect(abs(ms(0, 0) - 550) < 0.001)
        #expect(abs(ms(1, 0) - 550) < 0.001)
        #expect(abs(ms(2, 0) - 880) < 0.001)
        #expect(abs(ms(3, 0) - 1408) < 0.001)
        #expect(abs(ms(4, 0) - 2252.8) < 0.001)
        #expect(abs(ms(0, 1) - 687.5) < 0.001)
        #expect(abs(ms(2, 0.5) - 990) < 0.001)
    }

    @Test func requestAndResponseWithPiggybackedAck() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        let t = TestInstant.zero
        let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
        b.acceptUnsolicited(.interactionModel)
        let out = try a.send(on: ex, opcode: 2, payload: [1], now: t)
        #expect(a.awaitsAck(ex))
        let atB = b.receive(out.datagrams[0], from: addressA, now: t)
        let request = try #require(atB.delivered.first)
        #expect(request.opensExchange && request.payload == [1] && request.protocolHeader.needsAck)
        // The reply carries the ack (A flag) — no standalone ack is sent.
        let reply = try b.send(on: request.exchange, opcode: 5, payload: [2], now: t.advanced(by: .milliseconds(10)))
        let replyHeader = try protocolHeader(of: reply.datagrams[0], key: keyB)
        #expect(replyHeader.ackedCounter == request.header.messageCounter)
        let atA = a.receive(reply.datagrams[0], from: addressB, now: t.advanced(by: .milliseconds(20)))
        #expect(atA.delivered.first?.payload == [2])
        #expect(!a.awaitsAck(ex))
        // B's pending ack was consumed; A's ack for the reply goes out standalone after 200 ms.
        #expect(b.advance(to: t.advanced(by: .milliseconds(300))).datagrams.isEmpty)
        #expect(a.advance(to: t.advanced(by: .milliseconds(219))).datagrams.isEmpty)
        let standalone = a.advance(to: t.advanced(by: .milliseconds(220)))
        let ack = try protocolHeader(of: try #require(standalone.datagrams.first), key: keyA)
        #expect(ack.isStandaloneAck && !ack.needsAck)
        let done = b.receive(standalone.datagrams[0], from: addressA, now: t.advanced(by: .milliseconds(230)))
        #expect(done.delivered.isEmpty)
        #expect(!b.awaitsAck(request.exchange))
    }

    @Test func retransmitsWithBackoffThenGivesUp() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
        let first = try a.send(on: ex, opcode: 2, payload: [1], now: .zero)
        var sends = [TestInstant.zero]
        var failed: [ExchangeKey] = []
        var t = TestInstant.zero
        // Step time 1 ms at a time for up to 20 s; nothing is ever acked.
        for _ in 0..<20_000 {
            t = t.advanced(by: .milliseconds(1))
            let effects = a.advance(to: t)
            for d in effects.datagrams {
                #expect(d == first.datagrams[0])  // the same bytes, same counter
                sends.append(t)
            }
            failed += effects.failures
            if !failed.isEmpty { break }
        }
        #expect(sends.count == 5)  // MRP_MAX_TRANSMISSIONS
        #expect(failed == [ex])
        #expect(!a.isOpen(ex))
        // Gaps: idle interval 500 ms · 1.1 · 1.6^max(0, n−1) · (1 + [0, 0.25)).
        let gaps = zip(sends, sends.dropFirst()).map { Double($0.duration(to: $1).components.attoseconds) / 1e15 + Double($0.duration(to: $1).components.seconds) * 1000 }
        let expected = [550.0, 550, 880, 1408]
        for (gap, base) in zip(gaps, expected) {
            #expect(gap >= base - 1 && gap <= base * 1.25 + 1, "gap \(gap) for base \(base)")
        }
        #expect(throws: MessagingError.self) { try a.send(on: ex, opcode: 2, payload: [], now: t) }
    }

    @Test func activePeerUsesTheActiveInterval() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        let sb = pair.3
        b.acceptUnsolicited(.interactionModel)
        // B sends something so A has heard from B recently (B is "active").
        let exB = try b.newExchange(on: sb, protocolID: .interactionModel)
        a.acceptUnsolicited(.interactionModel)
        let ping = try b.send(on: exB, opcode: 1, payload: [], reliable: false, now: .zero)
        _ = a.receive(ping.datagrams[0], from: addressB, now: .zero)
        let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
        _ = try a.send(on: ex, opcode: 2, payload: [], now: .zero)
        let due = try #require(a.nextDeadline)
        let ms = Double(due.offset.components.attoseconds) / 1e15 + Double(due.offset.components.seconds) * 1000
        #expect(ms >= 330 - 1 && ms <= 330 * 1.25 + 1)  // 300 ms active interval · 1.1
    }

    @Test func duplicateIsAckedButNotDeliveredTwice() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        b.acceptUnsolicited(.interactionModel)
        let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
        let out = try a.send(on: ex, opcode: 2, payload: [7], now: .zero)
        let first = b.receive(out.datagrams[0], from: addressA, now: .zero)
        #expect(first.delivered.count == 1)
        let again = b.receive(out.datagrams[0], from: addressA, now: TestInstant.zero.advanced(by: .milliseconds(1)))
        #expect(again.delivered.isEmpty)
        let ack = try protocolHeader(of: try #require(again.datagrams.first), key: keyB)
        #expect(ack.isStandaloneAck && ack.ackedCounter == first.delivered[0].header.messageCounter)
        _ = a.receive(again.datagrams[0], from: addressB, now: TestInstant.zero.advanced(by: .milliseconds(2)))
        #expect(!a.awaitsAck(ex))
    }

    @Test func oneReliableMessageInFlightPerExchange() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
        _ = try a.send(on: ex, opcode: 1, payload: [], now: .zero)
        #expect(throws: MessagingError.self) { try a.send(on: ex, opcode: 1, payload: [], now: .zero) }
        _ = try a.send(on: ex, opcode: 1, payload: [], reliable: false, now: .zero)
    }

    @Test func unsolicitedMessageForAnUnknownProtocolIsAckedAndDropped() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        let ex = try a.newExchange(on: sa, protocolID: ProtocolID(vendorID: 0xFFF1, id: 9))
        let out = try a.send(on: ex, opcode: 1, payload: [], now: .zero)
        let atB = b.receive(out.datagrams[0], from: addressA, now: .zero)
        #expect(atB.delivered.isEmpty)
        #expect(try protocolHeader(of: try #require(atB.datagrams.first), key: keyB).isStandaloneAck)
    }

    @Test func unsecuredSessionForSessionSetup() throws {
        var initiator = Layer(seed: 11)
        var responder = Layer(seed: 12)
        let ex = initiator.newUnsecuredExchange(to: addressB)
        let out = try initiator.send(on: ex, opcode: SecureChannelOpcode.pbkdfParamRequest.rawValue, payload: [0x15, 0x18], now: .zero)
        let (h, _, _) = try MessageCodec.decodeUnsecured(out.datagrams[0])
        #expect(h.sessionID == 0 && h.sourceNodeID != nil)  // ephemeral initiator node ID
        let atR = responder.receive(out.datagrams[0], from: addressA, now: .zero)
        let req = try #require(atR.delivered.first)
        #expect(req.opensExchange && req.protocolID == .secureChannel)
        let reply = try responder.send(on: req.exchange, opcode: SecureChannelOpcode.pbkdfParamResponse.rawValue, payload: [1], now: .zero)
        let (rh, rph, _) = try MessageCodec.decodeUnsecured(reply.datagrams[0])
        #expect(rh.destination == .node(h.sourceNodeID!) && rh.sourceNodeID == nil && rph.ackedCounter == h.messageCounter)
        let atI = initiator.receive(reply.datagrams[0], from: addressB, now: .zero)
        #expect(atI.delivered.first?.payload == [1])
        #expect(atI.delivered.first?.exchange == ex)
        #expect(!initiator.awaitsAck(ex))
        // A reply to an ephemeral ID nobody holds is dropped.
        var stranger = Layer(seed: 13)
        #expect(stranger.receive(reply.datagrams[0], from: addressB, now: .zero).delivered.isEmpty)
    }

    @Test func privacySessionsTalk() throws {
        let pair = try securePair(privacy: true)
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        b.acceptUnsolicited(.interactionModel)
        let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
        let out = try a.send(on: ex, opcode: 2, payload: [3], now: .zero)
        #expect(out.datagrams[0][3] & 0x80 != 0)
        #expect(b.receive(out.datagrams[0], from: addressA, now: .zero).delivered.first?.payload == [3])
    }

    @Test func closingAnExchangeFlushesItsAck() throws {
        let pair = try securePair()
        var a = pair.0
        let sa = pair.1
        var b = pair.2
        b.acceptUnsolicited(.interactionModel)
        let ex = try a.newExchange(on: sa, protocolID: .interactionModel)
        let out = try a.send(on: ex, opcode: 2, payload: [], now: .zero)
        let m = try #require(b.receive(out.datagrams[0], from: addressA, now: .zero).delivered.first)
        let closed = b.close(m.exchange, now: .zero)
        #expect(try protocolHeader(of: try #require(closed.datagrams.first), key: keyB).isStandaloneAck)
        #expect(b.exchangeCount == 0)
    }
}
