#if canImport(Glibc)
import Glibc
#endif
import Logging
import MatterCommissioning
import MatterInteraction
import MatterTLV

/// Network Commissioning (0x0031, Core Specification 11.9) with the Ethernet feature: one
/// network, connected; no commands.
struct NetworkCommissioningCluster: ClusterServer {
    static let clusterID: UInt32 = 0x0031
    var interfaceEnabled = true
    let networkID: [UInt8]
    var id: UInt32 { Self.clusterID }

    var metadata: ClusterInfo {
        ClusterInfo(revision: 1, featureMap: 0x4, attributes: [0, 1, 4, 5, 6, 7], dataVersion: 0, writableAttributes: [4],
                    writePrivileges: [4: .administer])
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        switch attribute {
        case 0: return .success(anonymous(1))  // MaxNetworks
        case 1: return .success(.array([.structure([field(0, bytes: networkID), field(1, bool: true)])]))
        case 4: return .success(TLVElement(.bool(interfaceEnabled)))
        case 5, 6, 7: return .success(TLVElement(.null))  // LastNetworkingStatus, LastNetworkID, LastConnectErrorValue
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }

    mutating func write(_ attribute: UInt32, _ operation: WriteOperation, endpoint: UInt16, subject: Subject) -> StatusIB {
        guard attribute == 4 else { return StatusIB(.unsupportedWrite) }
        guard case .replace(let v) = operation, let enabled = try? v.bool() else { return StatusIB(.invalidDataType) }
        interfaceEnabled = enabled
        return StatusIB(.success)
    }
}

/// Group Key Management (0x003F, Core Specification 11.2), minimal: no groups
/// (MaxGroupsPerFabric 0), one key set per fabric — the IPK, set 0, which cannot be written or
/// removed and is read with its keys null.
struct GroupKeyManagementCluster: ClusterServer {
    static let clusterID: UInt32 = 0x003F
    let core: BridgeCore
    var id: UInt32 { Self.clusterID }

    var metadata: ClusterInfo {
        ClusterInfo(revision: 1, attributes: [0, 1, 2, 3], acceptedCommands: [0, 1, 3, 4], generatedCommands: [2, 5], dataVersion: 0,
                    writableAttributes: [0], writePrivileges: [0: .manage],
                    invokePrivileges: [0: .administer, 1: .administer, 3: .administer, 4: .administer])
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        switch attribute {
        case 0, 1: return .success(.array([]))  // GroupKeyMap, GroupTable
        case 2: return .success(anonymous(0))  // MaxGroupsPerFabric
        case 3: return .success(anonymous(1))  // MaxGroupKeysPerFabric (the IPK)
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }

    mutating func write(_ attribute: UInt32, _ operation: WriteOperation, endpoint: UInt16, subject: Subject) -> StatusIB {
        guard attribute == 0 else { return StatusIB(.unsupportedWrite) }
        switch operation {
        case .replace(let v):
            guard case .array(let items) = v.value else { return StatusIB(.invalidDataType) }
            return StatusIB(items.isEmpty ? .success : .resourceExhausted)  // no groups
        case .append:
            return StatusIB(.resourceExhausted)
        }
    }

    mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult {
        let core = self.core
        return .handling { () throws(CommissioningError) -> CommandResult in
            let f = try CommandFields(fields)
            let fabric = core.accessingFabric(subject)
            switch command {
            case 0:  // KeySetWrite
                guard let set = f.element?[context: 0], case .structure = set.value else { throw CommissioningError(.invalidCommand, "GroupKeySet missing") }
                let id = try CommandFields(set).uint(0, as: UInt16.self)
                if id == 0 { throw CommissioningError(.invalidCommand, "key set 0 is the IPK") }
                throw CommissioningError(.resourceExhausted, "this node keeps no group key sets")
            case 1:  // KeySetRead
                let id = try f.uint(0, as: UInt16.self)
                guard id == 0, fabric != 0 else { throw CommissioningError(.notFound, "no key set \(id)") }
                return .response(2, [.structure(.context(0), [
                    field(0, 0), field(1, 0), nullField(2), field(3, 0), nullField(4), nullField(5), nullField(6), nullField(7),
                ])])
            case 3:  // KeySetRemove
                let id = try f.uint(0, as: UInt16.self)
                if id == 0 { throw CommissioningError(.invalidCommand, "key set 0 is the IPK") }
                throw CommissioningError(.notFound, "no key set \(id)")
            case 4:  // KeySetReadAllIndices
                return .response(5, [.array(.context(0), fabric != 0 ? [anonymous(0)] : [])])
            default:
                return .status(StatusIB(.unsupportedCommand))
            }
        }
    }
}

/// General Diagnostics (0x0033, Core Specification 11.12): the host's network interfaces,
/// RebootCount (persisted), UpTime, TestEventTriggersEnabled false; TestEventTrigger refuses
/// every key (no test events here), TimeSnapshot answers.
struct GeneralDiagnosticsCluster: ClusterServer {
    static let clusterID: UInt32 = 0x0033
    let core: BridgeCore
    var id: UInt32 { Self.clusterID }

