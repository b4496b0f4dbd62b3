import DriverAPI
import HomeModel
import Synchronization

/// A simulated plugin that needs no hardware: a thermometer that drifts, a lamp that obeys
/// on/off/toggle and reports back, and a button pressed now and then. It shows the whole
/// path — publish, report, command, event — and is what `make run` starts on any machine.
///
/// It also shows a vendor trait (the lamp's `ExampleOrganization.SpinnerTrait`), a device's
/// identity (`BasicInformation`) and Identify (each device "identifies" by counting its
/// `IdentifyTime` down, which makes its tile flash in the web page).
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
    let spinner = Mutex<Int64>(0)
    /// Identify requests (device, seconds) for the run loop, which owns the countdowns.
    let identifyRequests = Mutex<AsyncStream<(String, Int64)>.Continuation?>(nil)
    /// The latest identify request per device (an older countdown stops when it sees a newer).
    let identifying = Mutex<[String: Int]>([:])

    var vendorTraits: [TraitDescriptor] { [Spinner.descriptor] }

    /// Who made each demo device: shown as its `BasicInformation`.
    static func identity(_ localID: String, product: String, productID: UInt16) -> DeviceIdentity {
        DeviceIdentity(
            vendorName: "Hearth", vendorID: 0xFFF1, productName: product, productID: productID, partNumber: "DEMO-\(productID)",
            serialNumber: "DEMO-\(localID.uppercased())-0001", firmwareVersion: "0.1.0", hardwareVersion: "1",
            uniqueID: "hearth-demo-\(localID)")
    }

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
                ], commission: hint("Thermometer"),
                identity: Self.identity("thermometer", product: "Demo Thermometer", productID: 0x8001)))
        context.publish(
            DeviceDescription(
                localID: "lamp", name: "Demo Lamp", manufacturer: "Hearth", model: "Demo",
                types: [
                    DeviceTypeDescription(
                        id: OnOffLightDeviceType.identifier, isPrimary: true,
                        traits: [
                            IdentifyTrait.identifier: [:], GroupsTrait.identifier: [:],
                            OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(lamp.withLock { $0 })],
                            Spinner.trait: [Spinner.rpm: .int(spinner.withLock { $0 })],
                        ])
                ], commission: hint("Lamp"),
                identity: Self.identity("lamp", product: "Demo Lamp", productID: 0x8002)))
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
                ], commission: hint("Button"),
                identity: Self.identity("button", product: "Demo Button", productID: 0x8003)))

        let (requests, continuation) = AsyncStream<(String, Int64)>.makeStream()
        identifyRequests.withLock { $0 = continuation }
        defer { identifyRequests.withLock { $0 = nil } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.identifyCountdowns(requests, context: context) }
            group.addTask { try await self.simulate(interval: interval, context: context) }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Counts each identifying device's `IdentifyTime` down to 0, a second at a time (a new
    /// request for the same device restarts it).
    func identifyCountdowns(_ requests: AsyncStream<(String, Int64)>, context: any DriverContext) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for await (device, seconds) in requests {
                let generation = self.identifying.withLock { $0[device, default: 0] += 1; return $0[device]! }
                group.addTask {
                    var left = seconds
                    while left > 0 {
                        guard self.identifying.withLock({ $0[device] }) == generation else { return }
                        context.report(device, IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime, .int(left))
                        try await Task.sleep(for: .seconds(1))
                        left -= 1
                    }
                    guard self.identifying.withLock({ $0[device] }) == generation else { return }
                    context.report(device, IdentifyTrait.identifier, IdentifyTrait.Attribute.identifyTime, .int(0))
                }
            }
            try await group.waitForAll()
        }
    }

    /// The drifting thermometer and the button pressed now and then.
    func simulate(interval: Duration, context: any DriverContext) async throws {
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
        if command.trait == IdentifyTrait.identifier, command.command == IdentifyTrait.Command.identify {
            let seconds = command.arguments["IdentifyTime"]?.intValue ?? 0
            guard let requests = identifyRequests.withLock({ $0 }) else {
                throw HomeError.deviceOffline("the demo plugin is not running")
            }
            requests.yield((command.localID, max(0, min(seconds, 65535))))
            return .null
        }
        if command.localID == "lamp", command.trait == Spinner.trait {
            let rpm: Int64
            switch command.command {
            case Spinner.spin: rpm = command.arguments["RPM"]?.intValue ?? 0
            case Spinner.stop: rpm = 0
            default: throw HomeError.unsupportedOperation("the spinner supports Spin and Stop")
            }
            guard (0...Spinner.maximumRPM).contains(rpm) else {
                throw HomeError.invalidArgument("the spinner turns at 0…\(Spinner.maximumRPM) rpm, not \(rpm)")
            }
            spinner.withLock { $0 = rpm }
            context.report("lamp", Spinner.trait, Spinner.rpm, .int(rpm))
            context.emit(EventReport(localID: "lamp", trait: Spinner.trait, event: Spinner.speedReached, fields: ["RPM": .int(rpm)]))
            return .null
        }
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
