public import Crypto

/// What a node needs to take part in CASE on one fabric (Core Specification 4.14.2): its
/// operational certificates and key, the trusted root, and the operational IPK.
public struct FabricCredentials: Sendable {
    public let fabricIndex: UInt8
    public let root: MatterCertificate
    public let icac: MatterCertificate?
    public let noc: MatterCertificate
    // Kept as raw bytes: swift-crypto's private keys are not Sendable.
    private let operationalKeyBytes: [UInt8]

    /// The NOC's private key.
    func operationalKey() throws(MatterSecurityError) -> P256.Signing.PrivateKey {
        do {
            return try P256.Signing.PrivateKey(rawRepresentation: operationalKeyBytes)
        } catch {
            throw .crypto("the operational key does not load")
        }
    }
    /// The operational identity protection key (16 bytes), derived from the epoch IPK.
    public let ipk: [UInt8]
    public let fabricID: UInt64
    public let nodeID: UInt64
    public let compressedFabricID: UInt64

    /// - Parameter epochIPK: the IPK epoch key the commissioner installed (AddNOC's IPKValue).
    /// - Throws: when the NOC has no node or fabric ID.
    public init(fabricIndex: UInt8, root: MatterCertificate, icac: MatterCertificate?, noc: MatterCertificate,
                operationalKey: P256.Signing.PrivateKey, epochIPK: [UInt8]) throws(MatterSecurityError) {
        guard let nodeID = noc.subject.nodeID, let fabricID = noc.subject.fabricID else {
            throw .certificate("the NOC has no node ID or fabric ID")
        }
        self.fabricIndex = fabricIndex
        self.root = root
        self.icac = icac
        self.noc = noc
        operationalKeyBytes = Array(operationalKey.rawRepresentation)
        self.nodeID = nodeID
        self.fabricID = fabricID
        compressedFabricID = try Fabric.compressedFabricID(rootPublicKey: root.publicKey, fabricID: fabricID)
        ipk = CASE.operationalIPK(epochKey: epochIPK, compressedFabricID: compressedFabricID)
    }
}

enum CASE {
    static let sigma2Nonce = Array("NCASE_Sigma2N".utf8)
    static let sigma3Nonce = Array("NCASE_Sigma3N".utf8)
    static let resume1Nonce = Array("NCASE_SigmaS1".utf8)
    static let resume2Nonce = Array("NCASE_SigmaS2".utf8)

    /// Operational group key: HKDF(epoch key, salt = compressed fabric ID (big-endian), "GroupKey v1.0").
    static func operationalIPK(epochKey: [UInt8], compressedFabricID: UInt64) -> [UInt8] {
        let salt = (0..<8).map { UInt8(truncatingIfNeeded: compressedFabricID >> (56 - 8 * UInt64($0))) }
        return kdf(epochKey, salt: salt, info: "GroupKey v1.0", count: 16)
    }

