import Crypto
import Foundation
import HomeStorage
import Logging
import MatterBridge
import MatterCommissioning
import MatterInteraction
import MatterMessaging
import MatterSecurity
import MatterTLV
import Synchronization

/// Records what the bridge would publish through avahi.
final class RecordingPublisher: MatterServicePublisher {
    let records = Mutex<[String: DNSSDRecord]>([:])
    var unavailableReason: String? { nil }
    func publish(key: String, record: DNSSDRecord) throws { records.withLock { $0[key] = record } }
    func withdraw(key: String) { _ = records.withLock { $0.removeValue(forKey: key) } }
    var snapshot: [String: DNSSDRecord] { records.withLock { $0 } }
}

/// A real SQLite Matter store in a temporary directory.
struct TemporaryStore {
    let directory: String
    var path: String { directory + "/matter.sqlite" }

    init() {
        directory = NSTemporaryDirectory() + "matter-bridge-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func open() throws -> (HearthDatabase, MatterStateStore) {
        let db = try HearthDatabase(path: path, extraMigrations: MatterStateStore.registerMigrations(in:))
        return (db, try db.matterStore())
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Waits (bounded) for a condition that another task makes true.
func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<Int(seconds * 20) {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

struct ControllerError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A commissioner on its own UDP node over loopback: PASE with a passcode, then IM reads and
/// invokes on the secure session, as a real controller sends them.
final class TestController: Sendable {
    let udp: MatterUDPNode<ContinuousClock>
    let secureChannel: AsyncStream<ExchangeEvent>
    let interaction: AsyncStream<ExchangeEvent>
    let bridge: PeerAddress
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let session = Mutex<SessionKey?>(nil)

    init(bridgePort: UInt16) throws {
        udp = try MatterUDPNode(port: 0)
        secureChannel = udp.events(for: .secureChannel)
        interaction = udp.events(for: .interactionModel)
        bridge = PeerAddress(host: "::1", port: bridgePort)
        let udp = self.udp
        task.withLock { $0 = Task { await udp.run() } }
    }

    func stop() { task.withLock { $0?.cancel() } }

    /// Runs PASE; returns the attestation challenge, or throws with the failure.
    @discardableResult
    func pase(passcode: UInt32) async throws -> [UInt8] {
        var initiator = PASEInitiator(passcode: try SetupPasscode(passcode), localSessionID: 0x1234)
        let first = try initiator.start()
        return try await handshake(&initiator, first, "PASE").session.keys.attestationChallenge
    }

    /// Runs CASE as `credentials`' node (resuming `resumption` when given); returns whether the
    /// bridge answered Sigma2_Resume and the record to resume this session later.
    func caseSession(_ credentials: FabricCredentials, bridgeNode: UInt64, resumption: CASEResumptionRecord? = nil) async throws
        -> (resumed: Bool, record: CASEResumptionRecord?)
    {
        var initiator = CASEInitiator(credentials: credentials, peerNodeID: bridgeNode, localSessionID: 0x4321, resumption: resumption)
        let first = try initiator.start()
        let (s, opcodes) = try await handshake(&initiator, first, "CASE", localNodeID: credentials.nodeID, peerNodeID: bridgeNode)
        return (opcodes.contains(.sigma2Resume), s.resumption)
    }

    /// Sends `first` on a new unsecured exchange, feeds the answers to `machine` until it
    /// establishes a session (installed as this controller's session) or fails.
    private func handshake<M: HandshakeStateMachine>(_ machine: inout M, _ first: SecureChannelMessage, _ name: String,
                                                     localNodeID: UInt64 = 0, peerNodeID: UInt64 = 0) async throws
        -> (session: EstablishedSession, received: [MatterSecurity.SecureChannelOpcode])
    {
        let exchange = udp.newUnsecuredExchange(to: bridge)
        try udp.send(on: exchange, opcode: first.opcode.rawValue, payload: first.payload, protocolID: .secureChannel)
        var iterator = secureChannel.makeAsyncIterator()
        var received: [MatterSecurity.SecureChannelOpcode] = []
        for _ in 0..<10 {
            guard let event = await iterator.next() else { throw ControllerError("no \(name) answer") }
            guard case .message(let m) = event, let opcode = MatterSecurity.SecureChannelOpcode(rawValue: m.opcode) else { continue }
            received.append(opcode)
            for effect in machine.receive(opcode, m.payload) {
                switch effect {
                case .send(let msg):
                    try udp.send(on: m.exchange, opcode: msg.opcode.rawValue, payload: msg.payload, protocolID: .secureChannel)
                case .established(let s):
                    udp.close(m.exchange)
                    let key = try udp.addSecureSession(SecureSessionParameters(
                        role: .initiator, i2rKey: s.keys.i2r, r2iKey: s.keys.r2i, localSessionID: s.localSessionID,
                        peerSessionID: s.peerSessionID, localNodeID: localNodeID, peerNodeID: peerNodeID, peerAddress: bridge))
                    session.withLock { $0 = key }
                    return (s, received)
                case .failed(let e):
                    throw ControllerError("\(name) failed: \(e)")
                }
            }
        }
        throw ControllerError("\(name) did not finish")
    }

    /// Sends one IM request on a new exchange and returns the first IM answer.
    func request(_ opcode: InteractionOpcode, _ payload: [UInt8]) async throws -> (InteractionOpcode, [UInt8]) {
        guard let key = session.withLock({ $0 }) else { throw ControllerError("no session") }
        let exchange = try udp.newExchange(on: key, protocolID: .interactionModel)
        try udp.send(on: exchange, opcode: opcode.rawValue, payload: payload, protocolID: .interactionModel)
        var iterator = interaction.makeAsyncIterator()
        while let event = await iterator.next() {
            guard case .message(let m) = event, m.exchange == exchange, let op = InteractionOpcode(rawValue: m.opcode) else { continue }
            if op == .reportData, let report = try? ReportDataMessage(decoding: m.payload), report.moreChunkedMessages != true {
                udp.close(exchange)
            }
            return (op, m.payload)
        }
        throw ControllerError("the IM stream ended")
    }

    /// Reads one attribute's value.
    func read(_ endpoint: UInt16, _ cluster: UInt32, _ attribute: UInt32) async throws -> TLVElement {
        let (op, payload) = try await request(.readRequest, try ReadRequestMessage(
            attributeRequests: [AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute)], isFabricFiltered: true).encoded())
        guard op == .reportData else { throw ControllerError("read answered \(op)") }
        let report = try ReportDataMessage(decoding: payload)
        guard case .data(let d)? = report.attributeReports?.first else { throw ControllerError("read of \(endpoint)/\(cluster)/\(attribute): \(String(describing: report.attributeReports))") }
        return d.data
    }

    /// Invokes a command; the response command's fields, or the status.
    func invoke(_ endpoint: UInt16, _ cluster: UInt32, _ command: UInt32, _ fields: [TLVElement], timed: Bool = false) async throws -> InvokeResponse {
        let (op, payload) = try await request(.invokeRequest, try InvokeRequestMessage(
            invokeRequests: [CommandData(path: CommandPath(endpoint: endpoint, cluster: cluster, command: command), fields: .structure(fields))],
            timedRequest: timed).encoded())
        guard op == .invokeResponse else {
            let status = try? StatusResponseMessage(decoding: payload)
            throw ControllerError("invoke answered \(op) \(String(describing: status?.status))")
        }
        guard let first = try InvokeResponseMessage(decoding: payload).invokeResponses.first else { throw ControllerError("empty invoke response") }
        return first
    }
}

extension InvokeResponse {
    var fields: TLVElement? { if case .command(let c) = self { return c.fields } else { return nil } }
    var status: MatterInteraction.InteractionStatus? { if case .status(let s) = self { return s.status.status } else { return nil } }
}

func testLogger() -> Logger {
    var logger = Logger(label: "matter-bridge-test")
    logger.logLevel = .warning
    return logger
}

/// A commissioner's fabric for tests: a root that issues NOCs itself (no ICAC).
struct TestFabric {
    let fabricID: UInt64
    let rootKey = P256.Signing.PrivateKey()
    let rootName: MatterDistinguishedName
    let root: MatterCertificate
    let ipk: [UInt8]

    init(fabricID: UInt64, ipk: [UInt8] = [UInt8](repeating: 0x42, count: 16)) throws {
        self.fabricID = fabricID
        self.ipk = ipk
        rootName = MatterDistinguishedName([.matterRCACID(1), .matterFabricID(fabricID)])
        let skid = MatterCertificate.keyIdentifier(Array(rootKey.publicKey.x963Representation))
        root = try MatterCertificate.issue(
            serialNumber: [1], issuer: rootName, subject: rootName, subjectKey: rootKey.publicKey, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: true, pathLength: nil), .keyUsage([.keyCertSign, .crlSign]),
                         .subjectKeyIdentifier(skid), .authorityKeyIdentifier(skid)], issuerKey: rootKey)
    }

