public import MatterTLV

/// AttributePathIB (Matter Core Specification 10.6.2): a list whose omitted members are
/// wildcards. `listIndex` is `.append` when encoded as null.
public struct AttributePath: Hashable, Sendable, CustomStringConvertible {
    public enum ListIndex: Hashable, Sendable {
        case index(UInt16)
        /// Null: append to the list (writes only).
        case append
    }

    public var enableTagCompression: Bool?
    public var node: UInt64?
    public var endpoint: UInt16?
    public var cluster: UInt32?
    public var attribute: UInt32?
    public var listIndex: ListIndex?
    /// WildcardPathFlags (tag 6), kept for round-trips; this server does not act on it.
    public var wildcardPathFlags: UInt32?

    public init(endpoint: UInt16? = nil, cluster: UInt32? = nil, attribute: UInt32? = nil, node: UInt64? = nil,
                listIndex: ListIndex? = nil, enableTagCompression: Bool? = nil, wildcardPathFlags: UInt32? = nil) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.attribute = attribute
        self.node = node
        self.listIndex = listIndex
        self.enableTagCompression = enableTagCompression
        self.wildcardPathFlags = wildcardPathFlags
    }

    /// Whether any of endpoint, cluster or attribute is a wildcard.
    public var isWildcard: Bool { endpoint == nil || cluster == nil || attribute == nil }

    public init(tlv e: TLVElement) throws(TLVError) {
        let l = try e.list()
        enableTagCompression = try l.optionalBool(0)
        node = try l.optionalUInt(1, as: UInt64.self)
        endpoint = try l.optionalUInt(2, as: UInt16.self)
        cluster = try l.optionalUInt(3, as: UInt32.self)
        attribute = try l.optionalUInt(4, as: UInt32.self)
        if let li = l[context: 5] {
            listIndex = li.isNull ? .append : .index(try li.uint(as: UInt16.self))
        }
        wildcardPathFlags = try l.optionalUInt(6, as: UInt32.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.bool(0, enableTagCompression)
        m.uint(1, node)
        m.uint(2, endpoint)
        m.uint(3, cluster)
        m.uint(4, attribute)
        switch listIndex {
        case .index(let i): m.uint(5, i)
        case .append: m.element(5, TLVElement(.null))
        case nil: break
        }
        m.uint(6, wildcardPathFlags)
        return .list(tag, m.items)
    }

    public var description: String {
        func s<T>(_ v: T?) -> String { v.map { "\($0)" } ?? "*" }
        return "\(s(endpoint))/\(cluster.map { hex($0) } ?? "*")/\(attribute.map { hex($0) } ?? "*")"
    }
}

/// A path with endpoint, cluster and attribute all given (what a server reports).
public struct ConcreteAttributePath: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var endpoint: UInt16
    public var cluster: UInt32
    public var attribute: UInt32

    public init(endpoint: UInt16, cluster: UInt32, attribute: UInt32) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.attribute = attribute
    }

    /// As an AttributePathIB.
    public var path: AttributePath { AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute) }
    public var clusterPath: ConcreteClusterPath { ConcreteClusterPath(endpoint: endpoint, cluster: cluster) }

    public static func < (a: Self, b: Self) -> Bool {
        (a.endpoint, a.cluster, a.attribute) < (b.endpoint, b.cluster, b.attribute)
    }

    public var description: String { "\(endpoint)/\(hex(cluster))/\(hex(attribute))" }
}

/// An endpoint and a cluster on it.
public struct ConcreteClusterPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var endpoint: UInt16
    public var cluster: UInt32

    public init(endpoint: UInt16, cluster: UInt32) {
        self.endpoint = endpoint
        self.cluster = cluster
    }

    public static func < (a: Self, b: Self) -> Bool { (a.endpoint, a.cluster) < (b.endpoint, b.cluster) }
    public var description: String { "\(endpoint)/\(hex(cluster))" }
}

