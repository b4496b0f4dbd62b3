// `matter-test-responder im …`: PASE on MatterMessaging's UDP node (with MRP), then the
// Interaction Model over the PASE session, serving a small bridge: root (Basic Information),
// an aggregator (1), a bridged On/Off light (2), a contact sensor (3) and a thermometer (4).
// The real CHIP controller reads, invokes and subscribes against it (scripts/test-matter-controller).
//
//   matter-test-responder im --port 5541 --passcode 20202021 [--timeout 60]
import Glibc
import HomeModel
import MatterInteraction
import MatterMessaging
import MatterSecurity
import Synchronization

/// The bridged devices' values; commands of On/Off act on them.
final class DemoValues: ClusterValueSource {
    private let values = Mutex<[ConcreteAttributePath: Value]>([
        ConcreteAttributePath(endpoint: 2, cluster: 0x0006, attribute: 0): .bool(false),
        ConcreteAttributePath(endpoint: 3, cluster: 0x0045, attribute: 0): .bool(true),
        ConcreteAttributePath(endpoint: 4, cluster: 0x0402, attribute: 0): .int(2150),
        ConcreteAttributePath(endpoint: 4, cluster: 0x0402, attribute: 1): .int(-4000),
        ConcreteAttributePath(endpoint: 4, cluster: 0x0402, attribute: 2): .int(12500),
    ])

    func value(_ path: ConcreteAttributePath) -> Value? { values.withLock { $0[path] } }

    func invoke(_ path: ConcreteCommandPath, _ command: CommandDescriptor, fields: [String: Value]) -> InteractionStatus {
        let key = ConcreteAttributePath(endpoint: path.endpoint, cluster: 0x0006, attribute: 0)
        let now: Bool? = values.withLock { v in
            guard path.cluster == 0x0006, let old = v[key]?.boolValue else { return nil }
            let new = path.command == 2 ? !old : path.command == 1
            v[key] = .bool(new)
            return new
        }
        guard let now else { return .unsupportedCommand }
        say("IM INVOKE \(command.name) endpoint=\(path.endpoint) onOff=\(now)")
        return .success
    }
}

func demoBridge(_ values: DemoValues) throws -> MatterNode {
    let node = MatterNode()
    node.addEndpoint(0, deviceTypes: [.rootNode], clusters: [
        BasicInformation.cluster(vendorName: "Hearth", vendorID: 0xFFF1, productName: "Hearth test bridge", productID: 0x8001,
                                 uniqueID: "hearth-test-responder"),
    ])
    node.addEndpoint(1, deviceTypes: [.aggregator], clusters: [])
    let bridged: [(UInt16, DeviceTypeEntry, UInt32, String)] = [
        (2, DeviceTypeEntry(0x0100, revision: 3), 0x0006, "Desk lamp"),
        (3, DeviceTypeEntry(0x0015, revision: 1), 0x0045, "Front door"),
        (4, DeviceTypeEntry(0x0302, revision: 2), 0x0402, "Hall thermometer"),
    ]
    for (endpoint, type, cluster, label) in bridged {
        node.addEndpoint(endpoint, deviceTypes: [type, .bridgedNode], parent: 1, clusters: [
            try CatalogCluster(trait: cluster, source: values, commands: cluster == 0x0006 ? [0, 1, 2] : nil),
            BridgedDeviceBasicInformation.cluster(nodeLabel: label, uniqueID: "demo-\(endpoint)"),
        ])
    }
    return node
}

func runInteractionResponder(_ arguments: [String]) async {
    var port: UInt16 = 5541, passcodeValue: UInt32 = 20_202_021, timeout = 60.0
    var args = arguments.makeIterator()
    while let arg = args.next() {
        switch arg {
        case "--port": port = UInt16(args.next() ?? "") ?? port
        case "--passcode": passcodeValue = UInt32(args.next() ?? "") ?? passcodeValue
        case "--timeout": timeout = Double(args.next() ?? "") ?? timeout
        default: say("unknown argument \(arg)"); exit(64)
        }
    }
    let salt = Array("Hearth test responder salt".utf8)
    guard let passcode = try? SetupPasscode(passcodeValue),
        let verifier = try? Spake2pVerifier(passcode: passcode, salt: salt, iterations: 1000),
        let node = try? MatterUDPNode(port: port),
        let model = try? demoBridge(DemoValues())
    else {
        say("cannot start: bad passcode, port \(port) taken or catalogue mismatch")
        exit(64)
    }
    let server = InteractionServer(node: node, engine: InteractionEngine(model: model, access: AccessCheck.paseOnly))
    let secureChannel = node.events(for: .secureChannel)
    let lifetime = Duration.seconds(timeout)
    say("LISTENING port=\(port) mode=im")
    await withTaskGroup(of: Void.self) { group in
        group.addTask { await node.run() }
        group.addTask { await server.run() }
        group.addTask {
            var handshakes: [ExchangeKey: PASEResponder] = [:]
            for await event in secureChannel {
                guard case .message(let m) = event, let opcode = MatterSecurity.SecureChannelOpcode(rawValue: m.opcode) else { continue }
                if opcode == .pbkdfParamRequest {
                    let id = (try? node.withLayer { l, _ throws(MessagingError) in (l.freeSessionID(), []) }) ?? 1
                    handshakes[m.exchange] = PASEResponder(
                        verifier: verifier, salt: salt, iterations: 1000, localSessionID: id,
                        sessionParameters: SessionParameters(idleInterval: 500, activeInterval: 300, activeThreshold: 4000))
                    say("RECEIVED PBKDFParamRequest")
                }
                guard var machine = handshakes[m.exchange] else { continue }
                for effect in machine.receive(opcode, m.payload) {
                    switch effect {
                    case .send(let message):
                        try? node.send(on: m.exchange, opcode: message.opcode.rawValue, payload: message.payload, protocolID: .secureChannel)
                    case .established(let session):
                        let parameters = SecureSessionParameters(
                            role: .responder, i2rKey: session.keys.i2r, r2iKey: session.keys.r2i, localSessionID: session.localSessionID,
                            peerSessionID: session.peerSessionID, peerAddress: m.from)
                        do {
                            let key = try node.addSecureSession(parameters)
                            server.setSubject(.pase, for: key)
                            say("PASE ESTABLISHED localSession=\(session.localSessionID) peerSession=\(session.peerSessionID)")
                        } catch {
                            say("PASE SESSION REFUSED \(error)")
                        }
                        node.close(m.exchange)
                    case .failed(let error):
                        say("PASE FAILED \(error)")
                        node.close(m.exchange)
                    }
                }
                handshakes[m.exchange] = machine
            }
        }
        group.addTask {
            try? await Task.sleep(for: lifetime)
            say("TIMEOUT")
        }
        await group.next()
        group.cancelAll()
    }
    say("DONE")
    exit(0)
}
