import Logging
import MatterCommissioning
import MatterInteraction
import MatterTLV

/// Operational Credentials (0x003E, Core Specification 11.18) on the root endpoint:
/// attestation with the installation's DAC/PAI, CSRRequest, AddTrustedRootCertificate,
/// AddNOC, UpdateNOC, UpdateFabricLabel, RemoveFabric, and the fabric-scoped lists.
struct OperationalCredentialsCluster: ClusterServer {
    static let clusterID: UInt32 = 0x003E
    let core: BridgeCore
    var id: UInt32 { Self.clusterID }

    var metadata: ClusterInfo {
        let commands: [UInt32] = [0, 2, 4, 6, 7, 9, 10, 11]
        return ClusterInfo(revision: 1, attributes: [0, 1, 2, 3, 4, 5], acceptedCommands: commands, generatedCommands: [1, 3, 5, 8],
                           dataVersion: 0, invokePrivileges: Dictionary(uniqueKeysWithValues: commands.map { ($0, .administer) }))
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        let state = core.commissioning.snapshot
        let accessing = core.sessionInfo(for: subject, state: state).fabricIndex
        // Fabric-scoped lists are read fabric-filtered: the accessing fabric's entries only.
        let own = state.fabrics.fabrics.filter { $0.index == accessing }
        switch attribute {
        case 0:  // NOCs (Administer to read)
            guard core.allows(subject, ConcreteClusterPath(endpoint: endpoint, cluster: id), .administer) else {
                return .failure(StatusIB(.unsupportedAccess))
            }
            return .success(.array(own.map { f in
                .structure([field(1, bytes: f.noc), f.icac.map { field(2, bytes: $0) } ?? nullField(2), field(fabricIndexTag, f.index)])
            }))
        case 1:  // Fabrics
            return .success(.array(own.map { f in
                .structure([field(1, bytes: f.rootPublicKey), field(2, f.vendorID), field(3, f.fabricID), field(4, f.nodeID),
                            field(5, f.label), field(fabricIndexTag, f.index)])
            }))
        case 2: return .success(anonymous(state.fabrics.capacity))
        case 3: return .success(anonymous(state.fabrics.fabrics.count))
        case 4: return .success(.array(state.fabrics.fabrics.map { TLVElement(.bytes($0.rootCertificate)) }))
        case 5: return .success(anonymous(accessing))
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }

    mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult {
        let core = self.core
        return .handling { () throws(CommissioningError) -> CommandResult in
            let f = try CommandFields(fields)
            let session = core.sessionInfo(for: subject)
            switch command {
            case 0:  // AttestationRequest
                let nonce = try f.bytes(0, maxLength: 32)
                guard nonce.count == 32 else { throw CommissioningError(.constraintError, "the attestation nonce must be 32 bytes") }
                let (elements, signature) = try core.commissioning.snapshot.attestationResponse(nonce: nonce, session: session)
                return .response(1, [field(0, bytes: elements), field(1, bytes: signature)])
            case 2:  // CertificateChainRequest
                let type = try f.uint(0, as: UInt8.self)
                return .response(3, [field(0, bytes: try core.commissioning.snapshot.certificateChain(type))])
            case 4:  // CSRRequest
                let nonce = try f.bytes(0, maxLength: 32)
                guard nonce.count == 32 else { throw CommissioningError(.constraintError, "the CSR nonce must be 32 bytes") }
                let forUpdate = try f.optionalBool(1) ?? false
                let (elements, signature) = try core.run { (s: inout CommissioningState) throws(CommissioningError) in
                    try s.csrResponse(nonce: nonce, isForUpdateNOC: forUpdate, session: session)
                }
                return .response(5, [field(0, bytes: elements), field(1, bytes: signature)])
            case 11:  // AddTrustedRootCertificate
                let root = try f.bytes(0, maxLength: 400)
                try core.run { (s: inout CommissioningState) throws(CommissioningError) in try s.addTrustedRootCertificate(root) }
                return .success
            case 6:  // AddNOC
                let noc = try f.bytes(0, maxLength: 400), icac = try f.optionalBytes(1, maxLength: 400), ipk = try f.bytes(2, maxLength: 16)
                let admin = try f.uint(3, as: UInt64.self), vendor = try f.uint(4, as: UInt16.self)
                let r = try core.run { (s: inout CommissioningState) throws(CommissioningError) in
                    try s.addNOC(noc: noc, icac: icac, ipk: ipk, caseAdminSubject: admin, adminVendorID: vendor, session: session)
                }
                core.logger.notice("Matter AddNOC", metadata: ["status": "\(r.statusCode)", "fabric": "\(r.fabricIndex.map { "\($0)" } ?? "-")",
                                                               "detail": "\(r.debugText)"])
                return Self.nocResponse(r)
            case 7:  // UpdateNOC
                let noc = try f.bytes(0, maxLength: 400), icac = try f.optionalBytes(1, maxLength: 400)
                let r = try core.run { (s: inout CommissioningState) throws(CommissioningError) in try s.updateNOC(noc: noc, icac: icac, session: session) }
                return Self.nocResponse(r)
            case 9:  // UpdateFabricLabel
                let label = try f.string(0)
                let r = try core.run { (s: inout CommissioningState) throws(CommissioningError) in try s.updateFabricLabel(label, session: session) }
                return Self.nocResponse(r)
            case 10:  // RemoveFabric
                let index = try f.uint(0, as: UInt8.self)
                guard (1...254).contains(index) else { throw CommissioningError(.constraintError, "fabric index \(index) is out of range") }
                let r = try core.run { (s: inout CommissioningState) throws(CommissioningError) in s.removeFabric(index) }
                core.logger.notice("Matter fabric removed by a controller", metadata: ["fabric": "\(index)", "status": "\(r.statusCode)"])
                return Self.nocResponse(r)
            default:
                return .status(StatusIB(.unsupportedCommand))
            }
        }
    }

    static func nocResponse(_ r: NOCResponse) -> CommandResult {
        var members = [field(0, r.statusCode.rawValue)]
        if let index = r.fabricIndex { members.append(field(1, index)) }
        if !r.debugText.isEmpty { members.append(field(2, String(r.debugText.prefix(128)))) }
        return .response(8, members)
    }
}
