import Crypto
import Foundation
import MatterCommissioning
import MatterSecurity
import MatterTLV
import Testing

@Suite struct CommissioningFlowTests {
    let t0 = ContinuousClock.now

    @Test func attestationResponseVerifiesAgainstTheTestPAA() throws {
        let state = Fixture.state()
        let dac = try state.certificateChain(CertificateChainType.dac.rawValue)
        let pai = try state.certificateChain(CertificateChainType.pai.rawValue)
        let (elements, signature) = try state.attestationResponse(nonce: Fixture.nonce, session: Fixture.pase)
        let result = try DeviceAttestationVerifier.development.verify(
            dac: dac, pai: pai, elements: elements, signature: signature, nonce: Fixture.nonce, attestationChallenge: Fixture.challenge)
        #expect(result.vendorID == 0xFFF1)
        // Another session's challenge does not verify.
        #expect(throws: MatterSecurityError.self) {
            try DeviceAttestationVerifier.development.verify(
                dac: dac, pai: pai, elements: elements, signature: signature, nonce: Fixture.nonce,
                attestationChallenge: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: CommissioningError.self) { try state.certificateChain(3) }
        #expect(throws: CommissioningError.self) { try state.attestationResponse(nonce: [1, 2, 3], session: Fixture.pase) }
    }

