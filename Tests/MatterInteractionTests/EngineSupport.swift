import HomeModel
import MatterInteraction
import MatterMessaging
import MatterTLV
import Synchronization
import Testing

/// Values of bridged devices for the tests: a mutex-guarded dictionary; commands of On/Off act on it.
final class TestValues: ClusterValueSource {
    let values = Mutex<[ConcreteAttributePath: Value]>([:])
    let invoked = Mutex<[String]>([])
    var invokedNames: [String] { invoked.withLock { $0 } }

    func set(_ endpoint: UInt16, _ cluster: UInt32, _ attribute: UInt32, _ value: Value) {
        values.withLock { $0[ConcreteAttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute)] = value }
    }

    func value(_ path: ConcreteAttributePath) -> Value? { values.withLock { $0[path] } }

    func invoke(_ path: ConcreteCommandPath, _ command: CommandDescriptor, fields: [String: Value]) -> InteractionStatus {
        invoked.withLock { $0.append(command.name) }
        let onOff = ConcreteAttributePath(endpoint: path.endpoint, cluster: 6, attribute: 0)
        return values.withLock { v in
            switch (path.cluster, path.command) {
            case (6, 0): v[onOff] = .bool(false)
            case (6, 1): v[onOff] = .bool(true)
            case (6, 2): v[onOff] = .bool(!(v[onOff]?.boolValue ?? false))
            default: return .unsupportedCommand
            }
            return .success
        }
    }
}

/// A cluster whose one command must be invoked in a timed interaction (like a door lock's).
struct TimedTestCluster: ClusterServer {
    let id: UInt32 = 0xFFF1_FC01
    var unlocked = 0
    var metadata: ClusterInfo { ClusterInfo(revision: 1, attributes: [0], acceptedCommands: [0], dataVersion: 0, timedCommands: [0]) }
    func read(_ attribute: UInt32, endpoint: UInt16, subject: Subject) -> Result<TLVElement, StatusIB> {
        .success(TLVElement(.unsigned(UInt64(unlocked))))
    }
    mutating func invoke(_ command: UInt32, fields: TLVElement?, endpoint: UInt16, subject: Subject) -> CommandResult {
        unlocked += 1
        return .success
    }
}

/// Root (0), aggregator (1), a bridged light (2), a bridged contact sensor (3), a bridged
/// thermometer (4), and endpoint 5 with the timed test cluster.
func bridgeNode(_ values: TestValues) throws -> MatterNode {
    let node = MatterNode(dataVersionSeed: 100)
    node.addEndpoint(0, deviceTypes: [.rootNode], clusters: [
        BasicInformation.cluster(vendorName: "Hearth", vendorID: 0xFFF1, productName: "Hearth Bridge", productID: 0x8001, uniqueID: "hearth-test"),
    ])
    node.addEndpoint(1, deviceTypes: [.aggregator], clusters: [])
    values.set(2, 6, 0, .bool(false))
    node.addEndpoint(2, deviceTypes: [DeviceTypeEntry(0x0100, revision: 3), .bridgedNode], parent: 1, clusters: [
        try CatalogCluster(trait: 0x0006, source: values, commands: [0, 1, 2]),
        BridgedDeviceBasicInformation.cluster(nodeLabel: "Desk lamp", uniqueID: "lamp-1"),
    ])
    values.set(3, 0x45, 0, .bool(true))
    node.addEndpoint(3, deviceTypes: [DeviceTypeEntry(0x0015, revision: 1), .bridgedNode], parent: 1, clusters: [
        try CatalogCluster(trait: 0x0045, source: values),
        BridgedDeviceBasicInformation.cluster(nodeLabel: "Front door", uniqueID: "door-1"),
    ])
    values.set(4, 0x402, 0, .int(2150))
    values.set(4, 0x402, 1, .null)
    values.set(4, 0x402, 2, .null)
    node.addEndpoint(4, deviceTypes: [DeviceTypeEntry(0x0302, revision: 2), .bridgedNode], parent: 1, clusters: [
        try CatalogCluster(trait: 0x0402, source: values),
        BridgedDeviceBasicInformation.cluster(nodeLabel: "Hall", uniqueID: "thermo-1"),
    ])
    node.addEndpoint(5, deviceTypes: [DeviceTypeEntry(0x000A, revision: 3)], parent: 1, clusters: [TimedTestCluster()])
    return node
}

