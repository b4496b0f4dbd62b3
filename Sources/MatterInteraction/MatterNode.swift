public import MatterTLV
import Synchronization

/// A Matter node's data model in memory: endpoints with device types, a parent (for the
/// Descriptor's PartsList), and cluster servers; every endpoint gets a Descriptor cluster
/// (0x001D, Matter Core Specification 9.5) computed from this structure.
///
/// Thread-safe (a `Mutex`); the IM engine reads it synchronously. Change a value behind a
/// cluster (a bridged device's state) and call `markChanged(_:)`, then the engine's
/// `dataChanged(now:)`.
///
/// ```swift
/// let node = MatterNode()
/// node.addEndpoint(0, deviceTypes: [.rootNode], clusters: [BasicInformation.cluster(…)])
/// node.addEndpoint(1, deviceTypes: [.aggregator], clusters: [])
/// node.addEndpoint(2, deviceTypes: [.onOffLight, .bridgedNode], parent: 1, clusters: [CatalogCluster(…), …])
/// ```
public final class MatterNode: MatterDataModel {
    private struct Endpoint: Sendable {
        var deviceTypes: [DeviceTypeEntry]
        var parent: UInt16?
        var clusters: [UInt32: any ClusterServer]
        var clientClusters: [UInt32]
    }

    private struct State: Sendable {
        var endpoints: [UInt16: Endpoint] = [:]
        var versions: [ConcreteClusterPath: UInt32] = [:]
        var nextVersion: UInt32
    }

    private let state: Mutex<State>
    /// The node's events (Switch presses, BooleanState changes of bridged devices).
    public let eventLog: EventLog

    /// - Parameters:
    ///   - dataVersionSeed: the first data version handed out (random in production, 9.7.3.1).
    ///   - eventLog: where events are recorded (production passes one whose numbers persist).
    public init(dataVersionSeed: UInt32 = UInt32.random(in: 0...UInt32.max), eventLog: EventLog = EventLog()) {
        state = Mutex(State(nextVersion: dataVersionSeed))
        self.eventLog = eventLog
    }

    /// Records an event of a cluster on an endpoint (then call the engine's `dataChanged(now:)`).
    @discardableResult
    public func emit(endpoint: UInt16, cluster: UInt32, event: UInt32, priority: EventPriority = .info, epochTimestampMs: UInt64,
                     data: TLVElement) -> EventRecord {
        eventLog.record(endpoint: endpoint, cluster: cluster, event: event, priority: priority, epochTimestampMs: epochTimestampMs, data: data)
    }

    public func events(from min: UInt64) -> [EventRecord] { eventLog.events(from: min) }

