import MatterMessaging
import MatterSecurity
import MatterTLV
import MatterTLVFuzz

/// A mutation fuzzer for Matter's message-layer parsers and the PASE/CASE decoders and state
/// machines, deterministic for a seed.
///
/// The corpus is valid traffic made at start-up: message headers of every shape (source and
/// destination node/group IDs, extensions, privacy-obfuscated secured messages), protocol
/// headers (vendor IDs, acks, secured extensions), status reports, and the real payloads of a
/// complete PASE and a complete CASE handshake between two in-process peers. Each input is a
/// mutation of one (bit flips, byte changes, inserted or deleted runs, truncation, splices,
/// huge TLV lengths) or random bytes, and goes to every decoder that takes its kind; secure
/// channel payloads also go to a fresh responder or a started initiator of the handshake they
/// belong to. Every call must return or throw (a crash ends the process: the run then never
/// reports), and none may take longer than `slowLimit`.
public struct ProtocolFuzzer {
    /// What a run found.
    public struct Report: Sendable, CustomStringConvertible {
        public var inputs = 0
        public var accepted = 0
        public var refused = 0
        public var failures: [String] = []
        public var slowest: Duration = .zero
        public var byTarget: [String: Int] = [:]

        public var description: String {
            let targets = byTarget.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "inputs=\(inputs) accepted=\(accepted) refused=\(refused) failures=\(failures.count) slowest=\(slowest) [\(targets)]"
        }
    }

    enum Target: String, CaseIterable {
        case messageHeader, unsecuredMessage, securedMessage, protocolHeader, statusReport
        case pbkdfParamRequest, pbkdfParamResponse, pake1, pake2, pake3, sigma1, sigma2, sigma2Resume, sigma3
    }

    private var rng: SplitMix64
    private var corpus: [(Target, [UInt8])] = []
    private let slowLimit: Duration
    private let key: AESCCMKey
    private let privacyKey: AESCCMKey
    private let pase: PASEFixture
    private let caseFixture: CASEFixture

    /// - Parameter slowLimit: the longest one input may take. The costliest legitimate input is a
    ///   PBKDFParamResponse asking for the spec's maximum of 100,000 PBKDF2 iterations (about 0.3 s
    ///   in a debug build on a loaded machine, 30 ms in release); anything slower counts as a hang.
    public init(seed: UInt64, slowLimit: Duration = .seconds(1)) throws {
        rng = SplitMix64(seed: seed)
        self.slowLimit = slowLimit
        let keyBytes = (0..<16).map { UInt8($0 &* 7 &+ 3) }
        key = try AESCCMKey(keyBytes)
        privacyKey = try MessageSecurity.privacyKey(for: keyBytes)
        pase = try PASEFixture()
        caseFixture = try CASEFixture()
        corpus = makeCorpus()
    }

    /// Runs `count` inputs; stops early after 20 failures.
    public mutating func run(count: Int, progress: ((Report) -> Void)? = nil) -> Report {
        var report = Report()
        let clock = ContinuousClock()
        for i in 0..<count {
            let (target, input) = makeInput()
            let start = clock.now
            let accepted = check(target, input)
            let took = clock.now - start
            if accepted { report.accepted += 1 } else { report.refused += 1 }
            report.byTarget[target.rawValue, default: 0] += 1
            if took > report.slowest { report.slowest = took }
            if took > slowLimit {
                report.failures.append("\(target) input of \(input.count) bytes took \(took): \(hex(input.prefix(64)))")
            }
            report.inputs += 1
            if report.failures.count >= 20 { break }
            if let progress, i > 0, i % 100_000 == 0 { progress(report) }
        }
        return report
    }

    /// Feeds one input to the decoders of its kind. True when the main decoder accepted it.
    private func check(_ target: Target, _ input: [UInt8]) -> Bool {
        switch target {
        case .messageHeader:
            let accepted = (try? MessageHeader.decode(input)) != nil
            _ = try? MessageCodec.decodeUnsecured(input)
            return accepted
        case .unsecuredMessage:
            return (try? MessageCodec.decodeUnsecured(input)) != nil
        case .securedMessage:
            _ = try? MessageHeader.decode(input)
            return (try? MessageCodec.decodeSecured(input, key: key, nonceNodeID: 0x1122, privacyKey: privacyKey)) != nil
        case .protocolHeader:
            return (try? ProtocolHeader.decode(input)) != nil
        case .statusReport:
            return (try? MatterSecurity.StatusReport(decoding: input)) != nil
        case .pbkdfParamRequest:
            var responder = pase.responder()
            _ = responder.receive(.pbkdfParamRequest, input)
            return (try? PBKDFParamRequest(decoding: input)) != nil
        case .pbkdfParamResponse:
            var initiator = pase.startedInitiator
            _ = initiator.receive(.pbkdfParamResponse, input)
            return (try? PBKDFParamResponse(decoding: input)) != nil
        case .pake1:
            var responder = pase.responderAfterRequest
            _ = responder.receive(.pake1, input)
            return (try? Pake1(decoding: input)) != nil
        case .pake2:
            var initiator = pase.initiatorAfterResponse
            _ = initiator.receive(.pake2, input)
            return (try? Pake2(decoding: input)) != nil
        case .pake3:
            var responder = pase.responderAfterPake1
            _ = responder.receive(.pake3, input)
            return (try? Pake3(decoding: input)) != nil
        case .sigma1:
            var responder = caseFixture.responder()
            _ = responder.receive(.sigma1, input)
            return (try? Sigma1(decoding: input)) != nil
        case .sigma2:
            var initiator = caseFixture.startedInitiator
            _ = initiator.receive(.sigma2, input)
            return (try? Sigma2(decoding: input)) != nil
        case .sigma2Resume:
            var initiator = caseFixture.startedInitiator
            _ = initiator.receive(.sigma2Resume, input)
            return (try? Sigma2Resume(decoding: input)) != nil
        case .sigma3:
            var responder = caseFixture.responderAfterSigma1
            return responder.receive(.sigma3, input).contains { if case .established = $0 { true } else { false } }
        }
    }

