import Testing

@testable import MatterSecurity

/// Test vector 1 of draft-bar-cfrg-spake2plus-01 (P-256, SHA-256, HKDF, HMAC), which Matter's
/// SPAKE2+ follows.
private enum DraftVector {
    static let context = Array("SPAKE2+-P256-SHA256-HKDF draft-01".utf8)
    static let idProver = Array("client".utf8)
    static let idVerifier = Array("server".utf8)
    static let w0 = hex("e6887cf9bdfb7579c69bf47928a84514b5e355ac034863f7ffaf4390e67d798c")
    static let w1 = hex("24b5ae4abda868ec9336ffc3b78ee31c5755bef1759227ef5372ca139b94e512")
    static let l = hex("0495645cfb74df6e58f9748bb83a86620bab7c82e107f57d6870da8cbcb2ff9f7063a14b6402c62f99afcb9706a4d1a143273259fe76f1c605a3639745a92154b9")
    static let x = hex("8b0f3f383905cf3a3bb955ef8fb62e24849dd349a05ca79aafb18041d30cbdb6")
    static let pA = hex("04af09987a593d3bac8694b123839422c3cc87e37d6b41c1d630f000dd64980e537ae704bcede04ea3bec9b7475b32fa2ca3b684be14d11645e38ea6609eb39e7e")
    static let y = hex("2e0895b0e763d6d5a9564433e64ac3cac74ff897f6c3445247ba1bab40082a91")
    static let pB = hex("04417592620aebf9fd203616bbb9f121b730c258b286f890c5f19fea833a9c900cbe9057bc549a3e19975be9927f0e7614f08d1f0a108eede5fd7eb5624584a4f4")
    static let ka = hex("f9cab9adcc0ed8e5a4db11a8505914b2")
    static let ke = hex("801db297654816eb4f02868129b9dc89")
    static let kcA = hex("0d248d7d19234f1486b2efba5179c52d")
    static let kcB = hex("556291df26d705a2caedd6474dd0079b")
    static let macKcA = hex("d4376f2da9c72226dd151b77c2919071155fc22a2068d90b5faa6c78c11e77dd")
    static let macKcB = hex("0660a680663e8c5695956fb22dff298b1d07a526cf3cc591adfecd1f6ef6e02e")
}

@Suite struct Spake2pTests {
    @Test func draftVectorVerifierSide() throws {
        let verifier = try Spake2pVerifier(serialized: DraftVector.w0 + DraftVector.l)
        var session = try Spake2pVerifierSession(
            context: DraftVector.context, verifier: verifier, idProver: DraftVector.idProver,
            idVerifier: DraftVector.idVerifier, randomScalar: DraftVector.y)
        let (pB, cB) = try session.respond(to: DraftVector.pA)
        #expect(pB == DraftVector.pB)
        #expect(cB == DraftVector.macKcB)
        #expect(session.keys?.ka == DraftVector.ka)
        #expect(session.keys?.kcA == DraftVector.kcA)
        #expect(session.keys?.kcB == DraftVector.kcB)
        #expect(try session.confirm(DraftVector.macKcA) == DraftVector.ke)
    }

    @Test func draftVectorProverSide() throws {
        #expect(try P256Arithmetic.multiply(generatorBy: DraftVector.w1) == DraftVector.l)
        let prover = try Spake2pProverSession(
            context: DraftVector.context, w0: DraftVector.w0, w1: DraftVector.w1, idProver: DraftVector.idProver,
            idVerifier: DraftVector.idVerifier, randomScalar: DraftVector.x)
        #expect(prover.pA == DraftVector.pA)
        let (cA, keys) = try prover.finish(pB: DraftVector.pB, cB: DraftVector.macKcB)
        #expect(cA == DraftVector.macKcA)
        #expect(keys.ke == DraftVector.ke)
    }

