import Crypto

/// The device's side of PASE (Core Specification 4.14.1): a pure state machine. Feed it each
/// Secure Channel message that arrives on the PASE exchange; carry out the effects it returns.
///
/// ```swift
/// var pase = PASEResponder(verifier: stored, salt: salt, iterations: 1000, localSessionID: 1)
/// for effect in pase.receive(opcode, payload) { … }   // .send, then .established or .failed
/// ```
public struct PASEResponder: HandshakeStateMachine {
    enum State: Sendable {
        case awaitingRequest
        case awaitingPake1(context: [UInt8], request: PBKDFParamRequest)
        case awaitingPake3(Spake2pVerifierSession, request: PBKDFParamRequest)
        case finished
    }

    let verifier: Spake2pVerifier
    let salt: [UInt8]
    let iterations: Int
    let localSessionID: UInt16
    let sessionParameters: SessionParameters?
    private(set) var state = State.awaitingRequest

    /// - Parameters:
    ///   - verifier: (w0, L) from the passcode, derived with `salt` and `iterations`.
    ///   - localSessionID: the session ID the new session will have on this side (non-zero).
    public init(verifier: Spake2pVerifier, salt: [UInt8], iterations: Int, localSessionID: UInt16,
                sessionParameters: SessionParameters? = nil) {
        self.verifier = verifier
        self.salt = salt
        self.iterations = iterations
        self.localSessionID = localSessionID
        self.sessionParameters = sessionParameters
    }

    /// Whether the handshake ended (either way).
    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    public mutating func abandon() { state = .finished }

    public mutating func step(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) throws(MatterSecurityError) -> [HandshakeEffect] {
        switch (state, opcode) {
        case (_, .statusReport):
            let report = try StatusReport(decoding: payload)
            state = .finished
            return [.failed(.protocolViolation("PASE aborted by the peer: status \(report.generalCode)/\(report.protocolCode)"))]
        case (.awaitingRequest, .pbkdfParamRequest):
            let request = try PBKDFParamRequest(decoding: payload)
            guard request.passcodeID == 0 else { throw .protocolViolation("PASE passcode ID \(request.passcodeID) is not 0") }
            let response = PBKDFParamResponse(
                initiatorRandom: request.initiatorRandom, responderRandom: randomBytes(32), responderSessionID: localSessionID,
                iterations: request.hasPBKDFParameters ? nil : UInt32(iterations),
                salt: request.hasPBKDFParameters ? nil : salt, sessionParameters: sessionParameters)
            let responseBytes = try response.encoded()
            state = .awaitingPake1(context: PASE.context(request: payload, response: responseBytes), request: request)
            return [.send(SecureChannelMessage(.pbkdfParamResponse, responseBytes))]
        case (.awaitingPake1(let context, let request), .pake1):
            let pake1 = try Pake1(decoding: payload)
            var spake = try Spake2pVerifierSession(context: context, verifier: verifier)
            let (pB, cB) = try spake.respond(to: pake1.pA)
            state = .awaitingPake3(spake, request: request)
            return [.send(SecureChannelMessage(.pake2, try Pake2(pB: pB, cB: cB).encoded()))]
        case (.awaitingPake3(let spake, let request), .pake3):
            let pake3 = try Pake3(decoding: payload)
            let ke = try spake.confirm(pake3.cA)
            state = .finished
            let session = EstablishedSession(
                kind: .pase, isInitiator: false, localSessionID: localSessionID, peerSessionID: request.initiatorSessionID,
                keys: SessionKeys.derive(secret: ke, salt: [], info: "SessionKeys"), peerParameters: request.sessionParameters)
            return [.send(SecureChannelMessage(.statusReport, StatusReport.sessionEstablished.encoded)), .established(session)]
        default:
            throw .protocolViolation("PASE: unexpected \(opcode) in state \(state.name)")
        }
    }
}

/// The commissioner's side of PASE. Hearth uses it in tests and benchmarks.
public struct PASEInitiator: HandshakeStateMachine {
    enum State: Sendable {
        case idle
        case awaitingResponse(request: [UInt8], parsed: PBKDFParamRequest)
        case awaitingPake2(Spake2pProverSession, peerSessionID: UInt16, peer: SessionParameters?)
        case awaitingStatus(Spake2p.SharedKeys, peerSessionID: UInt16, peer: SessionParameters?)
        case finished
    }

