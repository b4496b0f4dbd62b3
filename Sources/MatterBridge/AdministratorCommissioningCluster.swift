import Logging
import MatterCommissioning
import MatterInteraction
import MatterTLV

/// Administrator Commissioning (0x003C, Core Specification 11.19) on the root endpoint, with
/// the Basic feature: OpenCommissioningWindow (a verifier), OpenBasicCommissioningWindow,
/// RevokeCommissioning (all timed, Administer), WindowStatus, AdminFabricIndex, AdminVendorId.
struct AdministratorCommissioningCluster: ClusterServer {
    static let clusterID: UInt32 = 0x003C
    let core: BridgeCore
    var id: UInt32 { Self.clusterID }

    var metadata: ClusterInfo {
        ClusterInfo(revision: 1, featureMap: 1, attributes: [0, 1, 2], acceptedCommands: [0, 1, 2], dataVersion: 0, timedCommands: [0, 1, 2],
                    invokePrivileges: [0: .administer, 1: .administer, 2: .administer])
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        let window = core.commissioning.snapshot.window
        switch attribute {
        case 0: return .success(anonymous(window?.status.rawValue ?? WindowStatus.windowNotOpen.rawValue))
        case 1: return .success(window?.adminFabricIndex.map { anonymous($0) } ?? TLVElement(.null))
        case 2: return .success(window?.adminVendorID.map { anonymous($0) } ?? TLVElement(.null))
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }

    mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult {
        let core = self.core
        return .handling { () throws(CommissioningError) -> CommandResult in
            let f = try CommandFields(fields)
            let session = core.sessionInfo(for: subject)
            switch command {
            case 0:  // OpenCommissioningWindow
                let timeout = try f.uint(0, as: UInt16.self), verifier = try f.bytes(1, maxLength: 97)
                let discriminator = try f.uint(2, as: UInt16.self), iterations = try f.uint(3, as: UInt32.self), salt = try f.bytes(4, maxLength: 32)
                try core.run { (s: inout CommissioningState) throws(CommissioningError) in
                    try s.openCommissioningWindow(timeoutSeconds: timeout, verifier: verifier, discriminator: discriminator, iterations: iterations,
                                                  salt: salt, session: session, now: .now)
                }
                core.logger.notice("Matter commissioning window opened by a controller", metadata: ["fabric": "\(session.fabricIndex)", "seconds": "\(timeout)"])
            case 1:  // OpenBasicCommissioningWindow
                let timeout = try f.uint(0, as: UInt16.self)
                try core.run { (s: inout CommissioningState) throws(CommissioningError) in
                    try s.openBasicCommissioningWindow(timeoutSeconds: timeout, session: session, now: .now)
                }
            case 2:  // RevokeCommissioning
                try core.run { (s: inout CommissioningState) throws(CommissioningError) in try s.revokeCommissioning() }
            default:
                return .status(StatusIB(.unsupportedCommand))
            }
            return .success
        }
    }
}
