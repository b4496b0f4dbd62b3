public import HomeModel
import HashTreeCollections

/// A named set of target values for scene-able attributes (HomeKit's action set, Matter's
/// scene), in one structure and optionally one room, with a transition time.
///
/// ```swift
/// let evening = Scene(id: "evening", name: "Evening", structureID: home, targets: [
///     SceneTarget(device: "gpio:lamp", deviceType: OnOffLightDeviceType.identifier,
///                 trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, value: true)])
/// try scenes.create(evening, as: admin)
/// let result = try await scenes.recall("evening", as: member)
/// ```
public struct Scene: Hashable, Sendable, Codable, Identifiable {
    /// A slug, e.g. `evening`.
    public var id: String
    public var name: String
    public var structureID: StructureID
    public var roomID: RoomID?
    /// Sent with commands that take one (level, colour temperature), in milliseconds.
    public var transitionMilliseconds: Int
    public var targets: [SceneTarget]
    /// Whether sensitive targets (locks) are allowed: only an admin may set this.
    public var allowSensitive: Bool
    /// Bumped on every save; an update names the revision it edits (`conflict` otherwise).
    public var revision: Int
    /// `api` or `config` (config-owned scenes are read-only through the API).
    public var source: String
    /// Where a config-owned scene is defined, e.g. `etc/hearth.yaml:12`.
    public var configRef: String?

    public init(
        id: String, name: String, structureID: StructureID, roomID: RoomID? = nil, transitionMilliseconds: Int = 0,
        targets: [SceneTarget], allowSensitive: Bool = false, revision: Int = 0, source: String = "api", configRef: String? = nil
    ) {
        self.id = id
        self.name = name
        self.structureID = structureID
        self.roomID = roomID
        self.transitionMilliseconds = transitionMilliseconds
        self.targets = targets
        self.allowSensitive = allowSensitive
        self.revision = revision
        self.source = source
        self.configRef = configRef
    }
}

/// One target value: a device's attribute, of one of its device types.
public struct SceneTarget: Hashable, Sendable, Codable {
    public var device: DeviceID
    public var deviceType: DeviceTypeID
    public var trait: TraitID
    public var attribute: AttributeID
    public var value: Value

    public init(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value) {
        self.device = device
        self.deviceType = deviceType
        self.trait = trait
        self.attribute = attribute
        self.value = value
    }
}

/// Which attributes a scene may hold (the Matter Scenes-quality attributes Hearth supports).
public enum SceneableAttributes {
    public struct Entry: Hashable, Sendable {
        public let trait: TraitID
        public let attribute: AttributeID
        /// Locks: allowed only in a scene an admin marked `allowSensitive`.
        public let sensitive: Bool
    }

    public static let all: [Entry] = [
        Entry(trait: OnOffTrait.identifier, attribute: OnOffTrait.Attribute.onOff, sensitive: false),
        Entry(trait: LevelControlTrait.identifier, attribute: LevelControlTrait.Attribute.currentLevel, sensitive: false),
        Entry(trait: ColorControlTrait.identifier, attribute: ColorControlTrait.Attribute.colorTemperatureMireds, sensitive: false),
        Entry(trait: WindowCoveringTrait.identifier, attribute: WindowCoveringTrait.Attribute.targetPositionLiftPercent100ths, sensitive: false),
        Entry(trait: WindowCoveringTrait.identifier, attribute: WindowCoveringTrait.Attribute.targetPositionTiltPercent100ths, sensitive: false),
        Entry(trait: ThermostatTrait.identifier, attribute: ThermostatTrait.Attribute.occupiedCoolingSetpoint, sensitive: false),
        Entry(trait: ThermostatTrait.identifier, attribute: ThermostatTrait.Attribute.occupiedHeatingSetpoint, sensitive: false),
        Entry(trait: ThermostatTrait.identifier, attribute: ThermostatTrait.Attribute.systemMode, sensitive: false),
        Entry(trait: FanControlTrait.identifier, attribute: FanControlTrait.Attribute.fanMode, sensitive: false),
        Entry(trait: FanControlTrait.identifier, attribute: FanControlTrait.Attribute.percentSetting, sensitive: false),
        Entry(trait: DoorLockTrait.identifier, attribute: DoorLockTrait.Attribute.lockState, sensitive: true),
    ]

    /// The entry for a trait's attribute, nil when it is not scene-able.
    public static func entry(_ trait: TraitID, _ attribute: AttributeID) -> Entry? {
        all.first { $0.trait == trait && $0.attribute == attribute }
    }
}

/// One step a scene's recall sends: a command or an attribute write, through the normal path.
public enum SceneStep: Hashable, Sendable {
    case command(CommandRequest)
    case write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value)

    public var device: DeviceID {
        switch self {
        case .command(let c): c.device
        case .write(let d, _, _, _, _): d
        }
    }
}

