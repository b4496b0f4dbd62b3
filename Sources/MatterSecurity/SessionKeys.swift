import Crypto

/// The keys of a secure session (Core Specification 4.14.2.6 / 4.14.3.x): I2R encrypts what the
/// initiator sends, R2I what the responder sends; the attestation challenge is used by device
/// attestation and CSR requests over this session.
public struct SessionKeys: Sendable, Hashable {
    public let i2r: [UInt8]
    public let r2i: [UInt8]
    public let attestationChallenge: [UInt8]

    public init(i2r: [UInt8], r2i: [UInt8], attestationChallenge: [UInt8]) {
        self.i2r = i2r
        self.r2i = r2i
        self.attestationChallenge = attestationChallenge
    }

    /// I2RKey ‖ R2IKey ‖ AttestationChallenge = HKDF-SHA256(secret, salt, info, 48).
    static func derive(secret: [UInt8], salt: [UInt8], info: String) -> SessionKeys {
        let out = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: salt, info: Array(info.utf8), outputByteCount: 48
        ).withUnsafeBytes { Array($0) }
        return SessionKeys(i2r: Array(out[0..<16]), r2i: Array(out[16..<32]), attestationChallenge: Array(out[32..<48]))
    }
}

/// A session a handshake established, ready for the message layer.
public struct EstablishedSession: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case pase, `case` }

    public let kind: Kind
    /// Whether this side initiated the handshake (it then encrypts with I2R).
    public let isInitiator: Bool
    /// The session ID this side chose: the peer puts it in messages it sends here.
    public let localSessionID: UInt16
    /// The session ID the peer chose: put it in messages sent there.
    public let peerSessionID: UInt16
    public let keys: SessionKeys
    public let peerParameters: SessionParameters?
    /// CASE only: the peer's operational node ID and fabric.
    public let peerNodeID: UInt64?
    public let fabricID: UInt64?
    /// CASE only: what a later Sigma1 may use to resume this session.
    public let resumption: CASEResumptionRecord?

    init(kind: Kind, isInitiator: Bool, localSessionID: UInt16, peerSessionID: UInt16, keys: SessionKeys,
         peerParameters: SessionParameters?, peerNodeID: UInt64? = nil, fabricID: UInt64? = nil,
         resumption: CASEResumptionRecord? = nil) {
        self.kind = kind
        self.isInitiator = isInitiator
        self.localSessionID = localSessionID
        self.peerSessionID = peerSessionID
        self.keys = keys
        self.peerParameters = peerParameters
        self.peerNodeID = peerNodeID
        self.fabricID = fabricID
        self.resumption = resumption
    }

    /// The key this side encrypts with.
    public var encryptKey: [UInt8] { isInitiator ? keys.i2r : keys.r2i }
    /// The key this side decrypts with.
    public var decryptKey: [UInt8] { isInitiator ? keys.r2i : keys.i2r }
}

/// What a completed CASE leaves for resumption (4.14.2.2): the resumption ID, the shared
/// secret and the peer it was made with.
public struct CASEResumptionRecord: Sendable, Hashable {
    public let resumptionID: [UInt8]
    public let sharedSecret: [UInt8]
    public let peerNodeID: UInt64
    public let fabricIndex: UInt8

    public init(resumptionID: [UInt8], sharedSecret: [UInt8], peerNodeID: UInt64, fabricIndex: UInt8) {
        self.resumptionID = resumptionID
        self.sharedSecret = sharedSecret
        self.peerNodeID = peerNodeID
        self.fabricIndex = fabricIndex
    }
}

/// What a handshake state machine asks its owner to do.
public enum HandshakeEffect: Sendable, Hashable {
    /// Send this message on the handshake's exchange.
    case send(SecureChannelMessage)
    /// The session is ready.
    case established(EstablishedSession)
    /// The handshake failed; a status report (if any) was asked for before this.
    case failed(MatterSecurityError)
}

/// A PASE or CASE side: a pure state machine fed one Secure Channel message at a time.
public protocol HandshakeStateMachine: Sendable {
    /// Handles one incoming Secure Channel message and says what to do.
    mutating func receive(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) -> [HandshakeEffect]
    /// One step; a thrown error ends the handshake with an invalid-parameter status report.
    mutating func step(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) throws(MatterSecurityError) -> [HandshakeEffect]
    /// Moves to the final state after a refusal.
    mutating func abandon()
}

extension HandshakeStateMachine {
    public mutating func receive(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) -> [HandshakeEffect] {
        do {
            return try step(opcode, payload)
        } catch {
            abandon()
            return [.send(SecureChannelMessage(.statusReport, StatusReport.invalidParameter.encoded)), .failed(error)]
        }
    }
}

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}