    /// HMAC-SHA256(IPK, initiatorRandom ‖ root public key ‖ fabric ID (LE) ‖ node ID (LE)).
    static func destinationID(ipk: [UInt8], initiatorRandom: [UInt8], rootPublicKey: [UInt8], fabricID: UInt64, nodeID: UInt64) -> [UInt8] {
        var message = initiatorRandom + rootPublicKey
        for v in [fabricID, nodeID] { for i in 0..<8 { message.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: ipk)))
    }

    static func kdf(_ secret: [UInt8], salt: [UInt8], info: String, count: Int) -> [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: salt, info: Array(info.utf8), outputByteCount: count)
            .withUnsafeBytes { Array($0) }
    }

    static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var h = SHA256()
        for p in parts { h.update(data: p) }
        return Array(h.finalize())
    }

    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        try CASEAEAD.seal(plaintext, key: key, nonce: nonce)
    }

    static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        try CASEAEAD.open(sealed, key: key, nonce: nonce)
    }

    static func ecdh(_ key: P256.KeyAgreement.PrivateKey, _ peer: [UInt8]) throws(MatterSecurityError) -> [UInt8] {
        do {
            let peerKey = try P256.KeyAgreement.PublicKey(x963Representation: peer)
            return try key.sharedSecretFromKeyAgreement(with: peerKey).withUnsafeBytes { Array($0) }
        } catch {
            throw .crypto("CASE: the peer's ephemeral key is not a P-256 point")
        }
    }

    static func sign(_ data: [UInt8], with key: P256.Signing.PrivateKey) throws(MatterSecurityError) -> [UInt8] {
        do {
            return Array(try key.signature(for: data).rawRepresentation)
        } catch {
            throw .crypto("CASE: signing failed")
        }
    }

    /// Validates the peer's chain against `credentials`' root and checks its signature over `tbs`.
    static func verifyPeer(noc nocBytes: [UInt8], icac icacBytes: [UInt8]?, signature: [UInt8], tbs: [UInt8],
                           credentials: FabricCredentials) throws(MatterSecurityError) -> OperationalChain.Identity {
        let noc = try MatterCertificate(tlv: nocBytes)
        let icac = try icacBytes.map { b throws(MatterSecurityError) in try MatterCertificate(tlv: b) }
        let identity = try OperationalChain(noc: noc, icac: icac).validate(root: credentials.root)
        guard identity.fabricID == credentials.fabricID else { throw .certificate("CASE: the peer is on another fabric") }
        guard let key = try? P256.Signing.PublicKey(x963Representation: identity.publicKey),
            let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature), key.isValidSignature(sig, for: tbs)
        else { throw .verificationFailed("CASE: the peer's signature does not verify") }
        return identity
    }
}

/// The responder side of CASE: a node answering Sigma1 on any of its fabrics, resuming a
/// session it knows when asked to.
public struct CASEResponder: HandshakeStateMachine {
    enum State: Sendable {
        case awaitingSigma1
        case awaitingSigma3(Pending)
        case finished
    }

    struct Pending: Sendable {
        let credentials: FabricCredentials
        let sigma1: [UInt8]
        let sigma2: [UInt8]
        let request: Sigma1
        let sharedSecret: [UInt8]
        let ownKey: [UInt8]
        let resumptionID: [UInt8]
    }

    let fabrics: [FabricCredentials]
    let localSessionID: UInt16
    let sessionParameters: SessionParameters?
    let resumptions: [CASEResumptionRecord]
    private(set) var state = State.awaitingSigma1

    /// - Parameter resumptions: sessions this node may resume (from earlier `.established` effects).
    public init(fabrics: [FabricCredentials], localSessionID: UInt16, sessionParameters: SessionParameters? = nil,
                resumptions: [CASEResumptionRecord] = []) {
        self.fabrics = fabrics
        self.localSessionID = localSessionID
        self.sessionParameters = sessionParameters
        self.resumptions = resumptions
    }

    public mutating func abandon() { state = .finished }