extension Scene {
    /// The commands and writes that bring the devices to the targets (Matter's compilation:
    /// OnOff false → Off; OnOff true with a level → MoveToLevelWithOnOff; a level alone →
    /// MoveToLevelWithOnOff; colour temperature → MoveToColorTemperature; cover → GoTo…Percentage;
    /// lock → LockDoor/UnlockDoor; thermostat and fan attributes → writes).
    public func steps() -> [SceneStep] {
        let tenths = Value.int(Int64(min(65_534, transitionMilliseconds / 100)))
        var steps: [SceneStep] = []
        let levels = Dictionary(
            targets.filter { $0.trait == LevelControlTrait.identifier }.map { ("\($0.device)|\($0.deviceType.hex)", $0.value) },
            uniquingKeysWith: { _, last in last })
        let offs = Set(
            targets.filter { $0.trait == OnOffTrait.identifier && $0.value == .bool(false) }.map { "\($0.device)|\($0.deviceType.hex)" })
        for t in targets {
            let key = "\(t.device)|\(t.deviceType.hex)"
            func command(_ trait: TraitID, _ command: CommandID, _ args: [String: Value] = [:]) {
                steps.append(.command(CommandRequest(device: t.device, deviceType: t.deviceType, trait: trait, command: command, arguments: args)))
            }
            switch (t.trait, t.attribute) {
            case (OnOffTrait.identifier, _):
                if t.value == .bool(false) {
                    command(OnOffTrait.identifier, OnOffTrait.Command.off)
                } else if levels[key] == nil {
                    command(OnOffTrait.identifier, OnOffTrait.Command.on)
                }  // else the level's MoveToLevelWithOnOff turns it on
            case (LevelControlTrait.identifier, _):
                if offs.contains(key) { continue }  // off wins: a level would turn it back on
                command(
                    LevelControlTrait.identifier, LevelControlTrait.Command.moveToLevelWithOnOff,
                    ["Level": t.value, "TransitionTime": tenths, "OptionsMask": 0, "OptionsOverride": 0])
            case (ColorControlTrait.identifier, _):
                command(
                    ColorControlTrait.identifier, ColorControlTrait.Command.moveToColorTemperature,
                    ["ColorTemperatureMireds": t.value, "TransitionTime": tenths, "OptionsMask": 0, "OptionsOverride": 0])
            case (WindowCoveringTrait.identifier, WindowCoveringTrait.Attribute.targetPositionLiftPercent100ths):
                command(WindowCoveringTrait.identifier, WindowCoveringTrait.Command.goToLiftPercentage, ["LiftPercent100thsValue": t.value])
            case (WindowCoveringTrait.identifier, _):
                command(WindowCoveringTrait.identifier, WindowCoveringTrait.Command.goToTiltPercentage, ["TiltPercent100thsValue": t.value])
            case (DoorLockTrait.identifier, _):
                // LockState 1 = Locked, 2 = Unlocked.
                command(DoorLockTrait.identifier, t.value == .int(2) ? DoorLockTrait.Command.unlockDoor : DoorLockTrait.Command.lockDoor)
            default:
                steps.append(.write(device: t.device, deviceType: t.deviceType, trait: t.trait, attribute: t.attribute, value: t.value))
            }
        }
        return steps
    }

    /// Whether every target holds now (Matter's SceneValid, computed live from the state):
    /// a light that should be off only needs to be off; covers compare their current position.
    public func isActive(in state: HomeState) -> Bool {
        guard !targets.isEmpty else { return false }
        let offs = Set(targets.filter { $0.trait == OnOffTrait.identifier && $0.value == .bool(false) }.map { "\($0.device)|\($0.deviceType.hex)" })
        for t in targets {
            guard let traitState = state.devices[t.device]?.type(t.deviceType)?.traits[t.trait] else { return false }
            if t.trait == LevelControlTrait.identifier, offs.contains("\(t.device)|\(t.deviceType.hex)") { continue }
            var attribute = t.attribute
            if t.trait == WindowCoveringTrait.identifier {
                // The current position, when the device reports it; else the target.
                let current = attribute == WindowCoveringTrait.Attribute.targetPositionLiftPercent100ths
                    ? WindowCoveringTrait.Attribute.currentPositionLiftPercent100ths
                    : WindowCoveringTrait.Attribute.currentPositionTiltPercent100ths
                if traitState.attributes[current] != nil { attribute = current }
            }
            guard let now = traitState.attributes[attribute], Self.same(now, t.value) else { return false }
        }
        return true
    }

    static func same(_ a: Value, _ b: Value) -> Bool {
        if a == b { return true }
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return false
    }
}
