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

    /// An Extended Color Light: colour temperature 153…454 mireds, hue/saturation and xy, now in xy.
    static func bulb() -> DeviceDescription {
        DeviceDescription(
            localID: "bulb", name: "Bulb",
            types: [
                DeviceTypeDescription(
                    id: ExtendedColorLightDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                        OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(false)],
                        LevelControlTrait.identifier: [LevelControlTrait.Attribute.currentLevel: .int(127)],
                        ColorControlTrait.identifier: [
                            ColorControlTrait.Attribute.colorMode: .int(1), ColorControlTrait.Attribute.colorCapabilities: .int(0x19),
                            ColorControlTrait.Attribute.currentX: .int(20000), ColorControlTrait.Attribute.currentY: .int(21000),
                            ColorControlTrait.Attribute.currentHue: .int(0), ColorControlTrait.Attribute.currentSaturation: .int(0),
                            ColorControlTrait.Attribute.colorTemperatureMireds: .int(250),
                            ColorControlTrait.Attribute.colorTempPhysicalMinMireds: .int(153), ColorControlTrait.Attribute.colorTempPhysicalMaxMireds: .int(454),
                        ],
                    ])
            ], commission: CommissionHint(name: "Bulb", room: "Hall"))
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

    /// A core with the relay, thermometer, lamp, colour bulb, button and lock of plugin `gpio`, commissioned.
    static func core() -> (HomeCore, any DriverContext) {
        let core = HomeCore()
        let driver = core.context(for: "gpio")
        for d in [relay(), thermometer(), lamp(), bulb(), button(), lock()] { driver.publish(d) }
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
            context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        case (ColorControlTrait.identifier, ColorControlTrait.Command.moveToColorTemperature):
            color(command.localID, 2, [ColorControlTrait.Attribute.colorTemperatureMireds: command.arguments["ColorTemperatureMireds"] ?? .null])
        case (ColorControlTrait.identifier, ColorControlTrait.Command.moveToHueAndSaturation):
            color(command.localID, 0, [
                ColorControlTrait.Attribute.currentHue: command.arguments["Hue"] ?? .null,
                ColorControlTrait.Attribute.currentSaturation: command.arguments["Saturation"] ?? .null,
            ])
        case (ColorControlTrait.identifier, ColorControlTrait.Command.moveToColor):
            color(command.localID, 1, [
                ColorControlTrait.Attribute.currentX: command.arguments["ColorX"] ?? .null, ColorControlTrait.Attribute.currentY: command.arguments["ColorY"] ?? .null,
            ])
        default: throw HomeError.unsupportedOperation("not this")
        }
        return .null
    }
    func color(_ localID: String, _ mode: Int64, _ attributes: [AttributeID: Value]) {
        for (attribute, value) in attributes.sorted(by: { $0.key < $1.key }) { context.report(localID, ColorControlTrait.identifier, attribute, value) }
        context.report(localID, ColorControlTrait.identifier, ColorControlTrait.Attribute.colorMode, .int(mode))
    }
    func write(_ write: DriverWrite) async throws { throw HomeError.unsupportedOperation("no writes") }
}
