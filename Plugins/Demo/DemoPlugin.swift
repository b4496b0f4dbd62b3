import DriverAPI
import HomeModel
import Synchronization

/// A simulated plugin that needs no hardware: a thermometer that drifts, a lamp that obeys
/// on/off/toggle and reports back, and a button pressed now and then. It shows the whole
/// path — publish, report, command, event — and is what `make run` starts on any machine.
final class DemoPlugin: DriverPlugin {
    struct Configuration: Decodable, Sendable {
        /// Seconds between thermometer readings and button presses.
        var interval: Double?
        /// Room the demo devices are commissioned into on first start (nil: leave them discovered).
        var room: String?
    }

    let manifest = PluginManifest(
        id: "demo", name: "Demo devices", version: "0.1.0",
        summary: "Simulated thermometer, lamp and button; needs no hardware")

    let lamp = Mutex(false)

    func validate(configuration: PluginConfiguration) throws {
        let config = try configuration.decode(Configuration.self)
        if let interval = config.interval, !(interval >= 0.05 && interval <= 86400) {
            throw HomeError.invalidArgument(configuration.problem(at: "interval", "must be between 0.05 and 86400 seconds"))
        }
    }

    func run(context: any DriverContext) async throws {
        let config = try context.configuration.decode(Configuration.self)
        let interval = Duration.milliseconds(Int((config.interval ?? 5) * 1000))
        func hint(_ name: String) -> CommissionHint? { config.room.map { CommissionHint(name: name, room: $0) } }

        context.publish(
            DeviceDescription(
                localID: "thermometer", name: "Demo Thermometer", manufacturer: "Hearth", model: "Demo",
                types: [
                    DeviceTypeDescription(
                        id: TemperatureSensorDeviceType.identifier, isPrimary: true,
                        traits: [
                            IdentifyTrait.identifier: [:],
                            TemperatureMeasurementTrait.identifier: [
                                TemperatureMeasurementTrait.Attribute.measuredValue: .int(2150),
                                TemperatureMeasurementTrait.Attribute.minMeasuredValue: .int(-4000),
                                TemperatureMeasurementTrait.Attribute.maxMeasuredValue: .int(8500),
                            ],
                        ])
                ], commission: hint("Thermometer")))
        context.publish(
            DeviceDescription(
                localID: "lamp", name: "Demo Lamp", manufacturer: "Hearth", model: "Demo",
                types: [
                    DeviceTypeDescription(
                        id: OnOffLightDeviceType.identifier, isPrimary: true,
                        traits: [
                            IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                            OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(lamp.withLock { $0 })],
                        ])
                ], commission: hint("Lamp")))
        context.publish(
            DeviceDescription(
                localID: "button", name: "Demo Button", manufacturer: "Hearth", model: "Demo",
                types: [
                    DeviceTypeDescription(
                        id: GenericSwitchDeviceType.identifier, isPrimary: true,
                        traits: [
                            IdentifyTrait.identifier: [:],
                            SwitchTrait.identifier: [
                                SwitchTrait.Attribute.numberOfPositions: .int(2),
                                SwitchTrait.Attribute.currentPosition: .int(0),
                            ],
                        ])
                ], commission: hint("Button")))

        var temperature: Int64 = 2150
        var tick = 0
        while !Task.isCancelled {
            try await Task.sleep(for: interval)
            tick += 1
            // A gentle, deterministic drift between 19 °C and 24 °C.
            temperature += (tick % 10 < 5) ? 10 : -10
            context.report("thermometer", TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue, .int(temperature))
            if tick % 3 == 0 {
                context.emit(
                    EventReport(
                        localID: "button", trait: SwitchTrait.identifier, event: SwitchTrait.Event.initialPress,
                        fields: ["NewPosition": .int(1)]))
            }
        }
    }

    func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        guard command.localID == "lamp", command.trait == OnOffTrait.identifier else {
            throw HomeError.unsupportedOperation("demo device \(command.localID) takes no command \(command.command.hex)")
        }
        let on: Bool
        switch command.command {
        case OnOffTrait.Command.on: on = lamp.withLock { $0 = true; return true }
        case OnOffTrait.Command.off: on = lamp.withLock { $0 = false; return false }
        case OnOffTrait.Command.toggle: on = lamp.withLock { $0.toggle(); return $0 }
        default: throw HomeError.unsupportedOperation("the demo lamp supports on, off and toggle")
        }
        // The "hardware" confirms: the new state comes back as a report.
        context.report("lamp", OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on))
        return .null
    }
}

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer { HearthPluginABI.export(DemoPlugin()) }
