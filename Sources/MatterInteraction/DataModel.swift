public import MatterTLV

/// An access privilege (Matter Core Specification 6.6.2, "Privileges"), in increasing order.
public enum Privilege: UInt8, Sendable, Comparable, CaseIterable {
    case view = 1, proxyView = 2, operate = 3, manage = 4, administer = 5
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Who sends a request: the session's authentication mode, fabric and node (6.6.2.1).
public struct Subject: Hashable, Sendable {
    public enum AuthMode: Hashable, Sendable { case pase, `case`, group }
    public var authMode: AuthMode
    /// The session's fabric index; 0 for a PASE session before AddNOC.
    public var fabricIndex: UInt8
    /// The peer's operational node ID (CASE), or the PASE passcode ID (0) for PASE.
    public var nodeID: UInt64
    /// The session's identifier as its owner chose it (0 when unknown): lets a cluster find
    /// what else it needs of the session (the attestation challenge of commissioning commands).
    public var sessionID: UInt64

    public init(authMode: AuthMode, fabricIndex: UInt8, nodeID: UInt64, sessionID: UInt64 = 0) {
        self.authMode = authMode
        self.fabricIndex = fabricIndex
        self.nodeID = nodeID
        self.sessionID = sessionID
    }

    /// A commissioner over PASE (implicitly an administrator while commissioning, 6.6.2.9).
    public static let pase = Subject(authMode: .pase, fabricIndex: 0, nodeID: 0)
}

/// The access-control hook: whether `subject` holds `privilege` on a cluster of an endpoint.
/// The commissioning side plugs its ACL (the Access Control cluster's entries) in here.
public protocol AccessChecker: Sendable {
    func allows(_ subject: Subject, _ path: ConcreteClusterPath, _ privilege: Privilege) -> Bool
}

/// An `AccessChecker` from a closure.
public struct AccessCheck: AccessChecker {
    private let body: @Sendable (Subject, ConcreteClusterPath, Privilege) -> Bool
    public init(_ body: @escaping @Sendable (Subject, ConcreteClusterPath, Privilege) -> Bool) { self.body = body }
    public func allows(_ subject: Subject, _ path: ConcreteClusterPath, _ privilege: Privilege) -> Bool { body(subject, path, privilege) }

    /// PASE subjects are administrators (commissioning); everyone else is refused. The default
    /// until an ACL is plugged in.
    public static let paseOnly = AccessCheck { subject, _, _ in subject.authMode == .pase }
    /// Allows everything (tests).
    public static let allowAll = AccessCheck { _, _, _ in true }
}

/// What the IM engine needs to know about one cluster instance, besides its values.
public struct ClusterInfo: Hashable, Sendable {
    public var revision: UInt16
    public var featureMap: UInt32
    /// The cluster's own attributes (the engine adds the global ones, 7.13).
    public var attributes: [UInt32]
    public var acceptedCommands: [UInt32]
    public var generatedCommands: [UInt32]
    /// The data version (7.10.3): changes whenever any attribute of the cluster changes.
    public var dataVersion: UInt32
    /// Attributes a Write may change.
    public var writableAttributes: Set<UInt32>
    /// Commands that must arrive in a timed interaction (NEEDS_TIMED_INTERACTION otherwise).
    public var timedCommands: Set<UInt32>
    /// Attributes whose writes must be timed.
    public var timedWriteAttributes: Set<UInt32>
    /// Privileges above the defaults (read: view, write and invoke: operate).
    public var writePrivileges: [UInt32: Privilege]
    public var invokePrivileges: [UInt32: Privilege]
    /// The events the cluster can emit (the EventList global attribute, 7.13.9).
    public var events: [UInt32]