    /// A NOC for `key` as `node` on this fabric.
    func noc(_ node: UInt64, _ key: P256.Signing.PublicKey) throws -> MatterCertificate {
        try MatterCertificate.issue(
            serialNumber: [UInt8(node & 0x7F)], issuer: rootName, subject: MatterDistinguishedName([.matterNodeID(node), .matterFabricID(fabricID)]),
            subjectKey: key, notBefore: 1, notAfter: 0,
            extensions: [.basicConstraints(isCA: false, pathLength: nil), .keyUsage([.digitalSignature]), .extendedKeyUsage([.clientAuth, .serverAuth]),
                         .subjectKeyIdentifier(MatterCertificate.keyIdentifier(Array(key.x963Representation))),
                         .authorityKeyIdentifier(MatterCertificate.keyIdentifier(Array(rootKey.publicKey.x963Representation)))], issuerKey: rootKey)
    }

    /// A controller's CASE credentials as `node`.
    func controller(_ node: UInt64, index: FabricIndex = 1) throws -> FabricCredentials {
        let key = P256.Signing.PrivateKey()
        return try FabricCredentials(fabricIndex: index, root: root, icac: nil, noc: try noc(node, key.publicKey), operationalKey: key, epochIPK: ipk)
    }

    /// Saves this fabric into `store` as the bridge's (node `bridgeNode`, index 1) with an
    /// administer ACL entry for `admin`, as a finished commissioning leaves it.
    func install(in store: MatterStateStore, bridgeNode: UInt64, admin: UInt64) throws {
        let bridgeKey = P256.Signing.PrivateKey()
        try store.saveCommissioning(PersistentCommissioning(
            fabrics: [try FabricInfo(index: 1, rootCertificate: try root.tlvEncoded(), noc: try noc(bridgeNode, bridgeKey.publicKey).tlvEncoded(), icac: nil,
                                     operationalKey: Array(bridgeKey.rawRepresentation), epochIPK: ipk, vendorID: 0xFFF1, label: "")],
            accessControl: [AccessControlEntry(privilege: .administer, authMode: .case, subjects: [admin], fabricIndex: 1)]))
    }
}

/// A log handler that keeps the messages (to check that a refusal was logged).
final class CapturedLog: Sendable {
    let lines = Mutex<[String]>([])

    var logger: Logger {
        var logger = Logger(label: "matter-bridge-test") { _ in Handler(sink: self) }
        logger.logLevel = .info
        return logger
    }

    func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }

    struct Handler: LogHandler {
        let sink: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            sink.lines.withLock { $0.append("\(event.level) \(event.message) \(fields)") }
        }
    }
}