    /// Adds (or replaces) an endpoint. The Descriptor cluster is added for it.
    public func addEndpoint(_ id: UInt16, deviceTypes: [DeviceTypeEntry], parent: UInt16? = nil, clusters: [any ClusterServer],
                            clientClusters: [UInt32] = []) {
        state.withLock { s in
            s.endpoints[id] = Endpoint(deviceTypes: deviceTypes, parent: parent,
                                       clusters: Dictionary(clusters.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last }),
                                       clientClusters: clientClusters)
            for c in clusters.map(\.id) + [DescriptorCluster.id] { Self.bump(&s, ConcreteClusterPath(endpoint: id, cluster: c)) }
            Self.bumpDescriptors(&s)
        }
    }

    /// Adds (or replaces) one cluster on an existing endpoint (the bridge's Actions cluster on the
    /// Aggregator); false when there is no such endpoint.
    @discardableResult
    public func addCluster(_ cluster: any ClusterServer, to endpoint: UInt16) -> Bool {
        state.withLock { s in
            guard s.endpoints[endpoint] != nil else { return false }
            s.endpoints[endpoint]!.clusters[cluster.id] = cluster
            Self.bump(&s, ConcreteClusterPath(endpoint: endpoint, cluster: cluster.id))
            Self.bump(&s, ConcreteClusterPath(endpoint: endpoint, cluster: DescriptorCluster.id))
            return true
        }
    }

    /// Removes an endpoint (a bridged device that went away).
    public func removeEndpoint(_ id: UInt16) {
        state.withLock { s in
            s.endpoints[id] = nil
            s.versions = s.versions.filter { $0.key.endpoint != id }
            Self.bumpDescriptors(&s)
        }
    }

    /// Records that attributes of a cluster changed outside a Write or Invoke (its data version moves).
    public func markChanged(_ path: ConcreteClusterPath) {
        state.withLock { s in
            if s.versions[path] != nil { Self.bump(&s, path) }
        }
    }

    private static func bump(_ s: inout State, _ path: ConcreteClusterPath) {
        s.versions[path] = s.nextVersion
        s.nextVersion &+= 1
    }

    private static func bumpDescriptors(_ s: inout State) {
        for e in s.endpoints.keys { bump(&s, ConcreteClusterPath(endpoint: e, cluster: DescriptorCluster.id)) }
    }

    // MARK: MatterDataModel

    public func endpoints() -> [UInt16] { state.withLock { $0.endpoints.keys.sorted() } }

    public func clusters(on endpoint: UInt16) -> [UInt32]? {
        state.withLock { s in
            s.endpoints[endpoint].map { (Array($0.clusters.keys) + [DescriptorCluster.id]).sorted() }
        }
    }

    public func clusterInfo(_ path: ConcreteClusterPath) -> ClusterInfo? {
        state.withLock { s in
            guard let e = s.endpoints[path.endpoint], let version = s.versions[path] else { return nil }
            var info: ClusterInfo
            if path.cluster == DescriptorCluster.id {
                info = DescriptorCluster.metadata
            } else {
                guard let c = e.clusters[path.cluster] else { return nil }
                info = c.metadata
            }
            info.dataVersion = version
            return info
        }
    }

    public func read(_ path: ConcreteAttributePath, subject: Subject) -> Result<TLVElement, StatusIB> {
        if path.cluster == DescriptorCluster.id { return readDescriptor(path) }
        guard let cluster = state.withLock({ $0.endpoints[path.endpoint]?.clusters[path.cluster] }) else {
            return .failure(StatusIB(.unsupportedCluster))
        }
        return cluster.read(path.attribute, endpoint: path.endpoint, subject: subject)
    }

    public func write(_ path: ConcreteAttributePath, _ operation: WriteOperation, subject: Subject) -> StatusIB {
        guard var cluster = state.withLock({ $0.endpoints[path.endpoint]?.clusters[path.cluster] }) else {
            return StatusIB(path.cluster == DescriptorCluster.id ? .unsupportedWrite : .unsupportedCluster)
        }
        let status = cluster.write(path.attribute, operation, endpoint: path.endpoint, subject: subject)
        if status.status == .success { store(cluster, at: path.clusterPath) }
        return status
    }

    public func invoke(_ path: ConcreteCommandPath, fields: TLVElement?, subject: Subject, timed: Bool) -> CommandResult {
        guard var cluster = state.withLock({ $0.endpoints[path.endpoint]?.clusters[path.cluster] }) else {
            return .status(StatusIB(.unsupportedCluster))
        }
        let result = cluster.invoke(path.command, fields: fields, endpoint: path.endpoint, subject: subject)
        if case .status(let s) = result, s.status != .success { return result }
        store(cluster, at: path.clusterPath)
        return result
    }

    /// Puts a cluster back after a write or invoke, with a new data version.
    private func store(_ cluster: any ClusterServer, at path: ConcreteClusterPath) {
        state.withLock { s in
            guard s.endpoints[path.endpoint]?.clusters[path.cluster] != nil else { return }
            s.endpoints[path.endpoint]!.clusters[path.cluster] = cluster
            Self.bump(&s, path)
        }
    }

    // MARK: Descriptor

    private func readDescriptor(_ path: ConcreteAttributePath) -> Result<TLVElement, StatusIB> {
        state.withLock { s in
            guard let e = s.endpoints[path.endpoint] else { return .failure(StatusIB(.unsupportedEndpoint)) }
            func ids<T: BinaryInteger>(_ v: [T]) -> TLVElement { .array(v.map { TLVElement(.unsigned(UInt64($0))) }) }
            switch path.attribute {
            case DescriptorCluster.deviceTypeList:
                return .success(.array(e.deviceTypes.map { d in
                    .structure([TLVElement(.context(0), .unsigned(UInt64(d.deviceType))), TLVElement(.context(1), .unsigned(UInt64(d.revision)))])
                }))
            case DescriptorCluster.serverList:
                return .success(ids((Array(e.clusters.keys) + [DescriptorCluster.id]).sorted()))
            case DescriptorCluster.clientList:
                return .success(ids(e.clientClusters.sorted()))
            case DescriptorCluster.partsList:
                return .success(ids(Self.parts(of: path.endpoint, in: s.endpoints)))
            default:
                return .failure(StatusIB(.unsupportedAttribute))
            }
        }
    }

    /// The root endpoint's parts are every other endpoint; another endpoint's are its
    /// descendants (9.5.6, "PartsList": the tree pattern of a bridge's aggregator).
    private static func parts(of endpoint: UInt16, in endpoints: [UInt16: Endpoint]) -> [UInt16] {
        if endpoint == 0 { return endpoints.keys.filter { $0 != 0 }.sorted() }
        return endpoints.keys.filter { candidate in
            var p = endpoints[candidate]?.parent
            var hops = 0
            while let parent = p, hops < endpoints.count {
                if parent == endpoint { return true }
                p = endpoints[parent]?.parent
                hops += 1
            }
            return false
        }.sorted()
    }
}

/// One entry of the Descriptor's DeviceTypeList: a device type ID and its revision.
public struct DeviceTypeEntry: Hashable, Sendable {
    public var deviceType: UInt32
    public var revision: UInt16

    public init(_ deviceType: UInt32, revision: UInt16) {
        self.deviceType = deviceType
        self.revision = revision
    }

    /// Root Node (0x0016, rev 2), Aggregator (0x000E, rev 1), Bridged Node (0x0013, rev 2)
    /// (matter-data-model.md, device types of Matter 1.3).
    public static let rootNode = DeviceTypeEntry(0x0016, revision: 2)
    public static let aggregator = DeviceTypeEntry(0x000E, revision: 1)
    public static let bridgedNode = DeviceTypeEntry(0x0013, revision: 2)
}

/// The Descriptor cluster's IDs (Matter Core Specification 9.5).
public enum DescriptorCluster {
    public static let id: UInt32 = 0x001D
    public static let deviceTypeList: UInt32 = 0
    public static let serverList: UInt32 = 1
    public static let clientList: UInt32 = 2
    public static let partsList: UInt32 = 3
    /// Revision 2 (Matter 1.3).
    static let metadata = ClusterInfo(revision: 2, attributes: [deviceTypeList, serverList, clientList, partsList], dataVersion: 0)
}
