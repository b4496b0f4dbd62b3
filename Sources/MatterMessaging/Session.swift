/// Where a datagram came from or goes to. The UDP owner uses an IP literal and port; an
/// in-memory link can use any name.
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Which session a message belongs to.
public enum SessionKey: Hashable, Sendable, CustomStringConvertible {
    /// The unsecured session with a peer, told apart by the initiator's ephemeral node ID
    /// (4.13.2.1): PASE and CASE run on it.
    case unsecured(peer: PeerAddress, ephemeralNodeID: UInt64)
    /// A secure unicast session, by the session ID this node chose (the one peers send to).
    case secure(localSessionID: UInt16)

    public var description: String {
        switch self {
        case .unsecured(let p, let n): return "unsecured(\(p), 0x\(String(n, radix: 16)))"
        case .secure(let s): return "secure(\(s))"
        }
    }
}

/// The MRP parameters a peer announced (or the defaults, 4.12.8): used to time our
/// retransmissions to it.
public struct MRPParameters: Hashable, Sendable {
    /// SESSION_IDLE_INTERVAL: the peer's retransmission base while it is idle.
    public var idleInterval: Duration
    /// SESSION_ACTIVE_INTERVAL: the base while the peer is active.
    public var activeInterval: Duration
    /// SESSION_ACTIVE_THRESHOLD: how long after its last message the peer counts as active.
    public var activeThreshold: Duration

    public init(idleInterval: Duration = .milliseconds(500), activeInterval: Duration = .milliseconds(300),
                activeThreshold: Duration = .milliseconds(4000)) {
        self.idleInterval = idleInterval
        self.activeInterval = activeInterval
        self.activeThreshold = activeThreshold
    }

    public static let `default` = MRPParameters()
}

/// What a secure unicast session needs, as PASE or CASE hand it over (4.13.2.6 / 4.14.2.6).
///
/// The initiator encrypts with I2RKey and decrypts with R2IKey; the responder the reverse.
public struct SecureSessionParameters: Sendable {
    public enum Role: Sendable { case initiator, responder }

    /// The session ID this node chose (peers put it in messages to us).
    public var localSessionID: UInt16
    /// The session ID the peer chose (we put it in messages to the peer).
    public var peerSessionID: UInt16
    public var encryptKey: [UInt8]
    public var decryptKey: [UInt8]
    /// Our node ID for the nonce: 0 (unspecified) for PASE, the operational node ID for CASE.
    public var localNodeID: UInt64
    /// The peer's node ID for the nonce of messages without a source node ID.
    public var peerNodeID: UInt64
    public var peerAddress: PeerAddress
    public var peerMRP: MRPParameters
    /// Whether messages we send use privacy obfuscation (received ones are handled either way).
    public var privacy: Bool

    public init(role: Role, i2rKey: [UInt8], r2iKey: [UInt8], localSessionID: UInt16, peerSessionID: UInt16,
                localNodeID: UInt64 = 0, peerNodeID: UInt64 = 0, peerAddress: PeerAddress,
                peerMRP: MRPParameters = .default, privacy: Bool = false) {
        self.localSessionID = localSessionID
        self.peerSessionID = peerSessionID
        encryptKey = role == .initiator ? i2rKey : r2iKey
        decryptKey = role == .initiator ? r2iKey : i2rKey
        self.localNodeID = localNodeID
        self.peerNodeID = peerNodeID
        self.peerAddress = peerAddress
        self.peerMRP = peerMRP
        self.privacy = privacy
    }
}

/// The live state of one secure session.
struct SecureSession<Instant: InstantProtocol> {
    var parameters: SecureSessionParameters
    let encrypt: AESCCMKey
    let decrypt: AESCCMKey
    let privacyEncrypt: AESCCMKey
    let privacyDecrypt: AESCCMKey
    var counter: MessageCounter
    var reception = MessageReceptionState(policy: .secureUnicast)
    var lastReceived: Instant?

    init(_ p: SecureSessionParameters, counter: MessageCounter) throws(MessagingError) {
        parameters = p
        encrypt = try AESCCMKey(p.encryptKey)
        decrypt = try AESCCMKey(p.decryptKey)
        privacyEncrypt = try MessageSecurity.privacyKey(for: p.encryptKey)
        privacyDecrypt = try MessageSecurity.privacyKey(for: p.decryptKey)
        self.counter = counter
    }
}

/// The live state of one unsecured session.
struct UnsecuredSession<Instant: InstantProtocol> {
    var reception = MessageReceptionState(policy: .unencrypted)
    var lastReceived: Instant?
    /// Whether this node is the initiator (it chose the ephemeral node ID).
    var weInitiated: Bool
}