    // MARK: Corpus

    private mutating func makeCorpus() -> [(Target, [UInt8])] {
        var out: [(Target, [UInt8])] = []
        let protocolHeaders = [
            ProtocolHeader(isInitiator: true, needsAck: true, opcode: 0x20, exchangeID: 7, protocolID: .secureChannel),
            ProtocolHeader(isInitiator: false, needsAck: false, ackedCounter: 0x0102_0304, opcode: 0x05, exchangeID: 0xFFFF,
                           protocolID: .interactionModel),
        ]
        for ph in protocolHeaders { out.append((.protocolHeader, ph.encoded())) }
        var headers: [MessageHeader] = [
            MessageHeader(sessionID: 0, messageCounter: 1),
            MessageHeader(sessionID: 0, messageCounter: 0xFFFF_FFFF, sourceNodeID: 0x0102_0304_0506_0708),
        ]
        var withDestination = MessageHeader(sessionID: 0, messageCounter: 9, sourceNodeID: 0x55)
        withDestination.destination = .node(0xAABB_CCDD_EEFF_0011)
        headers.append(withDestination)
        var group = MessageHeader(sessionID: 0x1234, messageCounter: 77, sourceNodeID: 0x99)
        group.destination = .group(0xBEEF)
        group.sessionType = .group
        headers.append(group)
        var extended = MessageHeader(sessionID: 0, messageCounter: 3)
        extended.extensions = [0x03, 0x00, 0xAA, 0xBB, 0xCC]
        headers.append(extended)
        for h in headers {
            out.append((.messageHeader, h.encoded()))
            out.append((.unsecuredMessage, h.encoded() + protocolHeaders[0].encoded() + [1, 2, 3]))
        }
        for (i, ph) in protocolHeaders.enumerated() {
            var h = MessageHeader(sessionID: 0x4242, messageCounter: UInt32(100 + i))
            if i == 1 { h.sourceNodeID = 0x1122 }
            out.append((.securedMessage, MessageCodec.encodeSecured(h, ph, [UInt8](repeating: 0x5A, count: 24), key: key, nonceNodeID: 0x1122)))
            out.append((.securedMessage, MessageCodec.encodeSecured(h, ph, [0x15, 0x18], key: key, nonceNodeID: 0x1122, privacyKey: privacyKey)))
        }
        out.append((.statusReport, MatterSecurity.StatusReport.sessionEstablished.encoded))
        out.append((.statusReport, MatterSecurity.StatusReport(generalCode: 1, protocolID: 0x0001_FFF1, protocolCode: 3, data: [9, 9]).encoded))
        out += pase.messages + caseFixture.messages
        // Every handshake payload also arrives inside a whole unsecured message.
        for (target, payload) in pase.messages + caseFixture.messages where target == .pbkdfParamRequest || target == .sigma1 {
            out.append((.unsecuredMessage, headers[1].encoded() + protocolHeaders[0].encoded() + payload))
        }
        return out
    }

    // MARK: Inputs

