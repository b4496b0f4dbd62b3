public import MatterSecurity

/// RegulatoryLocationTypeEnum (Core Specification 11.10.5.1).
public enum RegulatoryLocation: UInt8, Hashable, Sendable {
    case indoor = 0
    case outdoor = 1
    case indoorOutdoor = 2
}

/// CommissioningErrorEnum (11.10.5.2): the ErrorCode of General Commissioning's responses.
public enum CommissioningErrorCode: UInt8, Hashable, Sendable {
    case ok = 0
    case valueOutsideRange = 1
    case invalidAuthentication = 2
    case noFailSafe = 3
    case busyWithOtherAdmin = 4
}

/// ArmFailSafeResponse, SetRegulatoryConfigResponse and CommissioningCompleteResponse (11.10.7).
public struct CommissioningResponse: Hashable, Sendable {
    public var errorCode: CommissioningErrorCode
    public var debugText: String

    public init(_ errorCode: CommissioningErrorCode, _ debugText: String = "") {
        self.errorCode = errorCode
        self.debugText = debugText
    }
}

/// A commissionee's state: fabrics, ACL, the fail-safe and the commissioning window, and the
/// logic of the General Commissioning (11.10), Operational Credentials (11.18) and
/// Administrator Commissioning (11.19) commands. A pure value: every command takes `now` and
/// records what the owner must do as ``CommissioningEvent``s (``takeEvents()``); the owner
/// (``CommissioningNode``) persists ``persistent`` after each command.
///
/// ```swift
/// var state = CommissioningState(configuration: .init(), attestation: credentials)
/// let r = state.armFailSafe(expiryLengthSeconds: 60, breadcrumb: 1, session: pase, now: clock.now)
/// ```
public struct CommissioningState: Sendable {
    public struct Configuration: Hashable, Sendable {
        public var vendorID: UInt16
        public var productID: UInt16
        /// LocationCapability (11.10.6.4).
        public var locationCapability: RegulatoryLocation
        /// BasicCommissioningInfo (11.10.6.3).
        public var failSafeExpiryLengthSeconds: UInt16
        public var maxCumulativeFailsafeSeconds: UInt16
        /// SupportedFabrics (11.18.6.3).
        public var supportedFabrics: Int

        public init(vendorID: UInt16 = DevelopmentAttestation.vendorID, productID: UInt16 = DevelopmentAttestation.productID,
                    locationCapability: RegulatoryLocation = .indoorOutdoor, failSafeExpiryLengthSeconds: UInt16 = 60,
                    maxCumulativeFailsafeSeconds: UInt16 = 900, supportedFabrics: Int = 16) {
            self.vendorID = vendorID
            self.productID = productID
            self.locationCapability = locationCapability
            self.failSafeExpiryLengthSeconds = failSafeExpiryLengthSeconds
            self.maxCumulativeFailsafeSeconds = maxCumulativeFailsafeSeconds
            self.supportedFabrics = supportedFabrics
        }
    }

    public let configuration: Configuration
    let attestation: DeviceAttestationCredentials
    public internal(set) var fabrics: FabricTable
    /// The Access Control cluster's ACL attribute, all fabrics.
    public internal(set) var accessControl: [AccessControlEntry]
    public internal(set) var failSafe: FailSafeContext?
    public internal(set) var window: CommissioningWindow?
    /// Breadcrumb (11.10.6.1).
    public internal(set) var breadcrumb: UInt64 = 0
    /// RegulatoryConfig and the country code (11.10.6.2).
    public internal(set) var regulatoryConfig: RegulatoryLocation
    public internal(set) var countryCode = "XX"
    var events: [CommissioningEvent] = []

    /// - Parameter persisted: what the store loaded; a pending fail-safe rollback in it is
    ///   carried out now, as on a reboot with an armed fail-safe (11.10.7.2.2).
    public init(configuration: Configuration = Configuration(), attestation: DeviceAttestationCredentials,
                persisted: PersistentCommissioning = PersistentCommissioning()) {
        self.configuration = configuration
        self.attestation = attestation
        fabrics = FabricTable(capacity: configuration.supportedFabrics, fabrics: persisted.fabrics)
        accessControl = persisted.accessControl
        regulatoryConfig = configuration.locationCapability
        if let rollback = persisted.pendingRollback { undo(rollback) }
        events = []
    }

