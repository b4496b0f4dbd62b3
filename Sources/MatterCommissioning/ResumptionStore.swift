/// One CASE session a peer may resume (Core Specification 4.14.2.2.1, "Session Resumption"):
/// the resumption ID the node issued, the session's shared secret, the peer and its fabric.
public struct StoredResumption: Hashable, Sendable {
    public var resumptionID: [UInt8]
    public var sharedSecret: [UInt8]
    public var peerNodeID: UInt64
    public var fabricIndex: UInt8

    public init(resumptionID: [UInt8], sharedSecret: [UInt8], peerNodeID: UInt64, fabricIndex: UInt8) {
        self.resumptionID = resumptionID
        self.sharedSecret = sharedSecret
        self.peerNodeID = peerNodeID
        self.fabricIndex = fabricIndex
    }
}

/// Where a node keeps its CASE resumption records, so a controller resumes its session
/// (Sigma2_Resume) after a restart instead of a full CASE. The records hold session secrets:
/// storage keeps them with the operational keys (HomeStorage's `MatterStateStore`, 0600).
public protocol ResumptionStore: Sendable {
    /// Every record, oldest first.
    func loadResumptions() throws(MatterStoreError) -> [StoredResumption]
    /// Keeps a record: it replaces the peer's earlier one on the same fabric, and only the
    /// newest `keepPerFabric` records of its fabric stay.
    func saveResumption(_ record: StoredResumption, keepPerFabric: Int) throws(MatterStoreError)
    /// Deletes the records of every fabric not in `fabrics` (a removed or rolled-back fabric).
    func deleteResumptions(keeping fabrics: Set<UInt8>) throws(MatterStoreError)
}