    @Test func csrNeedsFailSafe_andIsSignedWithTheDACKey() throws {
        var state = Fixture.state()
        let refused = #expect(throws: CommissioningError.self) { try state.csrResponse(nonce: Fixture.nonce, session: Fixture.pase) }
        #expect(refused?.status == .failsafeRequired)
        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: Fixture.pase, now: t0)
        let csr = try state.csrResponse(nonce: Fixture.nonce, session: Fixture.pase)
        let members = try TLVElement(decoding: csr.elements)
        #expect(try members.member(.context(2)).bytes() == Fixture.nonce)
        _ = try TestAuthority.csrKey(csr.elements)
        let dac = try DeviceAttestationCertificate(derEncoded: Fixture.attestation.dacCertificate)
        #expect(AttestationElements.isValidSignature(csr.signature, elements: csr.elements, attestationChallenge: Fixture.challenge, key: dac.publicKey))
        let forUpdateOverPASE = #expect(throws: CommissioningError.self) {
            try state.csrResponse(nonce: Fixture.nonce, isForUpdateNOC: true, session: Fixture.pase)
        }
        #expect(forUpdateOverPASE?.status == .invalidCommand)
    }

    @Test func fullCommissioning_addsFabricAndAdminACL_thenCommits() throws {
        var state = Fixture.state()
        state.openInitialWindow(now: t0)
        let authority = try TestAuthority()
        let response = try Fixture.commission(&state, authority: authority, nodeID: 0x1001, now: t0)
        #expect(response == NOCResponse(.ok, fabricIndex: 1))
        let fabric = try #require(state.fabrics[1])
        #expect(fabric.fabricID == 0x2026 && fabric.nodeID == 0x1001 && fabric.vendorID == 0xFFF1)
        #expect(fabric.rootPublicKey == authority.root.publicKey)
        let expected = try Fabric.compressedFabricID(rootPublicKey: authority.root.publicKey, fabricID: 0x2026)
        #expect(fabric.compressedFabricID == expected)
        #expect(state.accessControl == [AccessControlEntry(privilege: .administer, authMode: .case, subjects: [Fixture.adminNode], fabricIndex: 1)])
        #expect(state.takeEvents().contains(.fabricAdded(1)))
        // The fabric's credentials load for CASE.
        #expect(try fabric.credentials().nodeID == 0x1001)

        // Over PASE CommissioningComplete is refused; over CASE on the new fabric it commits.
        #expect(state.commissioningComplete(session: Fixture.pase).errorCode == .invalidAuthentication)
        let caseSession = Fixture.caseSession(fabric: 1)
        #expect(state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 2, session: caseSession, now: t0 + .seconds(5)).errorCode == .ok)
        #expect(state.commissioningComplete(session: caseSession).errorCode == .ok)
        #expect(state.failSafe == nil && state.breadcrumb == 0 && state.windowStatus == .windowNotOpen)
        #expect(state.takeEvents() == [.windowClosed, .commissioningCompleted(1)])
        // Committed: expiry no longer applies.
        state.tick(now: t0 + .seconds(3600))
        #expect(state.fabrics[1] != nil)
        #expect(state.commissioningComplete(session: caseSession).errorCode == .noFailSafe)
    }

    @Test func failSafeExpiry_rollsBackRootNOCAndACL() throws {
        var state = Fixture.state()
        try Fixture.commission(&state, authority: try TestAuthority(), now: t0)
        #expect(state.persistent.pendingRollback == FailSafeRollback(addedFabric: 1, fabricBeforeUpdate: nil))
        _ = state.takeEvents()
        state.tick(now: t0 + .seconds(59))
        #expect(state.fabrics[1] != nil)
        state.tick(now: t0 + .seconds(60))
        #expect(state.fabrics.fabrics.isEmpty && state.accessControl.isEmpty && state.failSafe == nil)
        #expect(state.takeEvents() == [.fabricRemoved(1), .failSafeExpired(sessionID: Fixture.pase.id)])
        #expect(state.persistent == PersistentCommissioning())
    }

    @Test func commissionerVanishing_expiresTheFailSafe() throws {
        var state = Fixture.state()
        try Fixture.commission(&state, authority: try TestAuthority(), now: t0)
        state.sessionClosed(id: 99)
        #expect(state.fabrics[1] != nil)
        state.sessionClosed(id: Fixture.pase.id)
        #expect(state.fabrics.fabrics.isEmpty && state.failSafe == nil)
    }

    @Test func armFailSafe_busyCapZeroAndWindow() throws {
        var state = Fixture.state(.init(maxCumulativeFailsafeSeconds: 100))
        #expect(state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 7, session: Fixture.pase, now: t0).errorCode == .ok)
        #expect(state.breadcrumb == 7)
        let other = SessionInfo(id: 5, authMode: .pase, attestationChallenge: Fixture.challenge)
        #expect(state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 8, session: other, now: t0).errorCode == .busyWithOtherAdmin)
        #expect(state.breadcrumb == 7)
        // Extending is capped at MaxCumulativeFailsafeSeconds from the first arming.
        #expect(state.armFailSafe(expiryLengthSeconds: 90, breadcrumb: 9, session: Fixture.pase, now: t0 + .seconds(50)).errorCode == .ok)
        #expect(state.failSafe?.expiresAt == t0 + .seconds(100))
        // 0 expires it at once.
        #expect(state.armFailSafe(expiryLengthSeconds: 0, breadcrumb: 0, session: Fixture.pase, now: t0 + .seconds(51)).errorCode == .ok)
        #expect(state.failSafe == nil && state.breadcrumb == 0)
        // With a window open, CASE may not arm.
        try Fixture.commission(&state, authority: try TestAuthority(), now: t0)
        let caseSession = Fixture.caseSession(fabric: 1)
        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: caseSession, now: t0)
        #expect(state.commissioningComplete(session: caseSession).errorCode == .ok)
        state.openInitialWindow(now: t0)
        #expect(state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: caseSession, now: t0).errorCode == .busyWithOtherAdmin)
    }

    @Test func setRegulatoryConfig_respectsCapability() throws {
        var state = Fixture.state(.init(locationCapability: .indoor))
        #expect(try state.setRegulatoryConfig(1, countryCode: "CH", breadcrumb: 3).errorCode == .valueOutsideRange)
        #expect(try state.setRegulatoryConfig(0, countryCode: "CH", breadcrumb: 3).errorCode == .ok)
        #expect(state.countryCode == "CH" && state.breadcrumb == 3)
        #expect(throws: CommissioningError.self) { try state.setRegulatoryConfig(0, countryCode: "CHE", breadcrumb: 0) }
        #expect(throws: CommissioningError.self) { try state.setRegulatoryConfig(7, countryCode: "CH", breadcrumb: 0) }
    }

    @Test func addNOC_refusals() throws {
        let authority = try TestAuthority()
        var state = Fixture.state()
        let noFailSafe = #expect(throws: CommissioningError.self) {
            try state.addNOC(noc: [], icac: nil, ipk: Fixture.ipk, caseAdminSubject: 1, adminVendorID: 0xFFF1, session: Fixture.pase)
        }
        #expect(noFailSafe?.status == .failsafeRequired)
        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: Fixture.pase, now: t0)
        let csr = try state.csrResponse(nonce: Fixture.nonce, session: Fixture.pase)
        let key = try TestAuthority.csrKey(csr.elements)
        let good = try authority.noc(for: key, nodeID: 0x1001)
        func add(_ noc: [UInt8], icac: [UInt8]? = nil, subject: UInt64 = Fixture.adminNode) throws -> NOCResponse {
            try state.addNOC(noc: noc, icac: icac ?? authority.icacTLV, ipk: Fixture.ipk, caseAdminSubject: subject, adminVendorID: 0xFFF1,
                             session: Fixture.pase)
        }
        #expect(try add(good).statusCode == .invalidNOC)  // no root yet
        let badRoot = #expect(throws: CommissioningError.self) { try state.addTrustedRootCertificate(try authority.icacTLV) }
        #expect(badRoot?.status == .invalidCommand)
        try state.addTrustedRootCertificate(try authority.rootTLV)
        let twice = #expect(throws: CommissioningError.self) { try state.addTrustedRootCertificate(try authority.rootTLV) }
        #expect(twice?.status == .constraintError)
        #expect(try add(try authority.noc(for: P256.Signing.PrivateKey().publicKey, nodeID: 0x1001)).statusCode == .invalidPublicKey)
        #expect(try add(try authority.noc(for: key, nodeID: 0)).statusCode == .invalidNodeOpID)
        #expect(try add(try TestAuthority().noc(for: key, nodeID: 0x1001)).statusCode == .invalidNOC)  // another authority
        #expect(try add(try authority.noc(for: key, nodeID: 0x1001, fabricID: 0x9999)).statusCode == .invalidNOC)  // fabric IDs disagree
        #expect(try add(good, subject: 0).statusCode == .invalidAdminSubject)
        #expect(state.fabrics.fabrics.isEmpty && state.accessControl.isEmpty)
        #expect(try add(good, subject: 0xFFFF_FFFD_0001_0001).statusCode == .ok)  // a CAT admin subject
        let again = #expect(throws: CommissioningError.self) { try add(good) }
        #expect(again?.status == .constraintError)
    }

    @Test func addNOC_fabricConflictAndTableFull() throws {
        let authority = try TestAuthority()
        var state = Fixture.state(.init(supportedFabrics: 5))
        try Fixture.commission(&state, authority: authority, now: t0)
        _ = state.commissioningComplete(session: Fixture.caseSession(fabric: 1))
        let caseSession = Fixture.caseSession(id: 7, fabric: 1)
        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: caseSession, now: t0)
        #expect(state.commissioningComplete(session: caseSession).errorCode == .ok)
        // The same root and fabric ID again: FabricConflict.
        let conflict = try Fixture.commission(&state, authority: authority, nodeID: 0x2002, session: caseSession, now: t0)
        #expect(conflict.statusCode == .fabricConflict)
        _ = state.armFailSafe(expiryLengthSeconds: 0, breadcrumb: 0, session: caseSession, now: t0)
        for n in 2...5 {
            let s = SessionInfo(id: UInt64(100 + n), authMode: .pase, attestationChallenge: Fixture.challenge)
            let added = try Fixture.commission(&state, authority: try TestAuthority(), session: s, now: t0)
            #expect(added.fabricIndex == FabricIndex(n))
            #expect(state.commissioningComplete(session: Fixture.caseSession(id: UInt64(100 + n), fabric: FabricIndex(n))).errorCode == .ok)
        }
        let s = SessionInfo(id: 200, authMode: .pase, attestationChallenge: Fixture.challenge)
        let full = try Fixture.commission(&state, authority: try TestAuthority(), session: s, now: t0)
        #expect(full.statusCode == .tableFull)
    }

    @Test func updateNOC_isRevertedByExpiry_andLabelAndRemove() throws {
        let authority = try TestAuthority()
        var state = Fixture.state()
        try Fixture.commission(&state, authority: authority, now: t0)
        let caseSession = Fixture.caseSession(fabric: 1)
        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: caseSession, now: t0)
        _ = state.commissioningComplete(session: caseSession)
        let before = try #require(state.fabrics[1])

        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: caseSession, now: t0)
        #expect(try state.updateNOC(noc: before.noc, icac: before.icac, session: caseSession).statusCode == .missingCsr)
        let csr = try state.csrResponse(nonce: Fixture.nonce, isForUpdateNOC: true, session: caseSession)
        let noc = try authority.noc(for: try TestAuthority.csrKey(csr.elements), nodeID: 0x1002)
        #expect(try state.updateNOC(noc: noc, icac: try authority.icacTLV, session: caseSession) == NOCResponse(.ok, fabricIndex: 1))
        #expect(state.fabrics[1]?.nodeID == 0x1002)
        state.tick(now: t0 + .seconds(61))
        #expect(state.fabrics[1] == before)

        #expect(try state.updateFabricLabel("Home", session: caseSession).statusCode == .ok)
        #expect(state.fabrics[1]?.label == "Home")
        #expect(throws: CommissioningError.self) { try state.updateFabricLabel(String(repeating: "x", count: 33), session: caseSession) }
        try Fixture.commission(&state, authority: try TestAuthority(), nodeID: 0x3003,
                               session: SessionInfo(id: 9, authMode: .pase, attestationChallenge: Fixture.challenge), now: t0)
        #expect(try state.updateFabricLabel("Home", session: Fixture.caseSession(fabric: 2)).statusCode == .labelConflict)
        #expect(state.removeFabric(7).statusCode == .invalidFabricIndex)
        _ = state.takeEvents()
        #expect(state.removeFabric(1) == NOCResponse(.ok, fabricIndex: 1))
        #expect(state.takeEvents() == [.fabricRemoved(1)])
        #expect(state.accessControl.allSatisfy { $0.fabricIndex == 2 })
    }

    @Test func administratorCommissioning_windowLifecycle() throws {
        var state = Fixture.state()
        try Fixture.commission(&state, authority: try TestAuthority(), now: t0)
        let admin = Fixture.caseSession(fabric: 1)
        let salt = [UInt8](repeating: 7, count: 16)
        let verifier = try Spake2pVerifier(passcode: SetupPasscode(20202021), salt: salt, iterations: 1000).serialized
        func open(timeout: UInt16 = 300, verifier v: [UInt8]? = nil, discriminator: UInt16 = 3840, iterations: UInt32 = 1000, salt s: [UInt8]? = nil)
            throws
        {
            try state.openCommissioningWindow(timeoutSeconds: timeout, verifier: v ?? verifier, discriminator: discriminator, iterations: iterations,
                                              salt: s ?? salt, session: admin, now: t0)
        }
        // A fail-safe is still armed (commissioning not complete): Busy.
        #expect(caught { try open() }?.clusterStatus == AdministratorCommissioningStatus.busy.rawValue)
        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 0, session: admin, now: t0)
        _ = state.commissioningComplete(session: admin)
        #expect(caught { try open(timeout: 179) }?.status == .invalidCommand)
        #expect(caught { try open(timeout: 901) }?.status == .invalidCommand)
        #expect(caught { try open(iterations: 999) }?.clusterStatus == 3)
        #expect(caught { try open(salt: [1, 2]) }?.clusterStatus == 3)
        #expect(caught { try open(verifier: [1, 2, 3]) }?.clusterStatus == 3)
        #expect(caught { try open(discriminator: 4096) }?.status == .invalidCommand)
        #expect(caught { try state.openCommissioningWindow(
            timeoutSeconds: 300, verifier: verifier, discriminator: 1, iterations: 1000, salt: salt, session: Fixture.pase, now: t0) }?.status
            == .unsupportedAccess)
        _ = state.takeEvents()
        try open()
        #expect(state.windowStatus == .enhancedWindowOpen && state.window?.adminFabricIndex == 1 && state.window?.adminVendorID == 0xFFF1)
        #expect(state.window?.commissioningMode == 2)
        #expect(caught { try open() }?.clusterStatus == AdministratorCommissioningStatus.busy.rawValue)
        #expect(state.takeEvents() == [.windowOpened])
        state.tick(now: t0 + .seconds(300))
        #expect(state.windowStatus == .windowNotOpen && state.takeEvents() == [.windowClosed])
        #expect(caught { try state.revokeCommissioning() }?.clusterStatus == 4)
        try open()
        // A second commissioner arms over PASE in the window; Revoke expires it and closes the window.
        let second = SessionInfo(id: 50, authMode: .pase, attestationChallenge: Fixture.challenge)
        try Fixture.commission(&state, authority: try TestAuthority(), nodeID: 0x4004, session: second, now: t0)
        #expect(state.fabrics[2] != nil)
        try state.revokeCommissioning()
        #expect(state.fabrics[2] == nil && state.failSafe == nil && state.windowStatus == .windowNotOpen)
    }
}