    /// What the store keeps: fabrics and ACL as they are now (including what an armed
    /// fail-safe added) and what to undo should the node restart before CommissioningComplete.
    public var persistent: PersistentCommissioning {
        PersistentCommissioning(fabrics: fabrics.fabrics, accessControl: accessControl, pendingRollback: failSafe?.rollback)
    }

    /// The events since the last call.
    public mutating func takeEvents() -> [CommissioningEvent] {
        defer { events = [] }
        return events
    }

    /// Whether `subject` may exercise `privilege` on `path` under the current ACL.
    public func isGranted(_ privilege: Privilege, to subject: SubjectDescriptor, on path: RequestPath) -> Bool {
        AccessControl.isGranted(privilege, to: subject, on: path, entries: accessControl)
    }

    // MARK: - General Commissioning (11.10.7)

    /// ArmFailSafe: arms or extends the fail-safe (capped at MaxCumulativeFailsafeSeconds from
    /// the first arming); 0 seconds expires it at once. BusyWithOtherAdmin when another session
    /// or fabric holds it, or when a commissioning window is open and this is a CASE session.
    public mutating func armFailSafe(expiryLengthSeconds: UInt16, breadcrumb: UInt64, session: SessionInfo, now: ContinuousClock.Instant)
        -> CommissioningResponse
    {
        if let failSafe {
            let owner = failSafe.sessionID == session.id || (session.fabricIndex != 0 && session.fabricIndex == failSafe.fabricIndex)
            guard owner else { return CommissioningResponse(.busyWithOtherAdmin, "the fail-safe is armed by another administrator") }
        } else if window != nil && session.authMode == .case {
            return CommissioningResponse(.busyWithOtherAdmin, "a commissioning window is open")
        }
        if expiryLengthSeconds == 0 {
            if failSafe != nil { expireFailSafe() }
            return CommissioningResponse(.ok)
        }
        let armedAt = failSafe?.armedAt ?? now
        let expiresAt = min(now + .seconds(Int(expiryLengthSeconds)), armedAt + .seconds(Int(configuration.maxCumulativeFailsafeSeconds)))
        if failSafe == nil {
            failSafe = FailSafeContext(sessionID: session.id, fabricIndex: session.fabricIndex, armedAt: now, expiresAt: expiresAt)
        } else {
            failSafe?.expiresAt = expiresAt
            failSafe?.sessionID = session.id  // the session that last armed it now holds it
        }
        self.breadcrumb = breadcrumb
        return CommissioningResponse(.ok)
    }

    /// SetRegulatoryConfig: ValueOutsideRange when the location is beyond LocationCapability;
    /// CONSTRAINT_ERROR for a country code that is not two characters or an unknown location.
    public mutating func setRegulatoryConfig(_ location: UInt8, countryCode: String, breadcrumb: UInt64) throws(CommissioningError)
        -> CommissioningResponse
    {
        guard countryCode.utf8.count == 2 else { throw CommissioningError(.constraintError, "the country code must be two characters") }
        guard let location = RegulatoryLocation(rawValue: location) else {
            throw CommissioningError(.constraintError, "unknown regulatory location \(location)")
        }
        let capability = configuration.locationCapability
        if capability != .indoorOutdoor && location != capability {
            return CommissioningResponse(.valueOutsideRange, "this node only supports \(capability)")
        }
        regulatoryConfig = location
        self.countryCode = countryCode
        self.breadcrumb = breadcrumb
        return CommissioningResponse(.ok)
    }

