import Logging
import MatterCommissioning
import MatterInteraction
import MatterMessaging
import MatterSecurity
import Synchronization

/// The Secure Channel side of the bridge: PASE while a commissioning window is open (the
/// onboarding verifier, or the one OpenCommissioningWindow sent), CASE with the fabric table's
/// operational credentials (and resumption of sessions it established), CloseSession. Each
/// established session is installed in the message layer and given its IM subject.
///
/// Runs on one task (``run(_:)``), so its handshake table needs no lock.
final class SessionManager<C: Clock>: Sendable where C.Duration == Duration {
    let node: MatterUDPNode<C>
    let server: InteractionServer<C>
    let core: BridgeCore
    let onboardingVerifier: Spake2pVerifier
    /// Where CASE resumption records outlive a restart (nil: in memory only).
    let resumptionStore: (any ResumptionStore)?
    /// Resumption records kept per fabric (the newest; one per peer).
    static var resumptionsPerFabric: Int { 16 }
    /// The sessions peers may resume (the store's copy, kept current with it). A lock: the
    /// service drops a removed fabric's records from its own task.
    private let resumptions = Mutex<[CASEResumptionRecord]>([])
    /// Failed PASE attempts in the current window (the window closes after 20, 5.4.2.3).
    static var paseAttemptLimit: Int { 20 }
    /// Secure sessions kept at most; the oldest CASE session goes first.
    static var sessionLimit: Int { 48 }

    static var ownParameters: SessionParameters {
        SessionParameters(idleInterval: 500, activeInterval: 300, activeThreshold: 4000, dataModelRevision: 17, interactionModelRevision: 11,
                          specificationVersion: 0x0103_0000, maxPathsPerInvoke: 1)
    }

    init(node: MatterUDPNode<C>, server: InteractionServer<C>, core: BridgeCore, onboardingVerifier: Spake2pVerifier,
         resumptionStore: (any ResumptionStore)? = nil) {
        self.node = node
        self.server = server
        self.core = core
        self.onboardingVerifier = onboardingVerifier
        self.resumptionStore = resumptionStore
        if let store = resumptionStore {
            do throws(MatterStoreError) {
                let loaded = try store.loadResumptions().map {
                    CASEResumptionRecord(resumptionID: $0.resumptionID, sharedSecret: $0.sharedSecret, peerNodeID: $0.peerNodeID, fabricIndex: $0.fabricIndex)
                }
                resumptions.withLock { $0 = loaded }
                if !loaded.isEmpty { core.logger.info("Matter CASE resumption records loaded", metadata: ["count": "\(loaded.count)"]) }
            } catch {
                core.logger.error("Matter: \(error); controllers run a full CASE")
            }
        }
    }

    private enum Handshake {
        case pase(PASEResponder)
        case `case`(CASEResponder)
    }

    private struct State {
        var handshakes: [ExchangeKey: (machine: Handshake, started: ContinuousClock.Instant)] = [:]
        var failedPASE = 0
    }

