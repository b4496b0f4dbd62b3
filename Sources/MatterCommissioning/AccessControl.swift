/// A fabric index (Core Specification 7.5.2): 1…254 name fabrics; 0 is "no fabric" (a PASE
/// session before AddNOC).
public typealias FabricIndex = UInt8

/// AccessControlEntryPrivilegeEnum (9.10.4.2).
public enum Privilege: UInt8, Hashable, Sendable, CaseIterable {
    case view = 1
    case proxyView = 2
    case operate = 3
    case manage = 4
    case administer = 5

    /// Whether holding `self` grants `required` (9.10.4.2.1): Administer ⊇ Manage ⊇ Operate ⊇
    /// View, ProxyView ⊇ View, and Administer also grants ProxyView.
    public func grants(_ required: Privilege) -> Bool {
        switch (self, required) {
        case (.administer, _): return true
        case (.proxyView, .proxyView), (.proxyView, .view): return true
        case (.proxyView, _): return false
        case (_, .proxyView): return false
        default: return rawValue >= required.rawValue
        }
    }
}

/// AccessControlEntryAuthModeEnum (9.10.4.3).
public enum AuthMode: UInt8, Hashable, Sendable {
    case pase = 1
    case `case` = 2
    case group = 3
}

/// AccessControlTargetStruct (9.10.4.4): each present field must match; at least one is present.
public struct AccessControlTarget: Hashable, Sendable {
    public var cluster: UInt32?
    public var endpoint: UInt16?
    public var deviceType: UInt32?

    public init(cluster: UInt32? = nil, endpoint: UInt16? = nil, deviceType: UInt32? = nil) {
        self.cluster = cluster
        self.endpoint = endpoint
        self.deviceType = deviceType
    }
}

/// AccessControlEntryStruct (9.10.4.5), fabric-scoped.
public struct AccessControlEntry: Hashable, Sendable {
    public var privilege: Privilege
    public var authMode: AuthMode
    /// Node IDs or CATs (CASE) or group IDs (Group); empty means "any subject" (the spec's null).
    public var subjects: [UInt64]
    /// Empty means "every target" (the spec's null).
    public var targets: [AccessControlTarget]
    public var fabricIndex: FabricIndex

    public init(privilege: Privilege, authMode: AuthMode, subjects: [UInt64], targets: [AccessControlTarget] = [], fabricIndex: FabricIndex) {
        self.privilege = privilege
        self.authMode = authMode
        self.subjects = subjects
        self.targets = targets
        self.fabricIndex = fabricIndex
    }
}

/// Who is asking (the spec's Incoming Subject Descriptor, 6.6.2.1).
public struct SubjectDescriptor: Hashable, Sendable {
    public var fabricIndex: FabricIndex
    public var authMode: AuthMode
    /// The peer's node ID (CASE), group ID (Group) or the PASE passcode ID (0).
    public var subject: UInt64
    /// The CASE Authenticated Tags from the peer's NOC.
    public var caseAuthenticatedTags: [UInt32]
    /// True on a PASE session while commissioning: it has implicit Administer (6.6.2.9).
    public var isCommissioning: Bool

    public init(fabricIndex: FabricIndex, authMode: AuthMode, subject: UInt64, caseAuthenticatedTags: [UInt32] = [], isCommissioning: Bool = false) {
        self.fabricIndex = fabricIndex
        self.authMode = authMode
        self.subject = subject
        self.caseAuthenticatedTags = caseAuthenticatedTags
        self.isCommissioning = isCommissioning
    }
}

/// What is being accessed: an endpoint, a cluster, and the device types on that endpoint.
public struct RequestPath: Hashable, Sendable {
    public var endpoint: UInt16
    public var cluster: UInt32
    public var deviceTypes: [UInt32]

    public init(endpoint: UInt16, cluster: UInt32, deviceTypes: [UInt32] = []) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.deviceTypes = deviceTypes
    }
}

/// The Access Control Privilege Granting algorithm (9.10.5.x) as a pure function.
public enum AccessControl {
    /// CASE Authenticated Tag subjects: 0xFFFF_FFFD_IIII_VVVV (6.6.2.1.2).
    static let catPrefix: UInt64 = 0xFFFF_FFFD_0000_0000

