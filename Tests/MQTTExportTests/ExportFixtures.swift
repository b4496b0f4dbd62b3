import DriverAPI
import Foundation
import HomeCore
import HomeModel
@testable import MQTTExport

enum ExportFixtures {
    static let topics = ExportTopics(prefix: "homeassistant", nodeID: "hearth_a", base: "hearth/hearth_a")

    static func relay(on: Bool = false, commission: CommissionHint? = CommissionHint(name: "Relay", room: "Garage")) -> DeviceDescription {
        DeviceDescription(
            localID: "relay", name: "Relay", manufacturer: "Acme", model: "R1",
            types: [
                DeviceTypeDescription(
                    id: OnOffPlugInUnitDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:], OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(on)]])
            ], commission: commission)
    }

    static func thermometer(celsius100: Int64 = 2150, commission: CommissionHint? = CommissionHint(name: "Thermometer", room: "Garage")) -> DeviceDescription {
        DeviceDescription(
            localID: "thermo", name: "Thermometer",
            types: [
                DeviceTypeDescription(
                    id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(celsius100)]]),
                DeviceTypeDescription(
                    id: HumiditySensorDeviceType.identifier,
                    traits: [IdentifyTrait.identifier: [:], RelativeHumidityMeasurementTrait.identifier: [RelativeHumidityMeasurementTrait.Attribute.measuredValue: .int(4350)]]),
            ], commission: commission)
    }

    static func lamp(level: Int64 = 254) -> DeviceDescription {
        DeviceDescription(
            localID: "lamp", name: "Lamp",
            types: [
                DeviceTypeDescription(
                    id: DimmableLightDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                        OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(true)],
                        LevelControlTrait.identifier: [LevelControlTrait.Attribute.currentLevel: .int(level)],
                    ])
            ], commission: CommissionHint(name: "Lamp", room: "Hall"))
    }

    static func button() -> DeviceDescription {
        DeviceDescription(
            localID: "button", name: "Button",
            types: [
                DeviceTypeDescription(
                    id: GenericSwitchDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: 2, SwitchTrait.Attribute.currentPosition: 0]])
            ], commission: CommissionHint(name: "Button", room: "Hall"))
    }

    static func lock() -> DeviceDescription {
        DeviceDescription(
            localID: "lock", name: "Front Lock",
            types: [DeviceTypeDescription(id: DoorLockDeviceType.identifier, isPrimary: true, traits: [IdentifyTrait.identifier: [:], DoorLockTrait.identifier: [:]])],
            commission: CommissionHint(name: "Front Lock", room: "Hall"))
    }

    /// A core with the relay, thermometer, lamp, button and lock of plugin `gpio`, commissioned.
    static func core() -> (HomeCore, any DriverContext) {
        let core = HomeCore()
        let driver = core.context(for: "gpio")
        for d in [relay(), thermometer(), lamp(), button(), lock()] { driver.publish(d) }
        return (core, driver)
    }

    static func json(_ bytes: [UInt8]) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }
}

/// Hardware for the relay and lamp: carries out On/Off and level commands, reports back.
final class FakeOutputs: CommandHandler {
    let context: any DriverContext
    init(context: any DriverContext) { self.context = context }
    func handle(_ command: DriverCommand) async throws -> Value {
        switch (command.trait, command.command) {
        case (OnOffTrait.identifier, OnOffTrait.Command.on): context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        case (OnOffTrait.identifier, OnOffTrait.Command.off): context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, false)
        case (LevelControlTrait.identifier, LevelControlTrait.Command.moveToLevelWithOnOff):
            context.report(command.localID, LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, command.arguments["Level"] ?? .null)
        default: throw HomeError.unsupportedOperation("not this")
        }
        return .null
    }
    func write(_ write: DriverWrite) async throws { throw HomeError.unsupportedOperation("no writes") }
}