    /// Handles Secure Channel events until the stream ends.
    func run(_ events: AsyncStream<ExchangeEvent>) async {
        var state = State()
        for await event in events {
            guard case .message(let m) = event else { continue }
            prune(&state)
            guard let opcode = MatterSecurity.SecureChannelOpcode(rawValue: m.opcode) else { continue }
            if case .secure(let id) = m.exchange.session {
                // On a secure session only CloseSession matters here (acks are the layer's).
                if opcode == .statusReport, let report = try? MatterSecurity.StatusReport(decoding: m.payload),
                    report.protocolCode == MatterSecurity.StatusReport.SecureChannelCode.closeSession.rawValue
                {
                    core.logger.info("Matter session closed by the peer", metadata: ["session": "\(id)"])
                    closeSession(UInt64(id))
                }
                node.close(m.exchange)
                continue
            }
            switch opcode {
            case .pbkdfParamRequest:
                guard let responder = paseResponder(&state) else {
                    core.logger.info("Matter PASE refused: no commissioning window is open", metadata: ["peer": "\(m.from)"])
                    try? node.send(on: m.exchange, opcode: MatterSecurity.SecureChannelOpcode.statusReport.rawValue,
                                   payload: MatterSecurity.StatusReport(.failure, .invalidParameter).encoded, protocolID: .secureChannel)
                    node.close(m.exchange)
                    continue
                }
                state.handshakes[m.exchange] = (.pase(responder), .now)
            case .sigma1:
                let table = core.commissioning.snapshot.fabrics.fabrics
                let fabrics = table.compactMap { try? $0.credentials() }
                // Only records of fabrics still there (a removed fabric's peers cannot resume).
                let present = Set(table.map(\.index))
                let records = resumptions.withLock { r in
                    r.removeAll { !present.contains($0.fabricIndex) }
                    return r
                }
                let responder = CASEResponder(fabrics: fabrics, localSessionID: freeSessionID(), sessionParameters: Self.ownParameters,
                                              resumptions: records)
                state.handshakes[m.exchange] = (.case(responder), .now)
            default:
                break
            }
            guard let entry = state.handshakes[m.exchange] else { continue }
            var effects: [HandshakeEffect]
            var resumed = false
            switch entry.machine {
            case .pase(var machine):
                effects = machine.receive(opcode, m.payload)
                state.handshakes[m.exchange] = (.pase(machine), entry.started)
            case .case(var machine):
                effects = machine.receive(opcode, m.payload)
                state.handshakes[m.exchange] = (.case(machine), entry.started)
            }
            for effect in effects {
                switch effect {
                case .send(let message):
                    if message.opcode == .sigma2Resume { resumed = true }
                    do {
                        try node.send(on: m.exchange, opcode: message.opcode.rawValue, payload: message.payload, protocolID: .secureChannel)
                    } catch {
                        core.logger.warning("Matter handshake reply not sent", metadata: ["error": "\(error)"])
                    }
                case .established(let session):
                    state.handshakes[m.exchange] = nil
                    install(session, from: m.from, resumed: resumed, state: &state)
                    node.close(m.exchange)
                case .failed(let error):
                    state.handshakes[m.exchange] = nil
                    node.close(m.exchange)
                    if case .pase = entry.machine { paseFailed(&state, error, peer: m.from) } else {
                        core.logger.warning("Matter CASE failed", metadata: ["peer": "\(m.from)", "error": "\(error)"])
                    }
                }
            }
        }
    }

    /// A PASE responder for the open window, or nil when none is open.
    private func paseResponder(_ state: inout State) -> PASEResponder? {
        guard let window = core.commissioning.snapshot.window else { return nil }
        switch window.method {
        case .basic:
            return PASEResponder(verifier: onboardingVerifier, salt: core.onboarding.salt, iterations: core.onboarding.iterations,
                                 localSessionID: freeSessionID(), sessionParameters: Self.ownParameters)
        case .enhanced(let verifier, let salt, let iterations, _):
            return PASEResponder(verifier: verifier, salt: salt, iterations: iterations, localSessionID: freeSessionID(),
                                 sessionParameters: Self.ownParameters)
        }
    }

    private func paseFailed(_ state: inout State, _ error: MatterSecurityError, peer: PeerAddress) {
        state.failedPASE += 1
        core.logger.warning("Matter PASE failed", metadata: ["peer": "\(peer)", "error": "\(error)", "attempt": "\(state.failedPASE)"])
        if state.failedPASE >= Self.paseAttemptLimit {
            state.failedPASE = 0
            core.logger.error("Matter commissioning window closed after \(Self.paseAttemptLimit) failed PASE attempts")
            _ = try? core.run { (s: inout CommissioningState) throws(CommissioningError) in try s.revokeCommissioning() }
        }
    }

    private func freeSessionID() -> UInt16 {
        (try? node.withLayer { l, _ throws(MessagingError) in (l.freeSessionID(), []) }) ?? UInt16.random(in: 1...UInt16.max)
    }

