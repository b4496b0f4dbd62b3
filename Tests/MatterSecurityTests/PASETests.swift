import MatterTLV
import Testing

@testable import MatterSecurity

@Suite struct PASEMessageTests {
    @Test func pbkdfParamRequestRoundTripsAndUsesSpecTags() throws {
        let request = PBKDFParamRequest(
            initiatorRandom: [UInt8](repeating: 0xAB, count: 32), initiatorSessionID: 0x1234,
            sessionParameters: SessionParameters(idleInterval: 500, activeInterval: 300, activeThreshold: 4000))
        let bytes = try request.encoded()
        #expect(try PBKDFParamRequest(decoding: bytes) == request)
        let element = try TLVElement(decoding: bytes)
        #expect(try element.member(.context(1)).bytes().count == 32)
        #expect(try element.member(.context(2)).uint() == 0x1234)
        #expect(try element.member(.context(3)).uint() == 0)
        #expect(try element.member(.context(4)).bool() == false)
        #expect(try element.member(.context(5)).member(.context(1)).uint() == 500)
        // Byte-exact start: anonymous structure, context 1 octet string of 32.
        #expect(Array(bytes.prefix(3)) == [0x15, 0x30, 0x01])
    }

    @Test func pbkdfParamResponseCarriesParametersOnlyWhenAsked() throws {
        let full = PBKDFParamResponse(
            initiatorRandom: [UInt8](repeating: 1, count: 32), responderRandom: [UInt8](repeating: 2, count: 32),
            responderSessionID: 7, iterations: 1000, salt: Array("SPAKE2P Key Salt".utf8))
        #expect(try PBKDFParamResponse(decoding: try full.encoded()) == full)
        let bare = PBKDFParamResponse(
            initiatorRandom: full.initiatorRandom, responderRandom: full.responderRandom, responderSessionID: 7,
            iterations: nil, salt: nil)
        #expect(try PBKDFParamResponse(decoding: try bare.encoded()) == bare)
        #expect(try TLVElement(decoding: try bare.encoded())[context: 4] == nil)
    }

    @Test func refusesMalformedMessages() throws {
        #expect(throws: MatterSecurityError.self) { try PBKDFParamRequest(decoding: []) }
        #expect(throws: MatterSecurityError.self) { try PBKDFParamRequest(decoding: [0x15, 0x18, 0x18]) }
        let shortRandom = try TLVElement.structure([
            .init(.context(1), .bytes([1, 2, 3])), .init(.context(2), .unsigned(1)), .init(.context(3), .unsigned(0)),
            .init(.context(4), .bool(false)),
        ]).encoded()
        #expect(throws: MatterSecurityError.self) { try PBKDFParamRequest(decoding: shortRandom) }
        #expect(throws: MatterSecurityError.self) { try Pake1(decoding: try TLVElement.structure([.init(.context(1), .bytes([4]))]).encoded()) }
        #expect(throws: MatterSecurityError.self) { try Pake3(decoding: try TLVElement.array(.anonymous, []).encoded()) }
    }

    @Test func statusReportLayout() throws {
        #expect(StatusReport.sessionEstablished.encoded == [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(StatusReport.invalidParameter.encoded == [1, 0, 0, 0, 0, 0, 2, 0])
        let r = try StatusReport(decoding: [1, 0, 0xF1, 0xFF, 0x02, 0x00, 0x05, 0x00, 9])
        #expect(r.generalCode == 1 && r.protocolID == 0x0002_FFF1 && r.protocolCode == 5 && r.data == [9])
        #expect(throws: MatterSecurityError.self) { try StatusReport(decoding: [0, 0, 0]) }
    }
}

@Suite struct PASEHandshakeTests {
    static let salt = Array("SPAKE2P Key Salt".utf8)

    /// Runs initiator and responder against each other in memory; returns both sides' effects.
    static func run(initiatorPasscode: UInt32, devicePasscode: UInt32 = 20_202_021)
        throws -> (initiator: [HandshakeEffect], responder: [HandshakeEffect])
    {
        let verifier = try Spake2pVerifier(passcode: try SetupPasscode(devicePasscode), salt: salt, iterations: 1000)
        var responder = PASEResponder(verifier: verifier, salt: salt, iterations: 1000, localSessionID: 0x2222)
        var initiator = PASEInitiator(passcode: try SetupPasscode(initiatorPasscode), localSessionID: 0x1111)
        var toResponder = [try initiator.start()]
        var allI: [HandshakeEffect] = [], allR: [HandshakeEffect] = []
        for _ in 0..<10 where !toResponder.isEmpty {
            var toInitiator: [SecureChannelMessage] = []
            for m in toResponder {
                let effects = responder.receive(m.opcode, m.payload)
                allR += effects
                for case .send(let out) in effects { toInitiator.append(out) }
            }
            toResponder = []
            for m in toInitiator {
                let effects = initiator.receive(m.opcode, m.payload)
                allI += effects
                for case .send(let out) in effects { toResponder.append(out) }
            }
        }
        return (allI, allR)
    }

