import Crypto
import Testing

@testable import MatterSecurity

@Suite struct CASETests {
    static let epochIPK = [UInt8](repeating: 0x4A, count: 16)

    /// Two nodes of one fabric (shared root and ICAC), each with its own NOC.
    static func fabricPair(fabricID: UInt64 = 0xFAB1, initiatorNode: UInt64 = 0x1111, responderNode: UInt64 = 0x2222) throws
        -> (initiator: FabricCredentials, responder: FabricCredentials)
    {
        let fabric = try TestFabric(fabricID: fabricID, nodeID: responderNode)
        let otherKey = P256.Signing.PrivateKey()
        let initiatorNOC = try MatterCertificate.issue(
            serialNumber: [9], issuer: fabric.icac!.subject,
            subject: MatterDistinguishedName([.matterNodeID(initiatorNode), .matterFabricID(fabricID)]),
            subjectKey: otherKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]),
                         .extendedKeyUsage([.clientAuth, .serverAuth]),
                         .subjectKeyIdentifier(MatterCertificate.keyIdentifier(Array(otherKey.publicKey.x963Representation))),
                         .authorityKeyIdentifier(fabric.icac!.subjectKeyIdentifier!)],
            issuerKey: fabric.icacKey)
        return (
            try FabricCredentials(fabricIndex: 1, root: fabric.root, icac: fabric.icac, noc: initiatorNOC, operationalKey: otherKey, epochIPK: epochIPK),
            try FabricCredentials(fabricIndex: 3, root: fabric.root, icac: fabric.icac, noc: fabric.noc, operationalKey: fabric.nodeKey, epochIPK: epochIPK)
        )
    }

    /// Runs an initiator and a responder against each other in memory.
    static func run(_ initiator: inout CASEInitiator, _ responder: inout CASEResponder) throws
        -> (initiator: [HandshakeEffect], responder: [HandshakeEffect], opcodes: [SecureChannelOpcode])
    {
        var toResponder = [try initiator.start()]
        var opcodes = toResponder.map(\.opcode)
        var allI: [HandshakeEffect] = [], allR: [HandshakeEffect] = []
        for _ in 0..<6 where !toResponder.isEmpty {
            var toInitiator: [SecureChannelMessage] = []
            for m in toResponder {
                let effects = responder.receive(m.opcode, m.payload)
                allR += effects
                for case .send(let out) in effects { toInitiator.append(out) }
            }
            opcodes += toInitiator.map(\.opcode)
            toResponder = []
            for m in toInitiator {
                let effects = initiator.receive(m.opcode, m.payload)
                allI += effects
                for case .send(let out) in effects { toResponder.append(out) }
            }
            opcodes += toResponder.map(\.opcode)
        }
        return (allI, allR, opcodes)
    }

    static func session(_ effects: [HandshakeEffect]) -> EstablishedSession? {
        effects.lazy.compactMap { if case .established(let s) = $0 { s } else { nil } }.first
    }

    @Test func fullHandshakeAgreesOnKeysAndIdentities() throws {
        let (a, b) = try Self.fabricPair()
        var initiator = CASEInitiator(credentials: a, peerNodeID: b.nodeID, localSessionID: 10)
        var responder = CASEResponder(fabrics: [b], localSessionID: 20)
        let (i, r, opcodes) = try Self.run(&initiator, &responder)
        #expect(opcodes == [.sigma1, .sigma2, .sigma3, .statusReport])
        let si = try #require(Self.session(i)), sr = try #require(Self.session(r))
        #expect(si.keys == sr.keys)
        #expect(si.encryptKey == sr.decryptKey)
        #expect(si.peerNodeID == 0x2222 && sr.peerNodeID == 0x1111)
        #expect(si.peerSessionID == 20 && sr.peerSessionID == 10)
        #expect(si.resumption?.resumptionID == sr.resumption?.resumptionID)
        #expect(si.resumption?.sharedSecret == sr.resumption?.sharedSecret)
    }

    @Test func resumptionUsesSigma2ResumeAndFreshKeys() throws {
        let (a, b) = try Self.fabricPair()
        var i1 = CASEInitiator(credentials: a, peerNodeID: b.nodeID, localSessionID: 10)
        var r1 = CASEResponder(fabrics: [b], localSessionID: 20)
        let first = try Self.run(&i1, &r1)
        let si = try #require(Self.session(first.initiator)), sr = try #require(Self.session(first.responder))
        var i2 = CASEInitiator(credentials: a, peerNodeID: b.nodeID, localSessionID: 11, resumption: si.resumption)
        var r2 = CASEResponder(fabrics: [b], localSessionID: 21, resumptions: [try #require(sr.resumption)])
        let second = try Self.run(&i2, &r2)
        #expect(second.opcodes == [.sigma1, .sigma2Resume, .statusReport])
        let ri = try #require(Self.session(second.initiator)), rr = try #require(Self.session(second.responder))
        #expect(ri.keys == rr.keys)
        #expect(ri.keys != si.keys)
        #expect(rr.peerNodeID == 0x1111)
        // The resumed keys are salted with Sigma1's initiatorRandom and the resumption ID Sigma1
        // presented (the old one), as the CHIP SDK derives them; S2RK alone uses the new ID.
        var i4 = CASEInitiator(credentials: a, peerNodeID: b.nodeID, localSessionID: 13, resumption: si.resumption)
        var r4 = CASEResponder(fabrics: [b], localSessionID: 23, resumptions: [try #require(sr.resumption)])
        let request = try i4.start()
        let sigma1 = try Sigma1(decoding: request.payload)
        let resumed = try #require(Self.session(r4.receive(request.opcode, request.payload)))
        let presented = try #require(si.resumption)
        #expect(resumed.resumption?.resumptionID != presented.resumptionID)
        #expect(resumed.keys == SessionKeys.derive(secret: presented.sharedSecret, salt: sigma1.initiatorRandom + presented.resumptionID,
                                                   info: "SessionResumptionKeys"))
        // An unknown resumption record falls back to a full handshake.
        var i3 = CASEInitiator(credentials: a, peerNodeID: b.nodeID, localSessionID: 12, resumption: si.resumption)
        var r3 = CASEResponder(fabrics: [b], localSessionID: 22, resumptions: [])
        let third = try Self.run(&i3, &r3)
        #expect(third.opcodes == [.sigma1, .sigma2, .sigma3, .statusReport])
        #expect(Self.session(third.initiator)?.keys == Self.session(third.responder)?.keys)
    }

    @Test func wrongFabricOrNodeIsRefused() throws {
        let (a, b) = try Self.fabricPair()
        // Asking for a node ID the responder does not have: no destination matches.
        var initiator = CASEInitiator(credentials: a, peerNodeID: 0x9999, localSessionID: 10)
        var responder = CASEResponder(fabrics: [b], localSessionID: 20)
        let (i, r, opcodes) = try Self.run(&initiator, &responder)
        #expect(Self.session(i) == nil && Self.session(r) == nil)
        #expect(opcodes == [.sigma1, .statusReport])
        // A node of another fabric (other root) cannot complete CASE even when it targets the right node.
        let (stranger, _) = try Self.fabricPair(fabricID: 0xFAB1)
        var sneaky = CASEInitiator(credentials: stranger, peerNodeID: b.nodeID, localSessionID: 10)
        var responder2 = CASEResponder(fabrics: [b], localSessionID: 20)
        let second = try Self.run(&sneaky, &responder2)
        #expect(Self.session(second.initiator) == nil && Self.session(second.responder) == nil)
    }

    @Test func tamperedSigma3IsRefused() throws {
        let (a, b) = try Self.fabricPair()
        var initiator = CASEInitiator(credentials: a, peerNodeID: b.nodeID, localSessionID: 10)
        var responder = CASEResponder(fabrics: [b], localSessionID: 20)
        let sigma1 = try initiator.start()
        guard case .send(let sigma2) = responder.receive(sigma1.opcode, sigma1.payload).first,
            case .send(var sigma3) = initiator.receive(sigma2.opcode, sigma2.payload).first
        else {
            Issue.record("handshake did not reach Sigma3")
            return
        }
        sigma3.payload[sigma3.payload.count - 3] ^= 0x40
        let effects = responder.receive(sigma3.opcode, sigma3.payload)
        #expect(effects.first == .send(SecureChannelMessage(.statusReport, StatusReport.invalidParameter.encoded)))
        #expect(Self.session(effects) == nil)
    }

    @Test func operationalIPKSpecVector() {
        // Core Specification 4.15.2 example (group key derivation).
        #expect(CASE.operationalIPK(epochKey: hex("235bf7e62823d358dca4ba50b1535f4b"), compressedFabricID: 0x87E1_B004_E235_A130)
            == hex("a6f5306baf6d050af23ba4bd6b9dd960"))
    }

    @Test func destinationIDMatchesSpecDerivation() throws {
        // IPK from an epoch key and the compressed fabric ID: both sides derive the same destination.
        let (a, b) = try Self.fabricPair()
        #expect(a.ipk == b.ipk && a.ipk.count == 16)
        let random = [UInt8](repeating: 7, count: 32)
        let d1 = CASE.destinationID(ipk: a.ipk, initiatorRandom: random, rootPublicKey: a.root.publicKey, fabricID: a.fabricID, nodeID: b.nodeID)
        let d2 = CASE.destinationID(ipk: b.ipk, initiatorRandom: random, rootPublicKey: b.root.publicKey, fabricID: b.fabricID, nodeID: b.nodeID)
        #expect(d1 == d2 && d1.count == 32)
    }
}