    public mutating func step(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) throws(MatterSecurityError) -> [HandshakeEffect] {
        switch (state, opcode) {
        case (_, .statusReport):
            state = .finished
            let report = try StatusReport(decoding: payload)
            return [.failed(.protocolViolation("CASE aborted by the peer: status \(report.generalCode)/\(report.protocolCode)"))]
        case (.awaitingSigma1, .sigma1):
            let sigma1 = try Sigma1(decoding: payload)
            if let resumed = try resume(sigma1) { return resumed }
            guard let credentials = fabrics.first(where: {
                CASE.destinationID(ipk: $0.ipk, initiatorRandom: sigma1.initiatorRandom, rootPublicKey: $0.root.publicKey,
                                   fabricID: $0.fabricID, nodeID: $0.nodeID) == sigma1.destinationID
            }) else {
                state = .finished
                return [.send(SecureChannelMessage(.statusReport, StatusReport(.failure, .noSharedTrustRoots).encoded)),
                        .failed(.certificate("CASE: Sigma1 is for no fabric of this node"))]
            }
            let ephemeral = P256.KeyAgreement.PrivateKey()
            let ownKey = Array(ephemeral.publicKey.x963Representation)
            let shared = try CASE.ecdh(ephemeral, sigma1.initiatorEphemeralKey)
            let nocBytes = try credentials.noc.tlvEncoded()
            let icacBytes = try credentials.icac?.tlvEncoded()
            let tbs = try SigmaData.tbs(noc: nocBytes, icac: icacBytes, ownKey: ownKey, peerKey: sigma1.initiatorEphemeralKey)
            let resumptionID = randomBytes(16)
            let tbe = try SigmaData.tbe(noc: nocBytes, icac: icacBytes, signature: try CASE.sign(tbs, with: try credentials.operationalKey()),
                                        resumptionID: resumptionID)
            let random = randomBytes(32)
            let s2k = CASE.kdf(shared, salt: credentials.ipk + random + ownKey + CASE.hash(payload), info: "Sigma2", count: 16)
            let sigma2 = try Sigma2(
                responderRandom: random, responderSessionID: localSessionID, responderEphemeralKey: ownKey,
                encrypted2: CASE.seal(tbe, key: s2k, nonce: CASE.sigma2Nonce), sessionParameters: sessionParameters
            ).encoded()
            state = .awaitingSigma3(Pending(credentials: credentials, sigma1: payload, sigma2: sigma2, request: sigma1,
                                            sharedSecret: shared, ownKey: ownKey, resumptionID: resumptionID))
            return [.send(SecureChannelMessage(.sigma2, sigma2))]
        case (.awaitingSigma3(let p), .sigma3):
            let sealed = try TLVStructure.octets(payload, tag: 1, what: "Sigma3")
            let s3k = CASE.kdf(p.sharedSecret, salt: p.credentials.ipk + CASE.hash(p.sigma1, p.sigma2), info: "Sigma3", count: 16)
            let tbe = try SigmaData.decodeTBE(try CASE.open(sealed, key: s3k, nonce: CASE.sigma3Nonce), withResumption: false)
            let tbs = try SigmaData.tbs(noc: tbe.noc, icac: tbe.icac, ownKey: p.request.initiatorEphemeralKey, peerKey: p.ownKey)
            let peer = try CASE.verifyPeer(noc: tbe.noc, icac: tbe.icac, signature: tbe.signature, tbs: tbs, credentials: p.credentials)
            let keys = SessionKeys.derive(secret: p.sharedSecret, salt: p.credentials.ipk + CASE.hash(p.sigma1, p.sigma2, payload),
                                          info: "SessionKeys")
            state = .finished
            let record = CASEResumptionRecord(resumptionID: p.resumptionID, sharedSecret: p.sharedSecret, peerNodeID: peer.nodeID,
                                              fabricIndex: p.credentials.fabricIndex)
            return [
                .send(SecureChannelMessage(.statusReport, StatusReport.sessionEstablished.encoded)),
                .established(EstablishedSession(
                    kind: .case, isInitiator: false, localSessionID: localSessionID, peerSessionID: p.request.initiatorSessionID,
                    keys: keys, peerParameters: p.request.sessionParameters, peerNodeID: peer.nodeID, fabricID: peer.fabricID,
                    resumption: record)),
            ]
        default:
            throw .protocolViolation("CASE: unexpected \(opcode)")
        }
    }

    /// Sigma2_Resume when Sigma1 asks to resume a known session with a valid MIC; nil otherwise
    /// (then a full CASE follows, as the specification asks).
    private mutating func resume(_ sigma1: Sigma1) throws(MatterSecurityError) -> [HandshakeEffect]? {
        guard let id = sigma1.resumptionID, let mic = sigma1.initiatorResumeMIC,
            let record = resumptions.first(where: { $0.resumptionID == id }),
            let credentials = fabrics.first(where: { $0.fabricIndex == record.fabricIndex })
        else { return nil }
        let s1rk = CASE.kdf(record.sharedSecret, salt: sigma1.initiatorRandom + id, info: "Sigma1_Resume", count: 16)
        guard Spake2p.constantTimeEqual(try CASE.seal([], key: s1rk, nonce: CASE.resume1Nonce), mic) else { return nil }
        let newID = randomBytes(16)
        let s2rk = CASE.kdf(record.sharedSecret, salt: sigma1.initiatorRandom + newID, info: "Sigma2_Resume", count: 16)
        let message = try Sigma2Resume(
            resumptionID: newID, sigma2ResumeMIC: try CASE.seal([], key: s2rk, nonce: CASE.resume2Nonce),
            responderSessionID: localSessionID
        ).encoded()
        // The session keys' salt takes the resumption ID Sigma1 presented (the CHIP SDK derives
        // them so; only S2RK uses the new ID): with the new one every message fails its MIC.
        let keys = SessionKeys.derive(secret: record.sharedSecret, salt: sigma1.initiatorRandom + id, info: "SessionResumptionKeys")
        state = .finished
        let next = CASEResumptionRecord(resumptionID: newID, sharedSecret: record.sharedSecret, peerNodeID: record.peerNodeID,
                                        fabricIndex: record.fabricIndex)
        return [
            .send(SecureChannelMessage(.sigma2Resume, message)),
            .established(EstablishedSession(
                kind: .case, isInitiator: false, localSessionID: localSessionID, peerSessionID: sigma1.initiatorSessionID,
                keys: keys, peerParameters: sigma1.sessionParameters, peerNodeID: record.peerNodeID,
                fabricID: credentials.fabricID, resumption: next)),
        ]
    }
}