/// ClusterPathIB (10.6.5): node, endpoint, cluster, all optional.
public struct ClusterPath: Hashable, Sendable {
    public var node: UInt64?
    public var endpoint: UInt16?
    public var cluster: UInt32?

    public init(endpoint: UInt16? = nil, cluster: UInt32? = nil, node: UInt64? = nil) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.node = node
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let l = try e.list()
        node = try l.optionalUInt(0, as: UInt64.self)
        endpoint = try l.optionalUInt(1, as: UInt16.self)
        cluster = try l.optionalUInt(2, as: UInt32.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.uint(0, node)
        m.uint(1, endpoint)
        m.uint(2, cluster)
        return .list(tag, m.items)
    }
}

/// DataVersionFilterIB (10.6.3): "I already have this version of this cluster".
public struct DataVersionFilter: Hashable, Sendable {
    public var path: ClusterPath
    public var dataVersion: UInt32

    public init(path: ClusterPath, dataVersion: UInt32) {
        self.path = path
        self.dataVersion = dataVersion
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        path = try ClusterPath(tlv: s.member(.context(0)))
        dataVersion = try s.requiredUInt(1, as: UInt32.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.element(0, path.tlv())
        m.uint(1, dataVersion)
        return .structure(tag, m.items)
    }
}

/// EventPathIB (10.6.8): a list whose omitted members are wildcards.
public struct EventPath: Hashable, Sendable {
    public var node: UInt64?
    public var endpoint: UInt16?
    public var cluster: UInt32?
    public var event: UInt32?
    public var isUrgent: Bool?

    public init(endpoint: UInt16? = nil, cluster: UInt32? = nil, event: UInt32? = nil, node: UInt64? = nil, isUrgent: Bool? = nil) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.event = event
        self.node = node
        self.isUrgent = isUrgent
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let l = try e.list()
        node = try l.optionalUInt(0, as: UInt64.self)
        endpoint = try l.optionalUInt(1, as: UInt16.self)
        cluster = try l.optionalUInt(2, as: UInt32.self)
        event = try l.optionalUInt(3, as: UInt32.self)
        isUrgent = try l.optionalBool(4)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.uint(0, node)
        m.uint(1, endpoint)
        m.uint(2, cluster)
        m.uint(3, event)
        m.bool(4, isUrgent)
        return .list(tag, m.items)
    }
}

/// EventFilterIB (10.6.6): only events numbered at least `eventMin`.
public struct EventFilter: Hashable, Sendable {
    public var node: UInt64?
    public var eventMin: UInt64

    public init(eventMin: UInt64, node: UInt64? = nil) {
        self.eventMin = eventMin
        self.node = node
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let s = try e.structure()
        node = try s.optionalUInt(0, as: UInt64.self)
        eventMin = try s.requiredUInt(1, as: UInt64.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.uint(0, node)
        m.uint(1, eventMin)
        return .structure(tag, m.items)
    }
}

/// CommandPathIB (10.6.11): endpoint (omitted: wildcard, group invokes only), cluster, command.
public struct CommandPath: Hashable, Sendable, CustomStringConvertible {
    public var endpoint: UInt16?
    public var cluster: UInt32
    public var command: UInt32

    public init(endpoint: UInt16?, cluster: UInt32, command: UInt32) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.command = command
    }

    public init(tlv e: TLVElement) throws(TLVError) {
        let l = try e.list()
        endpoint = try l.optionalUInt(0, as: UInt16.self)
        cluster = try l.requiredUInt(1, as: UInt32.self)
        command = try l.requiredUInt(2, as: UInt32.self)
    }

    public func tlv(_ tag: TLVTag = .anonymous) -> TLVElement {
        var m = Members()
        m.uint(0, endpoint)
        m.uint(1, cluster)
        m.uint(2, command)
        return .list(tag, m.items)
    }

    public var description: String { "\(endpoint.map { "\($0)" } ?? "*")/\(hex(cluster))/\(hex(command))" }
}

func hex<T: BinaryInteger>(_ v: T) -> String { "0x" + String(v, radix: 16) }
