import Logging
import MatterCommissioning
import MatterInteraction
import MatterMessaging
import MatterSecurity
import MatterTLV
import Synchronization

/// One established secure session, as the root clusters and the ACL need to know it.
struct SessionRecord: Sendable {
    enum Kind: Sendable { case pase, `case` }
    var key: SessionKey
    var kind: Kind
    var fabricIndex: FabricIndex
    var peerNodeID: UInt64
    var attestationChallenge: [UInt8]
    var established: ContinuousClock.Instant
}

/// What the root clusters share with the service: the commissioning state's owner, the session
/// table and a way to ask for a resync (advertisements, sessions, data versions). Never calls
/// out while holding a lock; the resync runs on the service's own task.
final class BridgeCore: Sendable {
    let commissioning: CommissioningNode
    let onboarding: OnboardingSecrets
    let configuration: MatterBridgeConfiguration
    let logger: Logger
    let started = ContinuousClock.now
    let rebootCount: UInt16
    private let sessions = Mutex<[UInt64: SessionRecord]>([:])
    private let resumed = Mutex(0)
    private let signal: AsyncStream<[CommissioningEvent]>.Continuation
    let signals: AsyncStream<[CommissioningEvent]>

    init(commissioning: CommissioningNode, onboarding: OnboardingSecrets, configuration: MatterBridgeConfiguration, rebootCount: UInt16,
         logger: Logger) {
        self.commissioning = commissioning
        self.onboarding = onboarding
        self.configuration = configuration
        self.rebootCount = rebootCount
        self.logger = logger
        (signals, signal) = AsyncStream<[CommissioningEvent]>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Runs a commissioning command, then asks for a resync with its events (also after a
    /// refusal: RevokeCommissioning expires the fail-safe before answering WindowNotOpen).
    func run<T: Sendable>(_ body: (inout CommissioningState) throws(CommissioningError) -> T) throws(CommissioningError) -> T {
        do throws(CommissioningError) {
            let (result, events) = try commissioning.run(body)
            signal.yield(events)
            return result
        } catch {
            signal.yield([])
            throw error
        }
    }

    /// Asks the service to resync without a command (time passed, a session ended).
    func resync(_ events: [CommissioningEvent] = []) { signal.yield(events) }

    func finish() { signal.finish() }

    /// CASE sessions resumed (Sigma2_Resume) since start.
    var resumedSessions: Int { resumed.withLock { $0 } }
    func countResumed() { resumed.withLock { $0 += 1 } }

    // MARK: Sessions

    func addSession(_ id: UInt64, _ record: SessionRecord) { sessions.withLock { $0[id] = record } }
    @discardableResult
    func removeSession(_ id: UInt64) -> SessionRecord? { sessions.withLock { $0.removeValue(forKey: id) } }
    func session(_ id: UInt64) -> SessionRecord? { sessions.withLock { $0[id] } }
    var allSessions: [(UInt64, SessionRecord)] { sessions.withLock { $0.map { ($0.key, $0.value) } } }

    /// The IM subject of a session.
    static func subject(_ id: UInt64, _ r: SessionRecord) -> Subject {
        Subject(authMode: r.kind == .pase ? .pase : .case, fabricIndex: r.fabricIndex, nodeID: r.peerNodeID, sessionID: id)
    }

    /// The commissioning logic's view of the session a request came on. A PASE session takes
    /// the fabric its AddNOC made (11.18.6.8: the accessing fabric is then the new one).
    func sessionInfo(for subject: Subject, state: CommissioningState? = nil) -> SessionInfo {
        let record = session(subject.sessionID)
        var fabric = subject.fabricIndex
        if subject.authMode == .pase, let failSafe = (state ?? commissioning.snapshot).failSafe, failSafe.sessionID == subject.sessionID {
            fabric = failSafe.fabricIndex
        }
        return SessionInfo(id: subject.sessionID, authMode: subject.authMode == .pase ? .pase : .case, fabricIndex: fabric,
                           peerNodeID: subject.nodeID, attestationChallenge: record?.attestationChallenge ?? [])
    }

    /// The accessing fabric of a request (0: none).
    func accessingFabric(_ subject: Subject) -> FabricIndex { sessionInfo(for: subject).fabricIndex }

    // MARK: Access control (9.10.5)

    /// The ACL as the IM engine's access checker: a PASE session commissioning the node is an
    /// administrator (6.6.2.9); a CASE session gets what its fabric's entries grant.
    func allows(_ subject: Subject, _ path: ConcreteClusterPath, _ privilege: MatterInteraction.Privilege,
                deviceTypes: [UInt32] = []) -> Bool {
        switch subject.authMode {
        case .pase:
            return session(subject.sessionID) != nil
        case .group:
            return false
        case .case:
            guard let required = MatterCommissioning.Privilege(rawValue: privilege.rawValue) else { return false }
            let descriptor = SubjectDescriptor(fabricIndex: subject.fabricIndex, authMode: .case, subject: subject.nodeID)
            return commissioning.snapshot.isGranted(required, to: descriptor,
                                                    on: RequestPath(endpoint: path.endpoint, cluster: path.cluster, deviceTypes: deviceTypes))
        }
    }
}

/// The access checker the IM engine asks: the ACL of the commissioning state, with the device
/// types of the endpoint for device-type targets.
struct BridgeAccessChecker: AccessChecker {
    let core: BridgeCore
    let node: MatterNode

    func allows(_ subject: Subject, _ path: ConcreteClusterPath, _ privilege: MatterInteraction.Privilege) -> Bool {
        var types: [UInt32] = []
        if subject.authMode == .case,
            case .success(let list) = node.read(ConcreteAttributePath(endpoint: path.endpoint, cluster: DescriptorCluster.id,
                                                                      attribute: DescriptorCluster.deviceTypeList), subject: subject)
        {
            types = (list.members ?? []).compactMap { try? $0.member(.context(0)).uint(as: UInt32.self) }
        }
        return core.allows(subject, path, privilege, deviceTypes: types)
    }
}
