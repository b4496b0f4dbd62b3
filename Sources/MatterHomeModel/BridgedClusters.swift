import HomeCore
import HomeModel
import MatterInteraction
import MatterTLV

/// Bridged Device Basic Information (0x0039, Matter Core Specification 9.13) of a bridged
/// node endpoint, read live from the device's exposed state: NodeLabel = the device's name,
/// Reachable = its connectivity, UniqueID, and the identity the plugin gave (issue 17: the
/// primary type's Basic Information values — VendorName, VendorID, ProductName, SerialNumber,
/// versions …; VendorName/ProductName fall back to the device's manufacturer and model).
/// Changes are reported by data version (the owner marks the cluster).
struct BridgedInfoCluster: ClusterServer {
    static let nodeLabel: UInt32 = 0x05
    static let reachable: UInt32 = 0x11
    static let uniqueID: UInt32 = 0x12

    let shared: BridgeShared
    let device: DeviceID
    /// The identity attributes the device has (the list is layout: it changes the endpoint).
    let identity: [UInt32]

    var id: UInt32 { BridgedDeviceBasicInformation.id }

    static let descriptor = Catalog.standard.trait(TraitID(BridgedDeviceBasicInformation.id))
    /// The catalogue's revision of the cluster.
    static let revision = descriptor.map { UInt16(clamping: $0.revision) } ?? 3

    var metadata: ClusterInfo {
        ClusterInfo(revision: Self.revision, attributes: Set(identity + [Self.nodeLabel, Self.reachable, Self.uniqueID]).sorted(), dataVersion: 0)
    }

    /// The identity values of a device, by attribute ID, that this cluster has too.
    static func identityValues(of d: DeviceSnapshot) -> [UInt32: Value] {
        var values: [UInt32: Value] = [:]
        if let m = d.manufacturer { values[0x01] = .string(m) }
        if let m = d.model { values[0x03] = .string(m) }
        if let info = d.primaryType?.traits[TraitID(BasicInformation.id)] {
            for (id, v) in info.attributes { values[id.rawValue] = v }
        }
        let served = Set(descriptor?.attributes.map(\.id.rawValue) ?? [])
        return values.filter { served.contains($0.key) && $0.key != nodeLabel && $0.key != reachable && $0.key != uniqueID }
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        guard let d = shared.device(device) else { return .failure(StatusIB(.unsupportedEndpoint)) }
        switch attribute {
        case Self.nodeLabel: return .success(TLVElement(.utf8(Self.clip(d.name, 32))))
        case Self.uniqueID: return .success(TLVElement(.utf8(Self.uniqueID(of: d))))
        case Self.reachable: return .success(TLVElement(.bool(Self.isReachable(d))))
        default:
            guard identity.contains(attribute), let a = Self.descriptor?.attribute(AttributeID(attribute)) else {
                return .failure(StatusIB(.unsupportedAttribute))
            }
            var value = Self.identityValues(of: d)[attribute] ?? .null
            if case .string(let s) = value { value = .string(Self.clip(s, 32)) }
            guard let tlv = ValueConversion.tlv(value, type: a.type, nullable: a.nullable) else { return .failure(StatusIB(.failure)) }
            return .success(TLVElement(tlv))
        }
    }

    /// Online or partly online: the core sends commands then (offline and unknown it refuses).
    static func isReachable(_ d: DeviceSnapshot) -> Bool {
        switch d.sourceConnectivity.connectivityState {
        case .online, .partiallyOnline: true
        case .offline, .unknown: false
        }
    }

    /// The identity's UniqueID; else the device's ID when it fits the 32 bytes allowed; else a
    /// stable digest of the ID (FNV-1a, 64 bits, in hex) behind a prefix.
    static func uniqueID(of d: DeviceSnapshot) -> String {
        if case .string(let s)? = d.primaryType?.traits[TraitID(BasicInformation.id)]?[AttributeID(uniqueID)], !s.isEmpty, s.utf8.count <= 32 {
            return s
        }
        let id = d.id.rawValue
        if id.utf8.count <= 32 { return id }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        let hex = String(h, radix: 16)
        return "hearth-" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// At most `bytes` bytes of UTF-8, cut at a character boundary.
    static func clip(_ s: String, _ bytes: Int) -> String {
        if s.utf8.count <= bytes { return s }
        var out = ""
        for c in s {
            if out.utf8.count + String(c).utf8.count > bytes { break }
            out.append(c)
        }
        return out
    }
}

/// Fixed Label (0x0040, Matter Core Specification 9.8) on a bridged node endpoint: its
/// LabelList carries `"room": <room name>` when the device is in a room — the spec's way for a
/// bridge to say which bridged devices share a room (9.8, the cluster's first example).
struct RoomLabelCluster: ClusterServer {
    static let id: UInt32 = 0x0040
    static let labelList: UInt32 = 0x0000

    let shared: BridgeShared
    let device: DeviceID

    var id: UInt32 { Self.id }

    var metadata: ClusterInfo { ClusterInfo(revision: 1, attributes: [Self.labelList], dataVersion: 0) }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        guard attribute == Self.labelList else { return .failure(StatusIB(.unsupportedAttribute)) }
        guard let room = shared.roomName(of: device) else { return .success(TLVElement(.array([]))) }
        // LabelStruct: label (0) and value (1), each at most 16 bytes.
        return .success(TLVElement(.array([
            TLVElement(.structure([
                TLVElement(.context(0), .utf8("room")),
                TLVElement(.context(1), .utf8(BridgedInfoCluster.clip(room, 16))),
            ]))
        ])))
    }
}