    /// Limits this node announces (9.10.6): SubjectsPerAccessControlEntry,
    /// TargetsPerAccessControlEntry, AccessControlEntriesPerFabric (the spec's minimums).
    public static let subjectsPerEntry = 4
    public static let targetsPerEntry = 3
    public static let entriesPerFabric = 4

    /// Whether `subject` may exercise `privilege` on `path` under `entries`.
    ///
    /// A commissioning PASE session is granted everything; otherwise an entry of the subject's
    /// fabric and auth mode must grant the privilege, name the subject (or name none), and have
    /// a matching target (or none).
    public static func isGranted(_ privilege: Privilege, to subject: SubjectDescriptor, on path: RequestPath, entries: [AccessControlEntry]) -> Bool {
        if subject.authMode == .pase { return subject.isCommissioning }
        guard subject.fabricIndex != 0 else { return false }
        return entries.contains { entry in
            entry.fabricIndex == subject.fabricIndex && entry.authMode == subject.authMode
                && entry.privilege.grants(privilege)
                && (entry.subjects.isEmpty || entry.subjects.contains { matches($0, subject) })
                && (entry.targets.isEmpty || entry.targets.contains { matches($0, path) })
        }
    }

    static func matches(_ entrySubject: UInt64, _ subject: SubjectDescriptor) -> Bool {
        if entrySubject == subject.subject { return true }
        guard subject.authMode == .case, entrySubject & 0xFFFF_FFFF_0000_0000 == catPrefix else { return false }
        let identifier = UInt16(truncatingIfNeeded: entrySubject >> 16), version = UInt16(truncatingIfNeeded: entrySubject)
        return subject.caseAuthenticatedTags.contains { UInt16($0 >> 16) == identifier && UInt16(truncatingIfNeeded: $0) >= version }
    }

    static func matches(_ target: AccessControlTarget, _ path: RequestPath) -> Bool {
        if let c = target.cluster, c != path.cluster { return false }
        if let e = target.endpoint, e != path.endpoint { return false }
        if let d = target.deviceType, !path.deviceTypes.contains(d) { return false }
        return true
    }

    /// Whether `id` is an operational node ID (2.5.5.1).
    public static func isOperationalNodeID(_ id: UInt64) -> Bool { (1...0xFFFF_FFEF_FFFF_FFFF).contains(id) }

    /// Whether `id` is a valid CAT subject (identifier any, version ≥ 1).
    public static func isCATSubject(_ id: UInt64) -> Bool { id & 0xFFFF_FFFF_0000_0000 == catPrefix && id & 0xFFFF != 0 }

    /// Checks one entry as the Access Control cluster must before storing it (9.10.5.3):
    /// no PASE entries, no Administer for groups, subjects valid for the auth mode, each target
    /// naming something and never both an endpoint and a device type, within the limits.
    /// - Throws: `CommissioningError` with CONSTRAINT_ERROR naming the rule.
    public static func validate(_ entry: AccessControlEntry) throws(CommissioningError) {
        func fail(_ m: String) -> CommissioningError { CommissioningError(.constraintError, m) }
        guard entry.authMode != .pase else { throw fail("PASE entries cannot be written") }
        if entry.authMode == .group && entry.privilege == .administer { throw fail("groups cannot be granted Administer") }
        guard entry.subjects.count <= subjectsPerEntry else { throw fail("more than \(subjectsPerEntry) subjects") }
        guard entry.targets.count <= targetsPerEntry else { throw fail("more than \(targetsPerEntry) targets") }
        for s in entry.subjects {
            let ok = entry.authMode == .case ? isOperationalNodeID(s) || isCATSubject(s) : (1...0xFFFF).contains(s)
            guard ok else { throw fail("subject 0x\(String(s, radix: 16)) is not valid for \(entry.authMode)") }
        }
        for t in entry.targets {
            guard t.cluster != nil || t.endpoint != nil || t.deviceType != nil else { throw fail("a target names nothing") }
            guard t.endpoint == nil || t.deviceType == nil else { throw fail("a target names both an endpoint and a device type") }
        }
    }
}