typealias Instant = ContinuousClock.Instant

/// An engine over the bridge node with a manual time base.
struct Harness {
    var engine: InteractionEngine<Instant>
    let values = TestValues()
    let node: MatterNode
    var now = ContinuousClock.now
    let session = SessionKey.secure(localSessionID: 7)
    var nextExchange: UInt16 = 1

    init(maxPayload: Int = InteractionConfiguration.udpMaxPayload, access: any AccessChecker = AccessCheck.allowAll) throws {
        node = try bridgeNode(values)
        engine = InteractionEngine(model: node, access: access, configuration: InteractionConfiguration(maxPayload: maxPayload),
                                   subscriptionIDSeed: 1000)
    }

    mutating func exchange() -> ExchangeKey {
        defer { nextExchange += 1 }
        return ExchangeKey(session: session, exchangeID: nextExchange, weInitiated: false)
    }

    mutating func send(_ message: some InteractionMessage, on exchange: ExchangeKey, subject: Subject = .pase) throws -> [InteractionEffect] {
        engine.receive(type(of: message).opcode.rawValue, try message.encoded(), on: exchange, from: subject, now: now)
    }

    mutating func advance(_ d: Duration) -> [InteractionEffect] {
        now = now.advanced(by: d)
        return engine.advance(to: now)
    }
}

/// The messages an effect list sends (opcode and payload), in order.
func sent(_ effects: [InteractionEffect]) -> [(InteractionOpcode, [UInt8])] {
    effects.compactMap {
        switch $0 {
        case .send(_, let op, let payload): return (op, payload)
        case .sendOnNewExchange(_, _, let op, let payload): return (op, payload)
        case .close: return nil
        }
    }
}

func only<M: InteractionMessage>(_ effects: [InteractionEffect], _: M.Type) throws -> M {
    let messages = sent(effects)
    try #require(messages.count == 1, "expected one message, got \(messages.map(\.0))")
    try #require(messages[0].0 == M.opcode, "expected \(M.opcode), got \(messages[0].0)")
    return try M(decoding: messages[0].1)
}

func closes(_ effects: [InteractionEffect], _ exchange: ExchangeKey) -> Bool {
    effects.contains { if case .close(let e) = $0 { e == exchange } else { false } }
}

extension ReportDataMessage {
    /// The data reports by concrete path.
    var data: [ConcreteAttributePath: TLVElement] {
        var out: [ConcreteAttributePath: TLVElement] = [:]
        for case .data(let d) in attributeReports ?? [] {
            if let e = d.path.endpoint, let c = d.path.cluster, let a = d.path.attribute, d.path.listIndex == nil {
                out[ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)] = d.data
            }
        }
        return out
    }

    var statuses: [AttributeStatus] {
        (attributeReports ?? []).compactMap { if case .status(let s) = $0 { s } else { nil } }
    }
}

extension Harness {
    /// Sends a ReadRequest and collects every chunk (answering each with a StatusResponse).
    mutating func readAll(_ paths: [AttributePath]) throws -> (report: ReportDataMessage, chunks: Int) {
        let ex = exchange()
        var effects = try send(ReadRequestMessage(attributeRequests: paths), on: ex)
        var reports: [AttributeReport] = []
        for chunk in 1...500 {
            let report = try only(effects, ReportDataMessage.self)
            reports += report.attributeReports ?? []
            if report.moreChunkedMessages != true { return (ReportDataMessage(attributeReports: reports), chunk) }
            effects = try send(StatusResponseMessage(.success), on: ex)
        }
        throw InteractionError("more than 500 chunks")
    }
}