    /// Installs a session PASE or CASE established and gives it its subject.
    private func install(_ session: EstablishedSession, from peer: PeerAddress, resumed: Bool = false, state: inout State) {
        var localNodeID: UInt64 = 0
        var fabricIndex: FabricIndex = 0
        if session.kind == .case {
            guard let record = session.resumption, let fabric = core.commissioning.snapshot.fabrics[record.fabricIndex] else {
                core.logger.warning("Matter CASE session without a fabric dropped")
                return
            }
            localNodeID = fabric.nodeID
            fabricIndex = fabric.index
            resumptions.withLock { r in
                r.removeAll { $0.peerNodeID == record.peerNodeID && $0.fabricIndex == record.fabricIndex }
                r.append(record)
                let ofFabric = r.filter { $0.fabricIndex == record.fabricIndex }
                if ofFabric.count > Self.resumptionsPerFabric {
                    let dropped = Set(ofFabric.prefix(ofFabric.count - Self.resumptionsPerFabric).map(\.resumptionID))
                    r.removeAll { dropped.contains($0.resumptionID) }
                }
            }
            if let store = resumptionStore {
                do throws(MatterStoreError) {
                    try store.saveResumption(StoredResumption(resumptionID: record.resumptionID, sharedSecret: record.sharedSecret,
                                                              peerNodeID: record.peerNodeID, fabricIndex: record.fabricIndex),
                                             keepPerFabric: Self.resumptionsPerFabric)
                } catch {
                    core.logger.warning("Matter: \(error); this session resumes only until a restart")
                }
            }
        } else {
            state.failedPASE = 0
        }
        let mrp = session.peerParameters.map {
            MRPParameters(idleInterval: .milliseconds(Int($0.idleInterval ?? 500)), activeInterval: .milliseconds(Int($0.activeInterval ?? 300)),
                          activeThreshold: .milliseconds(Int($0.activeThreshold ?? 4000)))
        } ?? .default
        let parameters = SecureSessionParameters(
            role: .responder, i2rKey: session.keys.i2r, r2iKey: session.keys.r2i, localSessionID: session.localSessionID,
            peerSessionID: session.peerSessionID, localNodeID: localNodeID, peerNodeID: session.peerNodeID ?? 0, peerAddress: peer, peerMRP: mrp)
        evictIfFull()
        do {
            let key = try node.addSecureSession(parameters)
            let id = UInt64(session.localSessionID)
            let record = SessionRecord(key: key, kind: session.kind == .pase ? .pase : .case, fabricIndex: fabricIndex,
                                       peerNodeID: session.peerNodeID ?? 0, attestationChallenge: session.keys.attestationChallenge, established: .now)
            core.addSession(id, record)
            server.setSubject(BridgeCore.subject(id, record), for: key)
            if resumed { core.countResumed() }
            core.logger.info("Matter \(session.kind == .pase ? "PASE" : resumed ? "CASE (resumed, Sigma2_Resume)" : "CASE") session established",
                             metadata: ["peer": "\(peer)", "session": "\(id)", "fabric": "\(fabricIndex)",
                                        "node": "0x\(String(session.peerNodeID ?? 0, radix: 16))", "resumed": "\(resumed)"])
        } catch {
            core.logger.warning("Matter session refused", metadata: ["error": "\(error)"])
        }
    }

    private func evictIfFull() {
        let sessions = core.allSessions
        guard sessions.count >= Self.sessionLimit else { return }
        let oldest = sessions.filter { $0.1.kind == .case }.min { $0.1.established < $1.1.established } ?? sessions.min { $0.1.established < $1.1.established }
        if let oldest { closeSession(oldest.0) }
    }

    /// Forgets the resumption records of every fabric not in `fabrics` (removed or rolled back),
    /// in memory and in the store, so their peers cannot resume into a fabric that reuses the index.
    func forgetResumptions(keeping fabrics: Set<UInt8>) {
        let dropped = resumptions.withLock { r in
            let before = r.count
            r.removeAll { !fabrics.contains($0.fabricIndex) }
            return before - r.count
        }
        guard let store = resumptionStore else { return }
        do throws(MatterStoreError) {
            try store.deleteResumptions(keeping: fabrics)
        } catch {
            core.logger.error("Matter: \(error)")
        }
        if dropped > 0 { core.logger.info("Matter CASE resumption records of removed fabrics deleted", metadata: ["count": "\(dropped)"]) }
    }

    /// Ends a session: out of the message layer, the IM engine and the fail-safe.
    func closeSession(_ id: UInt64) {
        guard let record = core.removeSession(id) else { return }
        server.setSubject(nil, for: record.key)
        try? node.withLayer { l, _ throws(MessagingError) in (l.removeSession(record.key), []) }
        _ = try? core.run { (s: inout CommissioningState) throws(CommissioningError) in s.sessionClosed(id: id) }
    }

    /// Handshakes a peer abandoned are forgotten after a minute.
    private func prune(_ state: inout State) {
        let limit = ContinuousClock.now - .seconds(60)
        state.handshakes = state.handshakes.filter { $0.value.started > limit }
    }
}