    private mutating func makeInput() -> ((Target, [UInt8])) {
        let pick = corpus[Int(rng.next(UInt64(corpus.count)))]
        switch rng.next(20) {
        case 0:  // random bytes
            let n = Int(rng.next(96))
            return (pick.0, (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case 1:  // valid input, unchanged (also checks the corpus is accepted)
            return pick
        case 2:  // splice with another corpus entry
            let other = corpus[Int(rng.next(UInt64(corpus.count)))].1
            let a = Int(rng.next(UInt64(pick.1.count + 1))), b = Int(rng.next(UInt64(other.count + 1)))
            return (pick.0, Array(pick.1[..<a]) + Array(other[b...]))
        default:
            var bytes = pick.1
            for _ in 0..<(1 + Int(rng.next(4))) { mutate(&bytes) }
            return (pick.0, bytes)
        }
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        let at = Int(rng.next(UInt64(bytes.count + 1)))
        switch rng.next(8) {
        case 0 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] ^= UInt8(1) << UInt8(rng.next(8))
        case 1 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] = UInt8(truncatingIfNeeded: rng.next())
        case 2: bytes.insert(contentsOf: (0..<Int(1 + rng.next(8))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
        case 3 where at < bytes.count: bytes.removeSubrange(at..<min(bytes.count, at + Int(1 + rng.next(8))))
        case 4: bytes = Array(bytes.prefix(at))  // truncation
        case 5 where !bytes.isEmpty:  // a huge TLV length or 0xFF run
            let run = [UInt8](repeating: rng.next(2) == 0 ? 0xFF : 0x7F, count: Int(1 + rng.next(4)))
            bytes.replaceSubrange(min(at, bytes.count - 1)..<min(bytes.count, at + run.count), with: run)
        case 6 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] = [0x00, 0x18, 0x15, 0x35, 0x36, 0x37, 0x10, 0x30][Int(rng.next(8))]
        default: bytes.append(UInt8(truncatingIfNeeded: rng.next()))
        }
    }

    private func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }
}

/// A complete PASE run between two in-process peers: its payloads, and each side frozen at the
/// step where the next message arrives.
struct PASEFixture {
    let messages: [(ProtocolFuzzer.Target, [UInt8])]
    let verifier: Spake2pVerifier
    let salt = Array("SPAKE2P Key Salt".utf8)
    let startedInitiator: PASEInitiator
    let initiatorAfterResponse: PASEInitiator
    let responderAfterRequest: PASEResponder
    let responderAfterPake1: PASEResponder

    init() throws {
        let passcode = try SetupPasscode(20_202_021)
        verifier = try Spake2pVerifier(passcode: passcode, salt: salt, iterations: 1000)
        var initiator = PASEInitiator(passcode: passcode, localSessionID: 1)
        var responder = PASEResponder(verifier: verifier, salt: salt, iterations: 1000, localSessionID: 2)
        var messages: [(ProtocolFuzzer.Target, [UInt8])] = []
        let request = try initiator.start()
        startedInitiator = initiator
        messages.append((.pbkdfParamRequest, request.payload))
        let response = try Self.only(responder.receive(request.opcode, request.payload))
        responderAfterRequest = responder
        messages.append((.pbkdfParamResponse, response.payload))
        let pake1 = try Self.only(initiator.receive(response.opcode, response.payload))
        initiatorAfterResponse = initiator
        messages.append((.pake1, pake1.payload))
        let pake2 = try Self.only(responder.receive(pake1.opcode, pake1.payload))
        responderAfterPake1 = responder
        messages.append((.pake2, pake2.payload))
        let pake3 = try Self.only(initiator.receive(pake2.opcode, pake2.payload))
        messages.append((.pake3, pake3.payload))
        self.messages = messages
    }

    func responder() -> PASEResponder { PASEResponder(verifier: verifier, salt: salt, iterations: 1000, localSessionID: 2) }

    static func only(_ effects: [HandshakeEffect]) throws -> SecureChannelMessage {
        for case .send(let m) in effects { return m }
        throw MatterSecurityError.verificationFailed
    }
}

/// A complete CASE run (RCAC → ICAC → NOC on both sides, `DevelopmentFabric`) and each side
/// frozen mid-handshake.
struct CASEFixture {
    let messages: [(ProtocolFuzzer.Target, [UInt8])]
    let responderCredentials: FabricCredentials
    let startedInitiator: CASEInitiator
    let responderAfterSigma1: CASEResponder

    init() throws {
        let nodes = try DevelopmentFabric.credentials(nodeIDs: [0x11, 0x22])
        let a = nodes[0]
        responderCredentials = nodes[1]
        var initiator = CASEInitiator(credentials: a, peerNodeID: responderCredentials.nodeID, localSessionID: 1)
        var responder = CASEResponder(fabrics: [responderCredentials], localSessionID: 2)
        var messages: [(ProtocolFuzzer.Target, [UInt8])] = []
        let sigma1 = try initiator.start()
        startedInitiator = initiator
        messages.append((.sigma1, sigma1.payload))
        let sigma2 = try PASEFixture.only(responder.receive(sigma1.opcode, sigma1.payload))
        responderAfterSigma1 = responder
        messages.append((.sigma2, sigma2.payload))
        let sigma3 = try PASEFixture.only(initiator.receive(sigma2.opcode, sigma2.payload))
        messages.append((.sigma3, sigma3.payload))
        // A Sigma2_Resume shape for its decoder.
        let resume = try TLVElement.structure([
            TLVElement(.context(1), .bytes([UInt8](repeating: 3, count: 16))), TLVElement(.context(2), .bytes([UInt8](repeating: 4, count: 16))),
            TLVElement(.context(3), .unsigned(9)),
        ]).encoded()
        messages.append((.sigma2Resume, resume))
        self.messages = messages
    }

    func responder() -> CASEResponder { CASEResponder(fabrics: [responderCredentials], localSessionID: 2) }
}