    var metadata: ClusterInfo {
        ClusterInfo(revision: 2, attributes: [0, 1, 2, 8], acceptedCommands: [0, 1], generatedCommands: [2], dataVersion: 0,
                    invokePrivileges: [0: .manage])
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        switch attribute {
        case 0: return .success(.array(Self.interfaces().map(\.element)))
        case 1: return .success(anonymous(core.rebootCount))
        case 2: return .success(anonymous(UInt64(max(0, core.started.duration(to: .now).components.seconds))))
        case 8: return .success(TLVElement(.bool(false)))
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }

    mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult {
        let core = self.core
        return .handling { () throws(CommissioningError) -> CommandResult in
            let f = try CommandFields(fields)
            switch command {
            case 0:  // TestEventTrigger: no enable key is configured, so every key is refused
                let key = try f.bytes(0, maxLength: 16)
                _ = try f.uint(1, as: UInt64.self)
                guard key.count == 16 else { throw CommissioningError(.constraintError, "the enable key must be 16 bytes") }
                throw CommissioningError(.constraintError, "test event triggers are not enabled")
            case 1:  // TimeSnapshot
                let ms = UInt64(max(0, core.started.duration(to: .now).components.seconds)) * 1000
                var now = timespec()
                clock_gettime(CLOCK_REALTIME, &now)
                return .response(2, [field(0, ms), field(1, UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000))])
            default:
                return .status(StatusIB(.unsupportedCommand))
            }
        }
    }

    /// NetworkInterface (11.12.4.3) of each non-loopback interface that is up (no hardware
    /// address: reading it needs netpacket, which Glibc's module does not export).
    struct Interface {
        var name: String
        var hardwareAddress: [UInt8] = []
        var ipv4: [[UInt8]] = []
        var ipv6: [[UInt8]] = []

        var element: TLVElement {
            .structure([field(0, String(name.prefix(32))), field(1, bool: true), nullField(2), nullField(3), field(4, bytes: hardwareAddress),
                        .array(.context(5), ipv4.prefix(4).map { TLVElement(.bytes($0)) }),
                        .array(.context(6), ipv6.prefix(8).map { TLVElement(.bytes($0)) }), field(7, 2)])  // Type: Ethernet
        }
    }

    static func interfaces() -> [Interface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [String: Interface] = [:]
        var order: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        var guardCount = 0
        while let entry = cursor, guardCount < 512 {
            guardCount += 1
            cursor = entry.pointee.ifa_next
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0, let addr = entry.pointee.ifa_addr else { continue }
            let name = String(cString: entry.pointee.ifa_name)
            if found[name] == nil { found[name] = Interface(name: name); order.append(name) }
            switch Int32(addr.pointee.sa_family) {
            case AF_INET:
                let a = addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                found[name]!.ipv4.append(withUnsafeBytes(of: a) { Array($0) })
            case AF_INET6:
                let a = addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                found[name]!.ipv6.append(withUnsafeBytes(of: a) { Array($0) })
            default: break
            }
        }
        return order.prefix(8).compactMap { found[$0] }
    }
}
