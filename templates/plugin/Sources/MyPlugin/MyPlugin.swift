public import DriverAPI
public import HomeModel
import Synchronization

/// A Hearth driver plugin: virtual lamps that obey on/off/toggle and report their state on
/// every change and every `heartbeat` seconds. Replace the lamps with your hardware.
///
/// Each lamp also carries the plugin's own trait, `MyCompany.HeartbeatTrait` (``heartbeatTrait``):
/// a counter of heartbeats with a `Reset` command, declared in ``vendorTraits`` so hearthd
/// validates it, names it and routes its commands like a standard trait.
///
/// `hearth.yaml`:
///
/// ```yaml
/// plugins:
///   my-plugin:
///     heartbeat: 30
///     lamps:
///       - id: desk
///         name: Desk Lamp
///         room: Study        # optional: commissioned into this room on first sight
/// ```
public final class MyPlugin<C: Clock>: DriverPlugin where C.Duration == Duration {
    /// The plugin's configuration schema: hearthd decodes `plugins.my-plugin` into it before
    /// starting the plugin and reports mistakes by line and key path.
    public struct Configuration: Decodable, Sendable {
        public struct Lamp: Decodable, Sendable {
            public var id: String
            public var name: String
            public var room: String?
        }
        /// Seconds between state reports (besides the reports on every change).
        public var heartbeat: Double?
        public var lamps: [Lamp]
    }

    public let manifest = PluginManifest(
        id: "my-plugin", name: "My plugin", version: "0.1.0", summary: "Virtual lamps (a template to start from)")
    public var configurationType: (any Decodable.Type)? { Configuration.self }

    /// The plugin's own trait: a vendor ID (0xFFF1 is the CSA's test vendor; use yours) in the
    /// upper 16 bits, a cluster number 0xFC00…0xFFFE below.
    public static var heartbeatTrait: TraitID { 0xFFF1_FC20 }
    public static var beats: AttributeID { 0x0000 }
    public static var reset: CommandID { 0x00 }

    public var vendorTraits: [TraitDescriptor] {
        [
            .vendor(
                namespace: "MyCompany", id: Self.heartbeatTrait, name: "Heartbeat",
                attributes: [.vendor(id: Self.beats, name: "Beats", type: .uint32, unit: "beats")],
                commands: [.vendor(id: Self.reset, name: "Reset")])
        ]
    }

    let clock: C
    /// Each lamp's state, by local ID. Commands arrive on other tasks than `run`.
    let lamps = Mutex<[String: Bool]>([:])
    /// Heartbeats since the start (or the last `Reset`).
    let beats = Mutex<Int64>(0)

    /// - Parameter clock: `ContinuousClock()` in hearthd; a `ManualClock` in tests.
    public init(clock: C) { self.clock = clock }

    /// Checks what decoding cannot: ranges and rules between fields.
    public func validate(configuration: PluginConfiguration) throws {
        let config = try configuration.decode(Configuration.self)
        if let h = config.heartbeat, !(h >= 1 && h <= 86400) {
            throw HomeError.invalidArgument(configuration.problem(at: "heartbeat", "must be between 1 and 86400 seconds"))
        }
        var seen = Set<String>()
        for (i, lamp) in config.lamps.enumerated() where !seen.insert(lamp.id).inserted {
            throw HomeError.invalidArgument(configuration.problem(at: "lamps[\(i)].id", "'\(lamp.id)' is used twice"))
        }
    }

    public func run(context: any DriverContext) async throws {
        let config = try context.configuration.decode(Configuration.self)
        for lamp in config.lamps {
            let on = lamps.withLock { $0[lamp.id, default: false] }
            context.publish(
                DeviceDescription(
                    localID: lamp.id, name: lamp.name, manufacturer: "Me", model: "Virtual lamp",
                    types: [
                        DeviceTypeDescription(
                            id: OnOffLightDeviceType.identifier, isPrimary: true,
                            // No Identify: a virtual lamp has no way to show itself, so it does
                            // not advertise the trait.
                            traits: [
                                GroupsTrait.identifier: [:],
                                OnOffTrait.identifier: [OnOffTrait.Attribute.onOff: .bool(on)],
                                Self.heartbeatTrait: [Self.beats: .int(beats.withLock { $0 })],
                            ])
                    ],
                    commission: lamp.room.map { CommissionHint(name: lamp.name, room: $0) },
                    // Shown as the device's Basic Information.
                    identity: DeviceIdentity(
                        vendorName: "Me", productName: "Virtual lamp", firmwareVersion: manifest.version, uniqueID: "my-plugin-\(lamp.id)")))
        }
        context.log(.info, "serving \(config.lamps.count) lamps")
        let heartbeat = Duration.milliseconds(Int64((config.heartbeat ?? 60) * 1000))
        // Until cancelled: the sleep throws CancellationError on shutdown, which ends `run`.
        while true {
            try await clock.sleep(for: heartbeat)
            let states = lamps.withLock { $0 }
            let count = beats.withLock { $0 += 1; return $0 }
            context.report(
                config.lamps.flatMap {
                    [
                        AttributeReport(
                            localID: $0.id, trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff,
                            value: .bool(states[$0.id] ?? false)),
                        AttributeReport(localID: $0.id, trait: Self.heartbeatTrait, attribute: Self.beats, value: .int(count)),
                    ]
                })
        }
    }

    public func handle(_ command: DriverCommand, context: any DriverContext) async throws -> Value {
        if command.trait == Self.heartbeatTrait, command.command == Self.reset {
            beats.withLock { $0 = 0 }
            context.report(command.localID, Self.heartbeatTrait, Self.beats, .int(0))
            return .null
        }
        guard command.trait == OnOffTrait.identifier else {
            throw HomeError.unsupportedOperation("\(command.localID) has only an On/Off trait")
        }
        let on: Bool
        switch command.command {
        case OnOffTrait.Command.on: on = lamps.withLock { $0[command.localID] = true; return true }
        case OnOffTrait.Command.off: on = lamps.withLock { $0[command.localID] = false; return false }
        case OnOffTrait.Command.toggle: on = lamps.withLock { $0[command.localID, default: false].toggle(); return $0[command.localID]! }
        default: throw HomeError.unsupportedOperation("the lamps support on, off and toggle")
        }
        // Real hardware would confirm; this virtual lamp reports its new state at once.
        context.report(command.localID, OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on))
        return .null
    }
}

// The three C entry points hearthd looks for. Keep them as they are.

@_cdecl("hearth_plugin_abi_version")
public func hearthPluginABIVersion() -> UInt32 { HearthPluginABI.version }

@_cdecl("hearth_plugin_compiler_tag")
public func hearthPluginCompilerTag() -> UnsafePointer<CChar> { HearthPluginABI.compilerTag }

@_cdecl("hearth_plugin_create")
public func hearthPluginCreate() -> UnsafeMutableRawPointer { HearthPluginABI.export(MyPlugin(clock: ContinuousClock())) }
