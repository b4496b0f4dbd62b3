import Crypto
import MatterCommissioning
import MatterSecurity
import MatterTLV

/// A commissioner's certificate authority for tests: a fresh RCAC → ICAC that issues NOCs for
/// the public key in a node's CSR, as a real commissioner does (the chain is validated by
/// MatterSecurity's `OperationalChain` inside AddNOC, so a broken issuer here fails the tests).
struct TestAuthority {
    let fabricID: UInt64
    let rootKey = P256.Signing.PrivateKey()
    let icacKey = P256.Signing.PrivateKey()
    let root: MatterCertificate
    let icac: MatterCertificate
    let rootName: MatterDistinguishedName
    let icacName: MatterDistinguishedName

    init(fabricID: UInt64 = 0x2026) throws {
        self.fabricID = fabricID
        rootName = MatterDistinguishedName([.matterRCACID(1), .matterFabricID(fabricID)])
        icacName = MatterDistinguishedName([.matterICACID(2), .matterFabricID(fabricID)])
        let rootSKID = MatterCertificate.keyIdentifier(Array(rootKey.publicKey.x963Representation))
        let icacSKID = MatterCertificate.keyIdentifier(Array(icacKey.publicKey.x963Representation))
        root = try MatterCertificate.issue(
            serialNumber: [1], issuer: rootName, subject: rootName, subjectKey: rootKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: true, pathLength: nil), .keyUsage([.keyCertSign, .crlSign]),
                         .subjectKeyIdentifier(rootSKID), .authorityKeyIdentifier(rootSKID)], issuerKey: rootKey)
        icac = try MatterCertificate.issue(
            serialNumber: [2], issuer: rootName, subject: icacName, subjectKey: icacKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: true, pathLength: 0), .keyUsage([.keyCertSign, .crlSign]),
                         .subjectKeyIdentifier(icacSKID), .authorityKeyIdentifier(rootSKID)], issuerKey: rootKey)
    }

    var rootTLV: [UInt8] { get throws { try root.tlvEncoded() } }
    var icacTLV: [UInt8] { get throws { try icac.tlvEncoded() } }

    /// A NOC for `key` as node `nodeID` (fabric ID `fabricID` unless overridden).
    func noc(for key: P256.Signing.PublicKey, nodeID: UInt64, fabricID: UInt64? = nil) throws -> [UInt8] {
        let icacSKID = MatterCertificate.keyIdentifier(Array(icacKey.publicKey.x963Representation))
        return try MatterCertificate.issue(
            serialNumber: [3], issuer: icacName,
            subject: MatterDistinguishedName([.matterNodeID(nodeID), .matterFabricID(fabricID ?? self.fabricID)]),
            subjectKey: key, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]),
                         .extendedKeyUsage([.clientAuth, .serverAuth]),
                         .subjectKeyIdentifier(MatterCertificate.keyIdentifier(Array(key.x963Representation))),
                         .authorityKeyIdentifier(icacSKID)], issuerKey: icacKey
        ).tlvEncoded()
    }

    /// The public key of the CSR inside NOCSR elements, after checking the CSR's signature.
    static func csrKey(_ nocsrElements: [UInt8]) throws -> P256.Signing.PublicKey {
        let s = try TLVElement(decoding: nocsrElements)
        return try Fabric.publicKey(ofCSR: try s.member(.context(1)).bytes())
    }
}

/// Fixed test inputs.
enum Fixture {
    static let challenge = [UInt8](repeating: 0xA5, count: 16)
    static let nonce = (0..<32).map { UInt8($0) }
    static let ipk = [UInt8](repeating: 0x11, count: 16)
    static let adminNode: UInt64 = 112_233

    static let pase = SessionInfo(id: 1, authMode: .pase, attestationChallenge: challenge)
    static func caseSession(id: UInt64 = 2, fabric: FabricIndex, peer: UInt64 = adminNode) -> SessionInfo {
        SessionInfo(id: id, authMode: .case, fabricIndex: fabric, peerNodeID: peer, attestationChallenge: challenge)
    }

    static let attestation: DeviceAttestationCredentials = {
        guard let c = try? DevelopmentAttestation.installationCredentials() else { preconditionFailure("test attestation material") }
        return c
    }()

    static func state(_ configuration: CommissioningState.Configuration = .init()) -> CommissioningState {
        CommissioningState(configuration: configuration, attestation: attestation)
    }

    /// Runs ArmFailSafe → CSRRequest → AddTrustedRootCertificate → AddNOC over PASE, as a
    /// commissioner does; returns the AddNOC response.
    @discardableResult
    static func commission(_ state: inout CommissioningState, authority: TestAuthority, nodeID: UInt64 = 0x1001,
                           session: SessionInfo = pase, now: ContinuousClock.Instant) throws -> NOCResponse {
        _ = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 1, session: session, now: now)
        let csr = try state.csrResponse(nonce: nonce, session: session)
        try state.addTrustedRootCertificate(try authority.rootTLV)
        let noc = try authority.noc(for: try TestAuthority.csrKey(csr.elements), nodeID: nodeID)
        return try state.addNOC(noc: noc, icac: try authority.icacTLV, ipk: ipk, caseAdminSubject: adminNode, adminVendorID: 0xFFF1, session: session)
    }
}

/// The CommissioningError `body` throws, nil if it throws nothing (or something else).
func caught(_ body: () throws -> Void) -> CommissioningError? {
    do {
        try body()
        return nil
    } catch let error as CommissioningError {
        return error
    } catch {
        return nil
    }
}
