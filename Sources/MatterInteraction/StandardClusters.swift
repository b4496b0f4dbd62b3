import MatterTLV
import HomeModel

/// Basic Information (0x0028, Matter Core Specification 11.1) for the root endpoint: a stored
/// cluster with NodeLabel and Location writable (Manage privilege).
public enum BasicInformation {
    public static let id: UInt32 = 0x0028

    /// The mandatory attributes of Matter 1.3 (matter-data-model.md, "Basic Information").
    public static func cluster(vendorName: String, vendorID: UInt16, productName: String, productID: UInt16, nodeLabel: String = "",
                               location: String = "XX", hardwareVersion: UInt16 = 1, softwareVersion: UInt32 = 1,
                               softwareVersionString: String = "1.0", uniqueID: String) -> AttributeStoreCluster {
        func u<T: BinaryInteger>(_ v: T) -> TLVElement { TLVElement(.unsigned(UInt64(v))) }
        func s(_ v: String) -> TLVElement { TLVElement(.utf8(v)) }
        let values: [UInt32: TLVElement] = [
            0x00: u(17),  // DataModelRevision (Matter 1.3)
            0x01: s(vendorName), 0x02: u(vendorID), 0x03: s(productName), 0x04: u(productID),
            0x05: s(nodeLabel), 0x06: s(location), 0x07: u(hardwareVersion), 0x08: s(String(hardwareVersion)),
            0x09: u(softwareVersion), 0x0A: s(softwareVersionString), 0x12: s(uniqueID),
            // CapabilityMinima: CaseSessionsPerFabric 3, SubscriptionsPerFabric 3 (the spec's minima).
            0x13: .structure([TLVElement(.context(0), .unsigned(3)), TLVElement(.context(1), .unsigned(3))]),
            0x15: u(0x0103_0000),  // SpecificationVersion 1.3.0
            0x16: u(1),  // MaxPathsPerInvoke
        ]
        return AttributeStoreCluster(id: id, revision: catalogRevision(id, fallback: 3), values: values, writable: [0x05, 0x06])
    }
}

/// Bridged Device Basic Information (0x0039, Matter Core Specification 9.13) for a bridged
/// endpoint: NodeLabel writable, Reachable, UniqueID.
public enum BridgedDeviceBasicInformation {
    public static let id: UInt32 = 0x0039
    public static let reachable: UInt32 = 0x11

    public static func cluster(nodeLabel: String, uniqueID: String, reachable: Bool = true, vendorName: String? = nil,
                               productName: String? = nil) -> AttributeStoreCluster {
        var values: [UInt32: TLVElement] = [0x05: TLVElement(.utf8(nodeLabel)), 0x11: TLVElement(.bool(reachable)), 0x12: TLVElement(.utf8(uniqueID))]
        if let vendorName { values[0x01] = TLVElement(.utf8(vendorName)) }
        if let productName { values[0x03] = TLVElement(.utf8(productName)) }
        return AttributeStoreCluster(id: id, revision: catalogRevision(id, fallback: 3), values: values, writable: [0x05])
    }
}

/// A cluster's revision as the repository's catalogue records it.
func catalogRevision(_ cluster: UInt32, fallback: UInt16) -> UInt16 {
    Catalog.standard.trait(TraitID(cluster)).map { UInt16(clamping: $0.revision) } ?? fallback
}
