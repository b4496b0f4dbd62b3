public import MatterTLV

/// One cluster's server on an endpoint, held by a `MatterNode` (which keeps its data version).
///
/// Reads are non-mutating and may be called without the node's lock; writes and invokes are
/// mutating and change the node's copy (a value cluster) or call out (a catalogue cluster's
/// value source). Attributes are the cluster's own; the engine adds the global ones.
public protocol ClusterServer: Sendable {
    var id: UInt32 { get }
    /// Revision, feature map, attributes, commands; its `dataVersion` is ignored (the node's counts).
    var metadata: ClusterInfo { get }
    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB>
    mutating func write(_ attribute: UInt32, _ operation: WriteOperation, endpoint: UInt16, subject: Subject) -> StatusIB
    mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult
}

extension ClusterServer {
    public mutating func write(_ attribute: UInt32, _ operation: WriteOperation, endpoint: UInt16, subject: Subject) -> StatusIB {
        StatusIB(.unsupportedWrite)
    }

    public mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult {
        .status(StatusIB(.unsupportedCommand))
    }
}

/// A cluster whose attributes are stored TLV values (Basic Information, Bridged Device Basic
/// Information, fixed-value clusters). Writable attributes accept a value of the same TLV kind
/// (strings up to `maxStringLength`).
public struct AttributeStoreCluster: ClusterServer {
    public let id: UInt32
    public var values: [UInt32: TLVElement]
    public var revision: UInt16
    public var featureMap: UInt32
    public var writable: Set<UInt32>
    /// The longest string a write may store (32 for NodeLabel/Location-like attributes).
    public var maxStringLength: Int

    public init(id: UInt32, revision: UInt16, featureMap: UInt32 = 0, values: [UInt32: TLVElement], writable: Set<UInt32> = [],
                maxStringLength: Int = 32) {
        self.id = id
        self.revision = revision
        self.featureMap = featureMap
        self.values = values.mapValues { TLVElement(.anonymous, $0.value) }
        self.writable = writable
        self.maxStringLength = maxStringLength
    }

    public var metadata: ClusterInfo {
        ClusterInfo(revision: revision, featureMap: featureMap, attributes: values.keys.sorted(), dataVersion: 0,
                    writableAttributes: writable, writePrivileges: Dictionary(uniqueKeysWithValues: writable.map { ($0, .manage) }))
    }

    public func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        values[attribute].map { .success($0) } ?? .failure(StatusIB(.unsupportedAttribute))
    }

    public mutating func write(_ attribute: UInt32, _ operation: WriteOperation, endpoint: UInt16, subject: Subject) -> StatusIB {
        guard let old = values[attribute], writable.contains(attribute) else { return StatusIB(.unsupportedWrite) }
        guard case .replace(let new) = operation else { return StatusIB(.invalidAction) }
        switch (old.value, new.value) {
        case (.utf8, .utf8(let s)):
            guard s.utf8.count <= maxStringLength else { return StatusIB(.constraintError) }
        case (.unsigned, .unsigned), (.signed, .signed), (.bool, .bool), (.bytes, .bytes): break
        default: return StatusIB(.invalidDataType)
        }
        values[attribute] = TLVElement(.anonymous, new.value)
        return StatusIB(.success)
    }
}
