import Crypto
public import MatterSecurity

/// One fabric this node belongs to (Core Specification 11.18.4.5 FabricDescriptorStruct, plus
/// what the node keeps privately: its operational key and the IPK).
public struct FabricInfo: Hashable, Sendable, CustomStringConvertible {
    public var index: FabricIndex
    /// The trusted root (RCAC), NOC and optional ICAC in Matter TLV form, as the commissioner sent them.
    public var rootCertificate: [UInt8]
    public var noc: [UInt8]
    public var icac: [UInt8]?
    /// The raw P-256 private key (32 bytes) the NOC certifies.
    public var operationalKey: [UInt8]
    /// Group key set 0's epoch key (AddNOC's IPKValue, 16 bytes).
    public var epochIPK: [UInt8]
    public var vendorID: UInt16
    public var label: String
    // Derived from the certificates when the fabric is made.
    public var rootPublicKey: [UInt8]
    public var fabricID: UInt64
    public var nodeID: UInt64
    public var compressedFabricID: UInt64

    /// Builds the entry from a validated chain.
    /// - Throws: when the certificates do not parse or carry no node/fabric ID.
    public init(index: FabricIndex, rootCertificate: [UInt8], noc: [UInt8], icac: [UInt8]?, operationalKey: [UInt8],
                epochIPK: [UInt8], vendorID: UInt16, label: String) throws(MatterSecurityError) {
        let root = try MatterCertificate(tlv: rootCertificate), leaf = try MatterCertificate(tlv: noc)
        self.index = index
        self.rootCertificate = rootCertificate
        self.noc = noc
        self.icac = icac
        self.operationalKey = operationalKey
        self.epochIPK = epochIPK
        self.vendorID = vendorID
        self.label = label
        rootPublicKey = root.publicKey
        guard let node = leaf.subject.nodeID, let fabric = leaf.subject.fabricID else {
            throw MatterSecurityError.invalidPayload
        }
        nodeID = node
        fabricID = fabric
        compressedFabricID = try Fabric.compressedFabricID(rootPublicKey: root.publicKey, fabricID: fabric)
    }

    /// What CASE needs to answer Sigma1 on this fabric.
    public func credentials() throws(MatterSecurityError) -> FabricCredentials {
        let key: P256.Signing.PrivateKey
        do { key = try P256.Signing.PrivateKey(rawRepresentation: operationalKey) } catch { throw .verificationFailed }
        return try FabricCredentials(
            fabricIndex: index, root: try MatterCertificate(tlv: rootCertificate), icac: try icac.map { (b) throws(MatterSecurityError) in try MatterCertificate(tlv: b) },
            noc: try MatterCertificate(tlv: noc), operationalKey: key, epochIPK: epochIPK)
    }

    /// The operational DNS-SD instance name, `<compressed fabric ID>-<node ID>`.
    public var operationalInstanceName: String {
        Fabric.operationalInstanceName(compressedFabricID: compressedFabricID, nodeID: nodeID)
    }

    /// Never prints key material.
    public var description: String {
        "fabric \(index) (fabric ID 0x\(String(fabricID, radix: 16)), node 0x\(String(nodeID, radix: 16)), vendor 0x\(String(vendorID, radix: 16)), label '\(label)')"
    }
}

/// The node's fabrics (11.18.4.5 Fabrics, 11.18.4.2 NOCs, 11.18.4.6 TrustedRootCertificates).
public struct FabricTable: Hashable, Sendable {
    public private(set) var fabrics: [FabricInfo] = []
    /// SupportedFabrics (11.18.4.3): 5…254.
    public let capacity: Int

    public init(capacity: Int = 16, fabrics: [FabricInfo] = []) {
        self.capacity = max(5, min(254, capacity))
        self.fabrics = fabrics.sorted { $0.index < $1.index }
    }

    public subscript(index: FabricIndex) -> FabricInfo? { fabrics.first { $0.index == index } }

    public var isFull: Bool { fabrics.count >= capacity }

    /// The lowest unused index in 1…254.
    public func nextIndex() -> FabricIndex? {
        let used = Set(fabrics.map(\.index))
        return (1...254).first { !used.contains($0) }
    }

    /// The fabric with this root key and fabric ID, if any (the FabricConflict check).
    public func fabric(rootPublicKey: [UInt8], fabricID: UInt64) -> FabricInfo? {
        fabrics.first { $0.rootPublicKey == rootPublicKey && $0.fabricID == fabricID }
    }

    /// Adds or replaces the fabric with the same index.
    public mutating func upsert(_ fabric: FabricInfo) {
        fabrics.removeAll { $0.index == fabric.index }
        fabrics.append(fabric)
        fabrics.sort { $0.index < $1.index }
    }

    @discardableResult
    public mutating func remove(_ index: FabricIndex) -> FabricInfo? {
        guard let i = fabrics.firstIndex(where: { $0.index == index }) else { return nil }
        return fabrics.remove(at: i)
    }
}
