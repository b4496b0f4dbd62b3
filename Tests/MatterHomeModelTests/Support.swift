import DriverAPI
import Foundation
import HomeCore
import HomeModel
import HomeStorage
import MatterHomeModel
import MatterInteraction
import MatterMessaging
import MatterTLV
import Synchronization
import Testing

/// The devices the tests bridge, published through the core's driver context as a plugin does.
enum Devices {
    static func relay(_ local: String = "relay", room: String = "Garage") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: "Relay \(local)",
            types: [
                DeviceTypeDescription(
                    id: OnOffPlugInUnitDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)]])
            ], commission: CommissionHint(name: "Relay \(local)", room: room),
            identity: DeviceIdentity(vendorName: "Acme", vendorID: 0xFFF1, productName: "Relay board", serialNumber: "SN-\(local)"))
    }

    static func contact(_ local: String = "door") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: "Front door",
            types: [
                DeviceTypeDescription(
                    id: ContactSensorDeviceType.identifier, isPrimary: true,
                    traits: [BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(true)]])
            ], commission: CommissionHint(name: "Front door", room: "Hall"))
    }

    static func thermometer(_ local: String = "thermo") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: "Hall temperature", manufacturer: "Hearth", model: "1-Wire probe",
            types: [
                DeviceTypeDescription(
                    id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                    traits: [TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(2150)]])
            ], commission: CommissionHint(name: "Hall temperature", room: "Hall"))
    }

    /// Two device types: one endpoint per type under its Bridged Node.
    static func combo(_ local: String = "combo") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: "Window",
            types: [
                DeviceTypeDescription(
                    id: ContactSensorDeviceType.identifier, isPrimary: true,
                    traits: [BooleanStateTrait.identifier: [BooleanStateTrait.Attribute.stateValue: .bool(false)]]),
                DeviceTypeDescription(
                    id: TemperatureSensorDeviceType.identifier,
                    traits: [TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(1800)]]),
            ], commission: CommissionHint(name: "Window", room: "Hall"))
    }

    /// A momentary button (Switch with MS, MSR, MSL, MSM), as the GPIO plugin's button role.
    static func button(_ local: String = "bell") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: "Doorbell",
            types: [
                DeviceTypeDescription(
                    id: GenericSwitchDeviceType.identifier, isPrimary: true,
                    traits: [SwitchTrait.identifier: [
                        AttributeID(0xFFFC): .int(0b11110), SwitchTrait.Attribute.numberOfPositions: .int(2),
                        SwitchTrait.Attribute.currentPosition: .int(0),
                    ]])
            ], commission: CommissionHint(name: "Doorbell", room: "Hall"))
    }

    static func lock(_ local: String = "lock") -> DeviceDescription {
        DeviceDescription(
            localID: local, name: "Front lock",
            types: [
                DeviceTypeDescription(
                    id: DoorLockDeviceType.identifier, isPrimary: true,
                    traits: [DoorLockTrait.identifier: [DoorLockTrait.Attribute.lockState: .int(1)]])
            ], commission: CommissionHint(name: "Front lock", room: "Hall"))
    }
}

/// The relay's hardware behind the plugin: On/Off commands switch it and it reports the new
/// state back through the driver context, as the GPIO plugin does after driving the line.
final class RelayHardware: CommandHandler {
    let context: any DriverContext
    let received = Mutex<[DriverCommand]>([])

    init(context: any DriverContext) { self.context = context }

    var commands: [DriverCommand] { received.withLock { $0 } }

    func handle(_ command: DriverCommand) async throws -> Value {
        received.withLock { $0.append(command) }
        guard command.trait == OnOffTrait.identifier else { throw HomeError.unsupportedOperation("only On/Off") }
        let on: Bool
        switch command.command {
        case OnOffTrait.Command.on: on = true
        case OnOffTrait.Command.off: on = false
        default: on = !(state.withLock { $0[command.localID] } ?? false)
        }
        state.withLock { $0[command.localID] = on }
        context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on))
        return .null
    }

    let state = Mutex<[String: Bool]>([:])

    func write(_ write: DriverWrite) async throws { throw HomeError.unsupportedOperation("no writes") }
}

/// A home (real HomeCore), a SQLite file for the endpoint numbers, a Matter node with the
/// root and Aggregator endpoints as part A's service sets them up, and an IM engine over it.
final class BridgeWorld: @unchecked Sendable {
    let dir: String
    let core = HomeCore()
    let driver: any DriverContext
    let hardware: RelayHardware
    let settings: ExposureSettings
    var database: HearthDatabase
    var node: MatterNode
    var endpoints: MatterHomeEndpoints
    let changes = ChangeCounter()
    var engine: InteractionEngine<ContinuousClock.Instant>
    var now = ContinuousClock.now
    var nextExchange: UInt16 = 1
    let session = SessionKey.secure(localSessionID: 9)

    init(policy: ExposurePolicy = .default) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("matter-home-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        driver = core.context(for: "gpio")
        hardware = RelayHardware(context: driver)
        core.setCommandHandler(hardware, for: "gpio")
        settings = try ExposureSettings(configured: policy, store: nil)
        database = try Self.open(dir)
        (node, endpoints, engine) = Self.make(core: core, settings: settings, database: database, changes: changes)
    }

    static func open(_ dir: String) throws -> HearthDatabase {
        try HearthDatabase(path: dir + "/hearth.sqlite", extraMigrations: MatterEndpointStore.registerMigrations(in:))
    }

