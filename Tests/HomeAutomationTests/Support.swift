import DriverAPI
import DriverTesting
import Foundation
import HashTreeCollections
import HomeAutomation
import HomeCore
import HomeModel
import Synchronization

/// The engine's clock on a `ManualClock`: wall time = `epoch` + the manual clock's offset.
final class TestAutomationClock: AutomationClock {
    let manual = ManualClock()
    let epoch: Date
    let synced = Mutex(true)

    init(epoch: Date = Date(timeIntervalSince1970: 1_790_000_000)) { self.epoch = epoch }

    func now() -> Date {
        let o = manual.now.offset.components
        return epoch.addingTimeInterval(Double(o.seconds) + Double(o.attoseconds) / 1e18)
    }

    func sleep(until date: Date) async throws {
        let ns = Int64((date.timeIntervalSince(epoch) * 1e9).rounded(.up))
        try await manual.sleep(until: ManualClock.Instant(offset: .nanoseconds(ns)))
    }

    var isSynchronized: Bool { synced.withLock { $0 } }

    func advance(_ d: Duration) { manual.advance(by: d) }
}

/// Hardware stand-in for the core's tests: carries out On/Off, level and writes and reports
/// the new state back, like a driver; records what it was asked.
final class FakeHardware: CommandHandler {
    let context: any DriverContext
    let log = Mutex<[DriverCommand]>([])
    let writes = Mutex<[DriverWrite]>([])
    init(context: any DriverContext) { self.context = context }

    var commands: [DriverCommand] { log.withLock { $0 } }

    func handle(_ command: DriverCommand) async throws -> Value {
        log.withLock { $0.append(command) }
        switch (command.trait, command.command) {
        case (OnOffTrait.identifier, OnOffTrait.Command.on):
            context.report([AttributeReport(localID: command.localID, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)])
        case (OnOffTrait.identifier, OnOffTrait.Command.off):
            context.report([AttributeReport(localID: command.localID, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: false)])
        case (OnOffTrait.identifier, OnOffTrait.Command.toggle):
            context.report([AttributeReport(localID: command.localID, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: .bool(Bool.random()))])
        case (LevelControlTrait.identifier, _):
            context.report([
                AttributeReport(localID: command.localID, trait: LevelControlTrait.identifier, attribute: LevelControlTrait.Attribute.currentLevel, value: command.arguments["Level"] ?? 0),
                AttributeReport(localID: command.localID, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true),
            ])
        default:
            break
        }
        return .null
    }

    func write(_ write: DriverWrite) async throws {
        writes.withLock { $0.append(write) }
        context.report([AttributeReport(localID: write.localID, trait: write.trait, attribute: write.attribute, value: write.value)])
    }
}

enum Devices {
    static func lamp(_ id: String, name: String) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: name,
            types: [
                DeviceTypeDescription(
                    id: OnOffLightDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: false]])
            ], commission: CommissionHint(name: name, room: "Living Room"))
    }

    static func dimmer(_ id: String, name: String) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: name,
            types: [
                DeviceTypeDescription(
                    id: DimmableLightDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: false],
                        LevelControlTrait.identifier: [LevelControlTrait.Attribute.currentLevel: 10],
                    ])
            ], commission: CommissionHint(name: name, room: "Living Room"))
    }

    static func thermometer(_ id: String, name: String, value: Int64) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: name,
            types: [
                DeviceTypeDescription(
                    id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(value)]])
            ], commission: CommissionHint(name: name, room: "Greenhouse"))
    }

    static func button(_ id: String, name: String) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: name,
            types: [
                DeviceTypeDescription(
                    id: GenericSwitchDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: 2, SwitchTrait.Attribute.currentPosition: 0]])
            ], commission: CommissionHint(name: name, room: "Hall"))
    }

    static func lock(_ id: String, name: String) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: name,
            types: [DeviceTypeDescription(id: DoorLockDeviceType.identifier, isPrimary: true, traits: [IdentifyTrait.identifier: [:], DoorLockTrait.identifier: [DoorLockTrait.Attribute.lockState: 1]])],
            commission: CommissionHint(name: name, room: "Hall"))
    }
}

/// A core with a lamp, a dimmer, a thermometer, a button and a lock from plugin `p`.
struct TestHome {
    let core: HomeCore
    let driver: any DriverContext
    let hardware: FakeHardware

    init() {
        core = HomeCore()
        driver = core.context(for: "p")
        hardware = FakeHardware(context: driver)
        core.setCommandHandler(hardware, for: "p")
        driver.publish(Devices.lamp("lamp", name: "Floor Lamp"))
        driver.publish(Devices.dimmer("dim", name: "Ceiling"))
        driver.publish(Devices.thermometer("thermo", name: "Greenhouse Sensor", value: 1000))
        driver.publish(Devices.button("button", name: "Hall Button"))
        driver.publish(Devices.lock("lock", name: "Front Door"))
    }

    var structure: StructureID { core.state.structures.keys.first! }

    func report(_ local: String, _ trait: TraitID, _ attribute: AttributeID, _ value: Value) {
        driver.report([AttributeReport(localID: local, trait: trait, attribute: attribute, value: value)])
    }

    func temperature(_ v: Int64) { report("thermo", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(v)) }

    func press() {
        driver.emit(EventReport(localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress, fields: ["NewPosition": 1]))
    }

    var lampOn: Value? { core.state.devices["p:lamp"]?.types.first?.traits[OnOffTrait.identifier]?.attributes[OnOffTrait.Attribute.onOff] }
}

let member = Principal(id: "user:bob", role: .member)
let admin = Principal(id: "user:alice", role: .admin)

extension Automation {
    /// Decodes the JSON an API client would send.
    static func json(_ text: String) throws -> Automation { try JSONDecoder().decode(Automation.self, from: Data(text.utf8)) }
}

/// The code of an engine or core error (a call across the actor loses the typed throw).
func errorCode(_ error: any Error) -> HomeError.Code? {
    (error as? AutomationError)?.code ?? (error as? HomeError)?.code
}

/// At 06:00 local time, the lamp goes on.
let morningJSON = """
    {"id": "morning", "name": "Morning", "starters": [{"time": {"at": "06:00"}}],
     "actions": [{"command": {"device": "p:lamp", "trait": "OnOff", "command": "On"}}]}
    """