/// The initiator side of CASE (used by Hearth's tests, and by a controller role later).
public struct CASEInitiator: HandshakeStateMachine {
    enum State: Sendable {
        case idle
        /// The ephemeral key as raw bytes (swift-crypto's private keys are not Sendable).
        case awaitingSigma2(sigma1: [UInt8], request: Sigma1, ephemeral: [UInt8])
        case awaitingStatus(EstablishedSession)
        case finished
    }

    let credentials: FabricCredentials
    let peerNodeID: UInt64
    let localSessionID: UInt16
    let sessionParameters: SessionParameters?
    let resumption: CASEResumptionRecord?
    private(set) var state = State.idle

    /// - Parameter resumption: a record from an earlier session with this peer, to try resuming.
    public init(credentials: FabricCredentials, peerNodeID: UInt64, localSessionID: UInt16,
                sessionParameters: SessionParameters? = nil, resumption: CASEResumptionRecord? = nil) {
        self.credentials = credentials
        self.peerNodeID = peerNodeID
        self.localSessionID = localSessionID
        self.sessionParameters = sessionParameters
        self.resumption = resumption
    }

    public mutating func abandon() { state = .finished }

    /// Sigma1, which opens the exchange.
    public mutating func start() throws(MatterSecurityError) -> SecureChannelMessage {
        let ephemeral = P256.KeyAgreement.PrivateKey()
        let random = randomBytes(32)
        var resumeMIC: [UInt8]?
        if let resumption {
            let s1rk = CASE.kdf(resumption.sharedSecret, salt: random + resumption.resumptionID, info: "Sigma1_Resume", count: 16)
            resumeMIC = try CASE.seal([], key: s1rk, nonce: CASE.resume1Nonce)
        }
        let request = Sigma1(
            initiatorRandom: random, initiatorSessionID: localSessionID,
            destinationID: CASE.destinationID(ipk: credentials.ipk, initiatorRandom: random, rootPublicKey: credentials.root.publicKey,
                                              fabricID: credentials.fabricID, nodeID: peerNodeID),
            initiatorEphemeralKey: Array(ephemeral.publicKey.x963Representation), sessionParameters: sessionParameters,
            resumptionID: resumption?.resumptionID, initiatorResumeMIC: resumeMIC)
        let bytes = try request.encoded()
        state = .awaitingSigma2(sigma1: bytes, request: request, ephemeral: Array(ephemeral.rawRepresentation))
        return SecureChannelMessage(.sigma1, bytes)
    }