    @Test func establishesMatchingKeys() throws {
        let (i, r) = try Self.run(initiatorPasscode: 20_202_021)
        let si = i.compactMap { if case .established(let s) = $0 { s } else { nil } }
        let sr = r.compactMap { if case .established(let s) = $0 { s } else { nil } }
        #expect(si.count == 1 && sr.count == 1)
        guard let a = si.first, let b = sr.first else { return }
        #expect(a.keys == b.keys)
        #expect(a.encryptKey == b.decryptKey && a.decryptKey == b.encryptKey)
        #expect(a.keys.i2r != a.keys.r2i)
        #expect(a.peerSessionID == 0x2222 && b.peerSessionID == 0x1111)
        #expect(a.kind == .pase && !b.isInitiator)
        // The responder's last message is the success status report.
        let sent = r.compactMap { if case .send(let m) = $0 { m } else { nil } }
        #expect(sent.map(\.opcode) == [.pbkdfParamResponse, .pake2, .statusReport])
        #expect(sent.last?.payload == StatusReport.sessionEstablished.encoded)
    }

    @Test func wrongPasscodeFailsWithStatusReport() throws {
        let (i, r) = try Self.run(initiatorPasscode: 20_202_022)
        #expect(!i.contains { if case .established = $0 { true } else { false } })
        #expect(!r.contains { if case .established = $0 { true } else { false } })
        // The initiator detects the bad cB first and reports invalid parameter; the responder fails on it.
        let sentByInitiator = i.compactMap { if case .send(let m) = $0 { m } else { nil } }
        #expect(sentByInitiator.last?.opcode == .statusReport)
        #expect(sentByInitiator.last?.payload == StatusReport.invalidParameter.encoded)
        #expect(r.contains { if case .failed = $0 { true } else { false } })
    }

    @Test func responderRefusesOutOfOrderMessages() throws {
        let verifier = try Spake2pVerifier(passcode: try SetupPasscode(20_202_021), salt: Self.salt, iterations: 1000)
        var responder = PASEResponder(verifier: verifier, salt: Self.salt, iterations: 1000, localSessionID: 1)
        let effects = responder.receive(.pake1, try Pake1(pA: [UInt8](repeating: 4, count: 65)).encoded())
        #expect(effects.first == .send(SecureChannelMessage(.statusReport, StatusReport.invalidParameter.encoded)))
        #expect(responder.isFinished)
        // A finished responder refuses a fresh request too.
        var initiator = PASEInitiator(passcode: try SetupPasscode(20_202_021), localSessionID: 2)
        let request = try initiator.start()
        #expect(responder.receive(request.opcode, request.payload).contains { if case .failed = $0 { true } else { false } })
    }

    @Test func responderOmitsParametersWhenInitiatorHasThem() throws {
        let verifier = try Spake2pVerifier(passcode: try SetupPasscode(20_202_021), salt: Self.salt, iterations: 1000)
        var responder = PASEResponder(verifier: verifier, salt: Self.salt, iterations: 1000, localSessionID: 1)
        let request = PBKDFParamRequest(initiatorRandom: [UInt8](repeating: 3, count: 32), initiatorSessionID: 5, hasPBKDFParameters: true)
        let effects = responder.receive(.pbkdfParamRequest, try request.encoded())
        guard case .send(let m) = effects.first else {
            Issue.record("no response")
            return
        }
        let response = try PBKDFParamResponse(decoding: m.payload)
        #expect(response.salt == nil && response.iterations == nil)
        #expect(response.initiatorRandom == request.initiatorRandom)
        // A nonzero passcode ID is refused.
        var other = PASEResponder(verifier: verifier, salt: Self.salt, iterations: 1000, localSessionID: 1)
        let bad = PBKDFParamRequest(initiatorRandom: [UInt8](repeating: 3, count: 32), initiatorSessionID: 5, passcodeID: 1)
        #expect(other.receive(.pbkdfParamRequest, try bad.encoded()).contains { if case .failed = $0 { true } else { false } })
    }
}
