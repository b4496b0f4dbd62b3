import Logging
import MatterCommissioning
import MatterInteraction
import MatterTLV

/// Access Control (0x001F, Core Specification 9.10) on the root endpoint: the ACL attribute,
/// fabric-scoped, read and written by administrators of each fabric; it is what the IM
/// engine's access checker consults.
struct AccessControlCluster: ClusterServer {
    static let clusterID: UInt32 = 0x001F
    let core: BridgeCore
    var id: UInt32 { Self.clusterID }

    var metadata: ClusterInfo {
        ClusterInfo(revision: 1, attributes: [0, 2, 3, 4], dataVersion: 0, writableAttributes: [0], writePrivileges: [0: .administer])
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        switch attribute {
        case 0:
            guard core.allows(subject, ConcreteClusterPath(endpoint: endpoint, cluster: id), .administer) else {
                return .failure(StatusIB(.unsupportedAccess))
            }
            let fabric = core.accessingFabric(subject)
            return .success(.array(core.commissioning.snapshot.accessControl.filter { $0.fabricIndex == fabric }.map(Self.encode)))
        case 2: return .success(anonymous(AccessControl.subjectsPerEntry))
        case 3: return .success(anonymous(AccessControl.targetsPerEntry))
        case 4: return .success(anonymous(AccessControl.entriesPerFabric))
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }

    mutating func write(_ attribute: UInt32, _ operation: WriteOperation, endpoint: UInt16, subject: Subject) -> StatusIB {
        guard attribute == 0 else { return StatusIB(.unsupportedWrite) }
        let fabric = core.accessingFabric(subject)
        guard fabric != 0 else { return StatusIB(.unsupportedAccess) }
        do throws(CommissioningError) {
            var entries: [AccessControlEntry]
            switch operation {
            case .replace(let list):
                guard case .array(let items) = list.value else { return StatusIB(.invalidDataType) }
                entries = try items.map(Self.decode)
            case .append(let item):
                entries = core.commissioning.snapshot.accessControl.filter { $0.fabricIndex == fabric } + [try Self.decode(item)]
            }
            try core.run { (s: inout CommissioningState) throws(CommissioningError) in try s.setAccessControlEntries(entries, fabric: fabric) }
            return StatusIB(.success)
        } catch {
            return StatusIB(IMStatus(rawValue: error.status.rawValue))
        }
    }

    /// AccessControlEntryStruct (9.10.4.5).
    static func encode(_ e: AccessControlEntry) -> TLVElement {
        let subjects: TLVElement = e.subjects.isEmpty ? nullField(3) : .array(.context(3), e.subjects.map { anonymous($0) })
        let targets: TLVElement = e.targets.isEmpty ? nullField(4) : .array(.context(4), e.targets.map { t in
            .structure([t.cluster.map { field(0, $0) } ?? nullField(0), t.endpoint.map { field(1, $0) } ?? nullField(1),
                        t.deviceType.map { field(2, $0) } ?? nullField(2)])
        })
        return .structure([field(1, e.privilege.rawValue), field(2, e.authMode.rawValue), subjects, targets, field(fabricIndexTag, e.fabricIndex)])
    }

    static func decode(_ element: TLVElement) throws(CommissioningError) -> AccessControlEntry {
        guard case .structure = element.value else { throw CommissioningError(.invalidDataType, "an ACL entry is not a structure") }
        let f = try CommandFields(element)
        guard let privilege = MatterCommissioning.Privilege(rawValue: try f.uint(1, as: UInt8.self)) else {
            throw CommissioningError(.constraintError, "unknown privilege")
        }
        guard let authMode = AuthMode(rawValue: try f.uint(2, as: UInt8.self)) else { throw CommissioningError(.constraintError, "unknown auth mode") }
        func list(_ n: UInt8) throws(CommissioningError) -> [TLVElement] {
            guard let m = element[context: n], !m.isNull else { return [] }
            guard case .array(let items) = m.value else { throw CommissioningError(.invalidDataType, "field \(n) is not a list") }
            return items
        }
        var subjects: [UInt64] = []
        for s in try list(3) {
            guard let v = try? s.uint(as: UInt64.self) else { throw CommissioningError(.invalidDataType, "a subject is not a number") }
            subjects.append(v)
        }
        var targets: [AccessControlTarget] = []
        for t in try list(4) {
            let tf = try CommandFields(t)
            targets.append(AccessControlTarget(cluster: try tf.optionalUInt(0, as: UInt32.self), endpoint: try tf.optionalUInt(1, as: UInt16.self),
                                               deviceType: try tf.optionalUInt(2, as: UInt32.self)))
        }
        return AccessControlEntry(privilege: privilege, authMode: authMode, subjects: subjects, targets: targets, fabricIndex: 0)
    }
}