    public mutating func step(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) throws(MatterSecurityError) -> [HandshakeEffect] {
        switch (state, opcode) {
        case (.awaitingStatus(let session), .statusReport):
            state = .finished
            guard try StatusReport(decoding: payload).isSessionEstablished else {
                return [.failed(.verificationFailed("CASE refused by the peer"))]
            }
            return [.established(session)]
        case (_, .statusReport):
            state = .finished
            let report = try StatusReport(decoding: payload)
            return [.failed(.protocolViolation("CASE aborted by the peer: status \(report.generalCode)/\(report.protocolCode)"))]
        case (.awaitingSigma2(let sigma1, let request, _), .sigma2Resume):
            guard let resumption else { throw .protocolViolation("CASE: Sigma2_Resume without a resumption request") }
            let answer = try Sigma2Resume(decoding: payload)
            let s2rk = CASE.kdf(resumption.sharedSecret, salt: request.initiatorRandom + answer.resumptionID, info: "Sigma2_Resume", count: 16)
            guard Spake2p.constantTimeEqual(try CASE.seal([], key: s2rk, nonce: CASE.resume2Nonce), answer.sigma2ResumeMIC) else {
                throw .verificationFailed("CASE: Sigma2_Resume MIC does not verify")
            }
            _ = sigma1
            state = .finished
            let keys = SessionKeys.derive(secret: resumption.sharedSecret, salt: request.initiatorRandom + resumption.resumptionID,
                                          info: "SessionResumptionKeys")
            return [
                .send(SecureChannelMessage(.statusReport, StatusReport.sessionEstablished.encoded)),
                .established(EstablishedSession(
                    kind: .case, isInitiator: true, localSessionID: localSessionID, peerSessionID: answer.responderSessionID,
                    keys: keys, peerParameters: nil, peerNodeID: peerNodeID, fabricID: credentials.fabricID,
                    resumption: CASEResumptionRecord(resumptionID: answer.resumptionID, sharedSecret: resumption.sharedSecret,
                                                     peerNodeID: peerNodeID, fabricIndex: credentials.fabricIndex))),
            ]
        case (.awaitingSigma2(let sigma1, let request, let ephemeral), .sigma2):
            let sigma2 = try Sigma2(decoding: payload)
            guard let ephemeralKey = try? P256.KeyAgreement.PrivateKey(rawRepresentation: ephemeral) else {
                throw .crypto("CASE: ephemeral key lost")
            }
            let shared = try CASE.ecdh(ephemeralKey, sigma2.responderEphemeralKey)
            let s2k = CASE.kdf(shared, salt: credentials.ipk + sigma2.responderRandom + sigma2.responderEphemeralKey + CASE.hash(sigma1),
                               info: "Sigma2", count: 16)
            let tbe2 = try SigmaData.decodeTBE(try CASE.open(sigma2.encrypted2, key: s2k, nonce: CASE.sigma2Nonce), withResumption: true)
            let tbs2 = try SigmaData.tbs(noc: tbe2.noc, icac: tbe2.icac, ownKey: sigma2.responderEphemeralKey,
                                         peerKey: request.initiatorEphemeralKey)
            let peer = try CASE.verifyPeer(noc: tbe2.noc, icac: tbe2.icac, signature: tbe2.signature, tbs: tbs2, credentials: credentials)
            guard peer.nodeID == peerNodeID else { throw .certificate("CASE: the responder is node \(peer.nodeID), not \(peerNodeID)") }
            let nocBytes = try credentials.noc.tlvEncoded()
            let icacBytes = try credentials.icac?.tlvEncoded()
            let tbs3 = try SigmaData.tbs(noc: nocBytes, icac: icacBytes, ownKey: request.initiatorEphemeralKey,
                                         peerKey: sigma2.responderEphemeralKey)
            let tbe3 = try SigmaData.tbe(noc: nocBytes, icac: icacBytes, signature: try CASE.sign(tbs3, with: try credentials.operationalKey()),
                                         resumptionID: nil)
            let s3k = CASE.kdf(shared, salt: credentials.ipk + CASE.hash(sigma1, payload), info: "Sigma3", count: 16)
            let sigma3 = try TLVStructure.encode(octets: try CASE.seal(tbe3, key: s3k, nonce: CASE.sigma3Nonce), tag: 1)
            let keys = SessionKeys.derive(secret: shared, salt: credentials.ipk + CASE.hash(sigma1, payload, sigma3), info: "SessionKeys")
            state = .awaitingStatus(EstablishedSession(
                kind: .case, isInitiator: true, localSessionID: localSessionID, peerSessionID: sigma2.responderSessionID, keys: keys,
                peerParameters: sigma2.sessionParameters, peerNodeID: peer.nodeID, fabricID: peer.fabricID,
                resumption: CASEResumptionRecord(resumptionID: tbe2.resumptionID ?? [], sharedSecret: shared, peerNodeID: peer.nodeID,
                                                 fabricIndex: credentials.fabricIndex)))
            return [.send(SecureChannelMessage(.sigma3, sigma3))]
        default:
            throw .protocolViolation("CASE: unexpected \(opcode)")
        }
    }
}