    /// CommissioningComplete: commits what the fail-safe guarded, disarms it, resets the
    /// breadcrumb and closes the commissioning window. NoFailSafe without a fail-safe;
    /// InvalidAuthentication unless sent over CASE on the fail-safe's fabric.
    public mutating func commissioningComplete(session: SessionInfo) -> CommissioningResponse {
        guard let failSafe else { return CommissioningResponse(.noFailSafe, "no fail-safe is armed") }
        guard session.authMode == .case, session.fabricIndex == failSafe.fabricIndex else {
            return CommissioningResponse(.invalidAuthentication, "CommissioningComplete must come over CASE on the fabric being commissioned")
        }
        self.failSafe = nil
        breadcrumb = 0
        if window != nil {
            window = nil
            events.append(.windowClosed)
        }
        events.append(.commissioningCompleted(failSafe.fabricIndex))
        return CommissioningResponse(.ok)
    }

    /// A write of the Breadcrumb attribute (11.10.6.1).
    public mutating func setBreadcrumb(_ value: UInt64) {
        breadcrumb = value
    }

    // MARK: - Time and sessions

    /// Expires the fail-safe and closes the window when their time has come.
    public mutating func tick(now: ContinuousClock.Instant) {
        if let failSafe, failSafe.expiresAt <= now { expireFailSafe() }
        if let expiresAt = window?.expiresAt, expiresAt <= now {
            window = nil
            events.append(.windowClosed)
        }
    }

    /// The earliest time ``tick(now:)`` has something to do.
    public var nextDeadline: ContinuousClock.Instant? {
        [failSafe?.expiresAt, window?.expiresAt].compactMap { $0 }.min()
    }

    /// A session ended: if it was the last to arm the fail-safe, the fail-safe expires (the
    /// commissioner vanished mid-commissioning).
    public mutating func sessionClosed(id: UInt64) {
        if let failSafe, failSafe.sessionID == id { expireFailSafe() }
    }

    /// The clean-up of 11.10.7.2.2: removes the fabric AddNOC added (with its ACL entries),
    /// restores the fabric UpdateNOC replaced, forgets the root and the pending key, resets the
    /// breadcrumb.
    mutating func expireFailSafe() {
        guard let failSafe else { return }
        self.failSafe = nil
        if let rollback = failSafe.rollback { undo(rollback) }
        breadcrumb = 0
        events.append(.failSafeExpired(sessionID: failSafe.sessionID))
    }

    mutating func undo(_ rollback: FailSafeRollback) {
        if let added = rollback.addedFabric, fabrics.remove(added) != nil {
            accessControl.removeAll { $0.fabricIndex == added }
            events.append(.fabricRemoved(added))
        }
        if let before = rollback.fabricBeforeUpdate {
            fabrics.upsert(before)
            events.append(.fabricUpdated(before.index))
        }
    }

    // MARK: - Access Control cluster (9.10)

    /// A write of the ACL attribute by `fabric`: replaces that fabric's entries after checking
    /// each (``AccessControl/validate(_:)``) and the per-fabric limit.
    public mutating func setAccessControlEntries(_ entries: [AccessControlEntry], fabric: FabricIndex) throws(CommissioningError) {
        guard fabrics[fabric] != nil else { throw CommissioningError(.unsupportedAccess, "fabric \(fabric) does not exist") }
        guard entries.count <= AccessControl.entriesPerFabric else {
            throw CommissioningError(.resourceExhausted, "more than \(AccessControl.entriesPerFabric) entries for one fabric")
        }
        var scoped = entries
        for i in scoped.indices {
            scoped[i].fabricIndex = fabric
            try AccessControl.validate(scoped[i])
        }
        accessControl.removeAll { $0.fabricIndex == fabric }
        accessControl += scoped
    }
}

/// What ``MatterStore`` keeps for commissioning (fabrics with their keys, the ACL, and a
/// pending fail-safe's rollback).
public struct PersistentCommissioning: Hashable, Sendable {
    public var fabrics: [FabricInfo]
    public var accessControl: [AccessControlEntry]
    public var pendingRollback: FailSafeRollback?

    public init(fabrics: [FabricInfo] = [], accessControl: [AccessControlEntry] = [], pendingRollback: FailSafeRollback? = nil) {
        self.fabrics = fabrics
        self.accessControl = accessControl
        self.pendingRollback = pendingRollback
    }
}
