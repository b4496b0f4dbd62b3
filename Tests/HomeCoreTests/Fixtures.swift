import DriverAPI
import HomeCore
import HomeModel

/// Device descriptions used across the core's tests.
enum Fixtures {
    static func lamp(_ id: String = "lamp", name: String = "Lamp", on: Bool = false, commission: CommissionHint? = nil) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: name,
            types: [
                DeviceTypeDescription(
                    id: OnOffLightDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                        OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(on)],
                    ])
            ], commission: commission)
    }

    static func thermometer(_ id: String = "thermo", celsius100: Int64 = 2000, commission: CommissionHint? = nil) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: "Thermometer",
            types: [
                DeviceTypeDescription(
                    id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:],
                        TemperatureMeasurementTrait.identifier: [TemperatureMeasurementTrait.Attribute.measuredValue: .int(celsius100)],
                    ]),
                DeviceTypeDescription(
                    id: HumiditySensorDeviceType.identifier,
                    traits: [
                        IdentifyTrait.identifier: [:],
                        RelativeHumidityMeasurementTrait.identifier: [RelativeHumidityMeasurementTrait.Attribute.measuredValue: .int(4300)],
                    ]),
            ], commission: commission)
    }

    static func button(_ id: String = "button", commission: CommissionHint? = nil) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: "Button",
            types: [
                DeviceTypeDescription(
                    id: GenericSwitchDeviceType.identifier, isPrimary: true,
                    traits: [
                        IdentifyTrait.identifier: [:],
                        SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: 2, SwitchTrait.Attribute.currentPosition: 0],
                    ])
            ], commission: commission)
    }

    static func lock(_ id: String = "lock", commission: CommissionHint? = nil) -> DeviceDescription {
        DeviceDescription(
            localID: id, name: "Front Lock",
            types: [
                DeviceTypeDescription(
                    id: DoorLockDeviceType.identifier, isPrimary: true,
                    traits: [IdentifyTrait.identifier: [:], DoorLockTrait.identifier: [:]])
            ], commission: commission)
    }

    static let inKitchen = CommissionHint(name: "Lamp", room: "Kitchen")
}

/// A command handler that behaves like hardware: it carries out On/Off commands and reports the
/// new state back through the driver context, after the command returns.
final class FakeLampHardware: CommandHandler {
    let context: any DriverContext
    init(context: any DriverContext) { self.context = context }

    func handle(_ command: DriverCommand) async throws -> Value {
        guard command.trait == OnOffTrait.identifier else { throw HomeError.unsupportedOperation("lamp only does On/Off") }
        switch command.command {
        case OnOffTrait.Command.on: context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, true)
        case OnOffTrait.Command.off: context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, false)
        default: throw HomeError.unsupportedOperation("lamp does on and off only")
        }
        return .null
    }

    func write(_ write: DriverWrite) async throws { throw HomeError.unsupportedOperation("no writes") }
}

extension Updates {
    /// The next element, or nil when the subscription ended.
    func first() async -> Element? {
        var it = makeAsyncIterator()
        return await it.next()
    }
}
