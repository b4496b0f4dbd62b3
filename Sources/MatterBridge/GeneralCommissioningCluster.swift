import Logging
import MatterCommissioning
import MatterInteraction
import MatterTLV

/// General Commissioning (0x0030, Core Specification 11.10) on the root endpoint: the
/// fail-safe, the regulatory configuration and CommissioningComplete, through
/// ``CommissioningState``.
struct GeneralCommissioningCluster: ClusterServer {
    static let clusterID: UInt32 = 0x0030
    let core: BridgeCore
    var id: UInt32 { Self.clusterID }

    var metadata: ClusterInfo {
        ClusterInfo(revision: 1, attributes: [0, 1, 2, 3, 4], acceptedCommands: [0, 2, 4], generatedCommands: [1, 3, 5], dataVersion: 0,
                    writableAttributes: [0], writePrivileges: [0: .administer],
                    invokePrivileges: [0: .administer, 2: .administer, 4: .administer])
    }

    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        let state = core.commissioning.snapshot
        let c = state.configuration
        switch attribute {
        case 0: return .success(anonymous(state.breadcrumb))
        case 1: return .success(.structure([field(0, c.failSafeExpiryLengthSeconds), field(1, c.maxCumulativeFailsafeSeconds)]))
        case 2: return .success(anonymous(state.regulatoryConfig.rawValue))
        case 3: return .success(anonymous(c.locationCapability.rawValue))
        case 4: return .success(TLVElement(.bool(true)))  // SupportsConcurrentConnection (IP: always)
        default: return .failure(StatusIB(.unsupportedAttribute))
        }
    }

    mutating func write(_ attribute: UInt32, _ operation: WriteOperation, endpoint: UInt16, subject: Subject) -> StatusIB {
        guard attribute == 0 else { return StatusIB(.unsupportedWrite) }
        guard case .replace(let value) = operation, let breadcrumb = try? value.uint(as: UInt64.self) else {
            return StatusIB(.invalidDataType)
        }
        do throws(CommissioningError) {
            try core.run { (s: inout CommissioningState) throws(CommissioningError) in s.setBreadcrumb(breadcrumb) }
        } catch {
            return StatusIB(IMStatus(rawValue: error.status.rawValue))
        }
        return StatusIB(.success)
    }

    mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult {
        let core = self.core
        return .handling { () throws(CommissioningError) -> CommandResult in
            let f = try CommandFields(fields)
            let response: CommissioningResponse
            let responseID: UInt32
            switch command {
            case 0:  // ArmFailSafe
                let seconds = try f.uint(0, as: UInt16.self), breadcrumb = try f.uint(1, as: UInt64.self)
                let session = core.sessionInfo(for: subject)
                response = try core.run { (s: inout CommissioningState) throws(CommissioningError) in
                    s.armFailSafe(expiryLengthSeconds: seconds, breadcrumb: breadcrumb, session: session, now: .now)
                }
                responseID = 1
            case 2:  // SetRegulatoryConfig
                let location = try f.uint(0, as: UInt8.self), country = try f.string(1), breadcrumb = try f.uint(2, as: UInt64.self)
                response = try core.run { (s: inout CommissioningState) throws(CommissioningError) in
                    try s.setRegulatoryConfig(location, countryCode: country, breadcrumb: breadcrumb)
                }
                responseID = 3
            case 4:  // CommissioningComplete
                let session = core.sessionInfo(for: subject)
                response = try core.run { (s: inout CommissioningState) throws(CommissioningError) in s.commissioningComplete(session: session) }
                responseID = 5
                if response.errorCode == .ok {
                    core.logger.notice("Matter commissioning complete", metadata: ["fabric": "\(session.fabricIndex)", "node": "\(session.peerNodeID)"])
                }
            default:
                return .status(StatusIB(.unsupportedCommand))
            }
            return .response(responseID, [field(0, response.errorCode.rawValue), field(1, response.debugText)])
        }
    }
}