    /// A node with the root and Aggregator endpoints, the bridged endpoints on it, an engine over it.
    static func make(core: HomeCore, settings: ExposureSettings, database: HearthDatabase, changes: ChangeCounter)
        -> (MatterNode, MatterHomeEndpoints, InteractionEngine<ContinuousClock.Instant>)
    {
        let node = MatterNode(dataVersionSeed: 100)
        node.addEndpoint(0, deviceTypes: [.rootNode], clusters: [
            BasicInformation.cluster(vendorName: "Hearth", vendorID: 0xFFF1, productName: "Hearth", productID: 0x8000, uniqueID: "hearth-test"),
        ])
        node.addEndpoint(1, deviceTypes: [.aggregator], parent: 0, clusters: [])
        let endpoints = MatterHomeEndpoints(core: core, settings: settings, node: node, store: database.matterEndpointStore(),
                                            dataChanged: { changes.bump() })
        return (node, endpoints, InteractionEngine(model: node, access: AccessCheck.allowAll, subscriptionIDSeed: 500))
    }

    /// A restart of the daemon's Matter side: a fresh node and bridge on the same database file.
    func restart() async throws {
        await endpoints.stop()
        database = try Self.open(dir)
        (node, endpoints, engine) = Self.make(core: core, settings: settings, database: database, changes: changes)
        endpoints.start()
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    var admin: Home { core.home(for: Principal(id: "admin", role: .admin)) }

    func id(_ local: String) -> DeviceID { DeviceID(plugin: "gpio", local: local) }

    /// Polls `condition` every 20 ms for at most `seconds`.
    func wait(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    // MARK: The controller's side: encoded IM messages through the engine

    func exchange() -> ExchangeKey {
        defer { nextExchange += 1 }
        return ExchangeKey(session: session, exchangeID: nextExchange, weInitiated: false)
    }

    func send(_ message: some InteractionMessage, on exchange: ExchangeKey) throws -> [InteractionEffect] {
        engine.receive(type(of: message).opcode.rawValue, try message.encoded(), on: exchange, from: Subject(authMode: .case, fabricIndex: 1, nodeID: 0x1122),
                       now: now)
    }

    /// The one message the effects send, decoded.
    func single<M: InteractionMessage>(_ effects: [InteractionEffect], _: M.Type) throws -> M {
        let payloads: [(InteractionOpcode, [UInt8])] = effects.compactMap {
            switch $0 {
            case .send(_, let op, let p): return (op, p)
            case .sendOnNewExchange(_, _, let op, let p): return (op, p)
            case .close: return nil
            }
        }
        try #require(payloads.count == 1 && payloads[0].0 == M.opcode, "expected one \(M.opcode), got \(payloads.map(\.0))")
        return try M(decoding: payloads[0].1)
    }

    /// Reads paths; every chunk is acknowledged. Returns the values and statuses by path.
    func read(_ paths: [AttributePath]) throws -> (values: [ConcreteAttributePath: TLVElement], statuses: [ConcreteAttributePath: InteractionStatus]) {
        let ex = exchange()
        var effects = try send(ReadRequestMessage(attributeRequests: paths), on: ex)
        var values: [ConcreteAttributePath: TLVElement] = [:]
        var statuses: [ConcreteAttributePath: InteractionStatus] = [:]
        for _ in 0..<100 {
            let report = try single(effects, ReportDataMessage.self)
            for r in report.attributeReports ?? [] {
                switch r {
                case .data(let d):
                    if let e = d.path.endpoint, let c = d.path.cluster, let a = d.path.attribute, d.path.listIndex == nil {
                        values[ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)] = d.data
                    }
                case .status(let s):
                    if let e = s.path.endpoint, let c = s.path.cluster, let a = s.path.attribute {
                        statuses[ConcreteAttributePath(endpoint: e, cluster: c, attribute: a)] = s.status.status
                    }
                }
            }
            if report.moreChunkedMessages != true { return (values, statuses) }
            effects = try send(StatusResponseMessage(.success), on: ex)
        }
        throw InteractionError("more than 100 chunks")
    }

    func value(_ endpoint: UInt16, _ cluster: UInt32, _ attribute: UInt32) throws -> TLVElement? {
        try read([AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute)]).values[
            ConcreteAttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute)]
    }

    /// The Aggregator's PartsList as a controller reads it.
    func partsList() throws -> [UInt16] {
        try value(1, DescriptorCluster.id, DescriptorCluster.partsList)?.members?.compactMap { try? UInt16($0.uint()) } ?? []
    }

    /// Invokes one command; returns its status.
    func invoke(_ endpoint: UInt16, _ cluster: UInt32, _ command: UInt32, _ fields: [TLVElement] = []) throws -> InteractionStatus? {
        let path = CommandPath(endpoint: endpoint, cluster: cluster, command: command)
        let effects = try send(InvokeRequestMessage(invokeRequests: [CommandData(path: path, fields: .structure(fields))]), on: exchange())
        // The response on the request's exchange (a subscription's report may follow on a new one).
        let replies = effects.filter { if case .send(_, .invokeResponse, _) = $0 { true } else { false } }
        let response = try single(replies, InvokeResponseMessage.self)
        guard case .status(let s)? = response.invokeResponses.first else { return nil }
        return s.status.status
    }
}

/// Counts the bridge's `dataChanged` calls (what would wake the IM server).
final class ChangeCounter: Sendable {
    let count = Mutex(0)
    func bump() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