    /// Matter's published test verifier: passcode 20202021, salt "SPAKE2P Key Salt", 1000 iterations.
    @Test func matterTestVerifierFromPasscode() throws {
        let salt = Array("SPAKE2P Key Salt".utf8)
        let (w0, w1) = try Spake2p.deriveSecrets(passcode: try SetupPasscode(20_202_021), salt: salt, iterations: 1000)
        #expect(w0 == hex("B96170AAE803346884724FE9A3B287C30330C2A660375D17BB205A8CF1AECB35"))
        #expect(w1 == hex("823D264225E36F4923B43AD64F8C862A30F4A129BBF9EE8074A32D6D67586A90"))
        let verifier = try Spake2pVerifier(passcode: try SetupPasscode(20_202_021), salt: salt, iterations: 1000)
        #expect(base64(verifier.serialized)
            == "uWFwqugDNGiEck/po7KHwwMwwqZgN10XuyBajPGuyzUEV/iree4lOrao5GuwnlQ65CJzbeUB49s31EH+NEkg0JVI5MGCQGMMT/SRPFNRODm3wH/MBiehuFc6FJ/NH6Rmzw==")
    }

    @Test func wrongPasscodeFailsConfirmationOnBothSides() throws {
        let salt = [UInt8](repeating: 7, count: 16)
        let verifier = try Spake2pVerifier(passcode: try SetupPasscode(20_202_021), salt: salt, iterations: 1000)
        let (w0, w1) = try Spake2p.deriveSecrets(passcode: try SetupPasscode(20_202_022), salt: salt, iterations: 1000)
        let prover = try Spake2pProverSession(context: [1, 2, 3], w0: w0, w1: w1)
        var device = try Spake2pVerifierSession(context: [1, 2, 3], verifier: verifier)
        let (pB, cB) = try device.respond(to: prover.pA)
        #expect(throws: MatterSecurityError.self) { try prover.finish(pB: pB, cB: cB) }
        #expect(throws: MatterSecurityError.self) { try device.confirm([UInt8](repeating: 0, count: 32)) }
    }

    @Test func rightPasscodeAgreesOnKe() throws {
        let salt = [UInt8](repeating: 9, count: 32)
        let passcode = try SetupPasscode(34_567_890)
        let verifier = try Spake2pVerifier(passcode: passcode, salt: salt, iterations: 2000)
        let (w0, w1) = try Spake2p.deriveSecrets(passcode: passcode, salt: salt, iterations: 2000)
        let prover = try Spake2pProverSession(context: [9], w0: w0, w1: w1)
        var device = try Spake2pVerifierSession(context: [9], verifier: verifier)
        let (pB, cB) = try device.respond(to: prover.pA)
        let (cA, keys) = try prover.finish(pB: pB, cB: cB)
        #expect(try device.confirm(cA) == keys.ke)
        // A different context (transcript) breaks the agreement.
        var other = try Spake2pVerifierSession(context: [8], verifier: verifier)
        let (pB2, cB2) = try other.respond(to: prover.pA)
        #expect(throws: MatterSecurityError.self) { try prover.finish(pB: pB2, cB: cB2) }
    }

    @Test func refusesInvalidPointsAndParameters() throws {
        let verifier = try Spake2pVerifier(serialized: DraftVector.w0 + DraftVector.l)
        var session = try Spake2pVerifierSession(context: [], verifier: verifier)
        var offCurve = DraftVector.pA
        offCurve[64] ^= 1
        #expect(throws: MatterSecurityError.self) { try session.respond(to: offCurve) }
        #expect(throws: MatterSecurityError.self) { try session.respond(to: [4]) }
        #expect(throws: MatterSecurityError.self) { try Spake2pVerifier(serialized: DraftVector.w0) }
        #expect(throws: MatterSecurityError.self) { try session.confirm(DraftVector.macKcA) }  // before respond
        let p = try SetupPasscode(20_202_021)
        #expect(throws: MatterSecurityError.self) { try Spake2p.deriveSecrets(passcode: p, salt: [UInt8](repeating: 0, count: 16), iterations: 999) }
        #expect(throws: MatterSecurityError.self) { try Spake2p.deriveSecrets(passcode: p, salt: [UInt8](repeating: 0, count: 15), iterations: 1000) }
    }
}

func base64(_ bytes: [UInt8]) -> String {
    let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    var out = ""
    var i = 0
    while i < bytes.count {
        let b0 = Int(bytes[i]), b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
        out.append(table[b0 >> 2])
        out.append(table[(b0 & 3) << 4 | b1 >> 4])
        out.append(i + 1 < bytes.count ? table[(b1 & 15) << 2 | b2 >> 6] : "=")
        out.append(i + 2 < bytes.count ? table[b2 & 63] : "=")
        i += 3
    }
    return out
}
