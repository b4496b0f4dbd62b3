/// The session a command arrived on, as the commissioning logic needs to know it.
public struct SessionInfo: Hashable, Sendable {
    /// An identifier the owner chooses (for example the local session ID); used to tie the
    /// fail-safe to the session that armed it.
    public var id: UInt64
    public var authMode: AuthMode
    /// The accessing fabric: 0 on a PASE session before AddNOC, the session's fabric on CASE.
    public var fabricIndex: FabricIndex
    /// The peer's operational node ID (CASE), 0 otherwise.
    public var peerNodeID: UInt64
    public var caseAuthenticatedTags: [UInt32]
    /// The session's attestation challenge (16 bytes, from PASE or CASE key derivation).
    public var attestationChallenge: [UInt8]

    public init(id: UInt64, authMode: AuthMode, fabricIndex: FabricIndex = 0, peerNodeID: UInt64 = 0,
                caseAuthenticatedTags: [UInt32] = [], attestationChallenge: [UInt8]) {
        self.id = id
        self.authMode = authMode
        self.fabricIndex = fabricIndex
        self.peerNodeID = peerNodeID
        self.caseAuthenticatedTags = caseAuthenticatedTags
        self.attestationChallenge = attestationChallenge
    }
}

/// The armed fail-safe (Core Specification 11.10.7.2 ArmFailSafe, 11.10.7.2.2 "Behavior on
/// expiry of Fail-Safe timer"): who armed it, until when, and everything added under it so that
/// expiry can take it back.
public struct FailSafeContext: Hashable, Sendable {
    /// The session that armed it.
    public internal(set) var sessionID: UInt64
    /// The fabric it is tied to: the arming session's, then the fabric AddNOC made.
    public internal(set) var fabricIndex: FabricIndex
    public internal(set) var armedAt: ContinuousClock.Instant
    public internal(set) var expiresAt: ContinuousClock.Instant
    /// The RCAC from AddTrustedRootCertificate, until AddNOC uses it.
    public internal(set) var addedRootCertificate: [UInt8]?
    /// The fabric AddNOC added (removed again on expiry).
    public internal(set) var addedFabric: FabricIndex?
    /// The fabric as it was before UpdateNOC (restored on expiry).
    public internal(set) var fabricBeforeUpdate: FabricInfo?
    /// The key a CSRRequest made, and whether it was for UpdateNOC.
    var pendingOperationalKey: [UInt8]?
    var pendingKeyIsForUpdate = false

    /// Whether AddNOC or UpdateNOC already ran under this fail-safe.
    public var nocInvoked: Bool { addedFabric != nil || fabricBeforeUpdate != nil }

    /// What must be undone if the node restarts before CommissioningComplete (persisted).
    public var rollback: FailSafeRollback? {
        nocInvoked ? FailSafeRollback(addedFabric: addedFabric, fabricBeforeUpdate: fabricBeforeUpdate) : nil
    }
}

/// The persisted part of an armed fail-safe: a node that restarts with this set performs the
/// expiry clean-up on boot (11.10.7.2.2).
public struct FailSafeRollback: Hashable, Sendable {
    public var addedFabric: FabricIndex?
    public var fabricBeforeUpdate: FabricInfo?

    public init(addedFabric: FabricIndex?, fabricBeforeUpdate: FabricInfo?) {
        self.addedFabric = addedFabric
        self.fabricBeforeUpdate = fabricBeforeUpdate
    }
}

/// Something the owner must act on after a command or a tick: persist, close sessions,
/// re-advertise.
public enum CommissioningEvent: Hashable, Sendable {
    case fabricAdded(FabricIndex)
    case fabricUpdated(FabricIndex)
    /// Close every session on this fabric and withdraw its operational advertisement.
    case fabricRemoved(FabricIndex)
    /// The fail-safe expired (timer, ArmFailSafe(0), RevokeCommissioning or its session closed):
    /// close the session that armed it.
    case failSafeExpired(sessionID: UInt64)
    case commissioningCompleted(FabricIndex)
    /// Start or stop the commissionable advertisement (and the PASE responder).
    case windowOpened
    case windowClosed
}