    let passcode: SetupPasscode
    let localSessionID: UInt16
    let sessionParameters: SessionParameters?
    private(set) var state = State.idle

    public init(passcode: SetupPasscode, localSessionID: UInt16, sessionParameters: SessionParameters? = nil) {
        self.passcode = passcode
        self.localSessionID = localSessionID
        self.sessionParameters = sessionParameters
    }

    /// The PBKDFParamRequest that opens the exchange.
    public mutating func start() throws(MatterSecurityError) -> SecureChannelMessage {
        let request = PBKDFParamRequest(
            initiatorRandom: randomBytes(32), initiatorSessionID: localSessionID, sessionParameters: sessionParameters)
        let bytes = try request.encoded()
        state = .awaitingResponse(request: bytes, parsed: request)
        return SecureChannelMessage(.pbkdfParamRequest, bytes)
    }

    public mutating func abandon() { state = .finished }

    public mutating func step(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) throws(MatterSecurityError) -> [HandshakeEffect] {
        switch (state, opcode) {
        case (.awaitingStatus(let keys, let peerSessionID, let peer), .statusReport):
            let report = try StatusReport(decoding: payload)
            state = .finished
            guard report.isSessionEstablished else {
                return [.failed(.verificationFailed("PASE refused by the device: status \(report.generalCode)/\(report.protocolCode)"))]
            }
            let session = EstablishedSession(
                kind: .pase, isInitiator: true, localSessionID: localSessionID, peerSessionID: peerSessionID,
                keys: SessionKeys.derive(secret: keys.ke, salt: [], info: "SessionKeys"), peerParameters: peer)
            return [.established(session)]
        case (_, .statusReport):
            let report = try StatusReport(decoding: payload)
            state = .finished
            return [.failed(.protocolViolation("PASE aborted by the peer: status \(report.generalCode)/\(report.protocolCode)"))]
        case (.awaitingResponse(let requestBytes, let request), .pbkdfParamResponse):
            let response = try PBKDFParamResponse(decoding: payload)
            guard response.initiatorRandom == request.initiatorRandom else {
                throw .protocolViolation("PBKDFParamResponse echoes another initiator random")
            }
            guard let iterations = response.iterations, let salt = response.salt else {
                throw .protocolViolation("PBKDFParamResponse has no PBKDF parameters")
            }
            let (w0, w1) = try Spake2p.deriveSecrets(passcode: passcode, salt: salt, iterations: Int(iterations))
            let prover = try Spake2pProverSession(context: PASE.context(request: requestBytes, response: payload), w0: w0, w1: w1)
            state = .awaitingPake2(prover, peerSessionID: response.responderSessionID, peer: response.sessionParameters)
            return [.send(SecureChannelMessage(.pake1, try Pake1(pA: prover.pA).encoded()))]
        case (.awaitingPake2(let prover, let peerSessionID, let peer), .pake2):
            let pake2 = try Pake2(decoding: payload)
            let (cA, keys) = try prover.finish(pB: pake2.pB, cB: pake2.cB)
            state = .awaitingStatus(keys, peerSessionID: peerSessionID, peer: peer)
            return [.send(SecureChannelMessage(.pake3, try Pake3(cA: cA).encoded()))]
        default:
            throw .protocolViolation("PASE: unexpected \(opcode) in state \(state.name)")
        }
    }
}

enum PASE {
    /// SHA-256("CHIP PAKE V1 Commissioning" ‖ PBKDFParamRequest ‖ PBKDFParamResponse), the
    /// SPAKE2+ context (4.14.1.3).
    static func context(request: [UInt8], response: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: Array("CHIP PAKE V1 Commissioning".utf8))
        hash.update(data: request)
        hash.update(data: response)
        return Array(hash.finalize())
    }
}

extension PASEResponder.State {
    var name: String {
        switch self {
        case .awaitingRequest: "awaiting PBKDFParamRequest"
        case .awaitingPake1: "awaiting Pake1"
        case .awaitingPake3: "awaiting Pake3"
        case .finished: "finished"
        }
    }
}

extension PASEInitiator.State {
    var name: String {
        switch self {
        case .idle: "idle"
        case .awaitingResponse: "awaiting PBKDFParamResponse"
        case .awaitingPake2: "awaiting Pake2"
        case .awaitingStatus: "awaiting StatusReport"
        case .finished: "finished"
        }
    }
}