    public init(revision: UInt16, featureMap: UInt32 = 0, attributes: [UInt32], acceptedCommands: [UInt32] = [], generatedCommands: [UInt32] = [],
                dataVersion: UInt32, writableAttributes: Set<UInt32> = [], timedCommands: Set<UInt32> = [],
                timedWriteAttributes: Set<UInt32> = [], writePrivileges: [UInt32: Privilege] = [:], invokePrivileges: [UInt32: Privilege] = [:],
                events: [UInt32] = []) {
        self.revision = revision
        self.featureMap = featureMap
        self.attributes = attributes
        self.acceptedCommands = acceptedCommands
        self.generatedCommands = generatedCommands
        self.dataVersion = dataVersion
        self.writableAttributes = writableAttributes
        self.timedCommands = timedCommands
        self.timedWriteAttributes = timedWriteAttributes
        self.writePrivileges = writePrivileges
        self.invokePrivileges = invokePrivileges
        self.events = events
    }
}

/// The global attributes every cluster has (Matter Core Specification 7.13).
public enum GlobalAttribute {
    public static let generatedCommandList: UInt32 = 0xFFF8
    public static let acceptedCommandList: UInt32 = 0xFFF9
    public static let eventList: UInt32 = 0xFFFA
    public static let attributeList: UInt32 = 0xFFFB
    public static let featureMap: UInt32 = 0xFFFC
    public static let clusterRevision: UInt32 = 0xFFFD
    /// In the order they follow a cluster's own attributes in AttributeList.
    public static let all: [UInt32] = [generatedCommandList, acceptedCommandList, eventList, attributeList, featureMap, clusterRevision]
}

/// A write's operation on an attribute: replace the value, or append one item to a list
/// (an AttributePathIB with a null ListIndex, 10.6.4.3.1).
public enum WriteOperation: Hashable, Sendable {
    case replace(TLVElement)
    case append(TLVElement)
}

/// What a command returns: a status, or a response command with its fields.
public enum CommandResult: Hashable, Sendable {
    case status(StatusIB)
    case response(command: UInt32, fields: TLVElement)

    public static let success = CommandResult.status(StatusIB(.success))
}

/// The data model a Matter node serves (Matter Core Specification chapter 7 and 9): endpoints
/// → clusters → attributes (with data versions) and commands.
///
/// The IM engine calls it synchronously from its state machine: implementations answer from
/// memory (a snapshot the bridge keeps current) and never block. Access control is not its
/// concern (the engine asks its `AccessChecker`); nor are global attributes (the engine builds
/// them from `ClusterInfo`).
public protocol MatterDataModel: Sendable {
    /// The endpoints, in increasing order.
    func endpoints() -> [UInt16]
    /// The server clusters of an endpoint, in increasing order; nil when the endpoint does not exist.
    func clusters(on endpoint: UInt16) -> [UInt32]?
    /// A cluster's metadata and current data version; nil when absent.
    func clusterInfo(_ path: ConcreteClusterPath) -> ClusterInfo?
    /// The value of one of the cluster's own attributes, or a status (UNSUPPORTED_ATTRIBUTE,
    /// UNSUPPORTED_READ, FAILURE …).
    func read(_ path: ConcreteAttributePath, subject: Subject) -> Result<TLVElement, StatusIB>
    /// Writes an attribute; returns the status (CONSTRAINT_ERROR, INVALID_DATA_TYPE …). On
    /// success the cluster's data version must change if the value did.
    func write(_ path: ConcreteAttributePath, _ operation: WriteOperation, subject: Subject) -> StatusIB
    /// Invokes a command (its fields are a structure, or nil when absent).
    func invoke(_ path: ConcreteCommandPath, fields: TLVElement?, subject: Subject, timed: Bool) -> CommandResult
    /// The kept events numbered at least `min`, oldest first (the engine filters them by path
    /// and access). Default: none.
    func events(from min: UInt64) -> [EventRecord]
}

extension MatterDataModel {
    public func events(from min: UInt64) -> [EventRecord] { [] }
}

/// A command on an endpoint's cluster.
public struct ConcreteCommandPath: Hashable, Sendable, CustomStringConvertible {
    public var endpoint: UInt16
    public var cluster: UInt32
    public var command: UInt32

    public init(endpoint: UInt16, cluster: UInt32, command: UInt32) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.command = command
    }

    public var path: CommandPath { CommandPath(endpoint: endpoint, cluster: cluster, command: command) }
    public var clusterPath: ConcreteClusterPath { ConcreteClusterPath(endpoint: endpoint, cluster: cluster) }
    public var description: String { "\(endpoint)/\(hex(cluster))/\(hex(command))" }
}
