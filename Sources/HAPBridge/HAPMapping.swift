public import HAP
public import HomeModel

/// What writing a characteristic does on the home: a command or an attribute write, through
/// the normal command path.
public enum HomeAction: Sendable, Hashable {
    case invoke(CommandRequest)
    case write(device: DeviceID, deviceType: DeviceTypeID, trait: TraitID, attribute: AttributeID, value: Value)
}

/// How one characteristic follows its device: read the value from the snapshot, map a write
/// to actions.
public struct CharacteristicBinding: Sendable {
    public let read: @Sendable (DeviceSnapshot) -> HAPValue?
    public let write: (@Sendable (HAPValue, DeviceSnapshot) -> [HomeAction]?)?
}

/// Stable instance IDs for one accessory: a key per service or characteristic ("light",
/// "light.on") to an iid; new keys get the next number. Persisted by the bridge so aid/iid
/// survive restarts and reordering.
public struct IIDAllocator: Sendable, Hashable {
    public private(set) var iids: [String: Int]
    public private(set) var added: [String: Int] = [:]

    public init(_ iids: [String: Int]) { self.iids = iids }

    public mutating func iid(_ key: String) -> Int {
        if let i = iids[key] { return i }
        // iid 1 is the accessory information service (HAP R2 2.6.1.1).
        let next = key == "info" ? 1 : max(1, iids.values.max() ?? 1) + 1
        iids[key] = next
        added[key] = next
        return next
    }
}

/// One exposed device (or the bridge) as a HAP accessory, with its bindings.
public struct MappedAccessory: Sendable {
    public var accessory: HAPAccessory
    public var bindings: [Int: CharacteristicBinding]
    /// The programmable switch characteristic per button position (Switch events).
    public var buttons: [Int: Int]
    public var device: DeviceSnapshot?
}

/// Hearth's Matter device types and traits → HAP services and characteristics (HAP R2
/// chapters 8–9). Pure: no I/O.
public enum HAPMapper {
    /// The bridge accessory (aid 1): information and protocol version.
    public static func bridge(name: String, serial: String, firmware: String, iids: inout IIDAllocator) -> MappedAccessory {
        var b = Builder(iids: iids, device: nil)
        b.information(name: name, manufacturer: "Hearth", model: "Hearth bridge", serial: serial, firmware: firmware)
        b.service("protocol", type: "A2") { s in
            s.constant("version", type: "37", .string("1.1.0"))
        }
        iids = b.iids
        return MappedAccessory(accessory: HAPAccessory(aid: 1, services: b.services), bindings: b.bindings, buttons: [:], device: nil)
    }

    static let lightTypes: Set<DeviceTypeID> = [
        OnOffLightDeviceType.identifier, DimmableLightDeviceType.identifier, ColorTemperatureLightDeviceType.identifier,
        ExtendedColorLightDeviceType.identifier,
    ]

    /// Whether anything of the device maps to HAP (it would be an accessory).
    public static func maps(_ device: DeviceSnapshot) -> Bool {
        var scratch = IIDAllocator([:])
        return accessory(for: device, aid: 0, iids: &scratch) != nil
    }

    /// A device as an accessory; nil when nothing of it maps to HAP.
    public static func accessory(for device: DeviceSnapshot, aid: Int, iids: inout IIDAllocator, firmware: String = "1.0.0") -> MappedAccessory? {
        var b = Builder(iids: iids, device: device)
        b.information(name: device.name, manufacturer: device.manufacturer ?? "Hearth", model: device.model ?? "Hearth device",
            serial: device.id.rawValue, firmware: firmware)
        let primary = device.primaryType?.id
        for type in device.types {
            map(type, device: device, primary: type.id == primary, into: &b)
        }
        guard b.services.count > 1 else { return nil }
        iids = b.iids
        var accessory = HAPAccessory(aid: aid, services: b.services)
        // Offline: every characteristic answers "not reachable" (HAP R2 6.7.1.4), not a stale value.
        if device.sourceConnectivity.connectivityState == .offline {
            for s in accessory.services.indices where s > 0 {
                for c in accessory.services[s].characteristics.indices { accessory.services[s].characteristics[c].status = .unreachable }
            }
        }
        return MappedAccessory(accessory: accessory, bindings: b.bindings, buttons: b.buttons, device: device)
    }

    static func map(_ type: DeviceTypeState, device: DeviceSnapshot, primary: Bool, into b: inout Builder) {
        let t = type.traits
        let id = device.id
        let dt = type.id
        func attr(_ trait: TraitID, _ a: AttributeID) -> @Sendable (DeviceSnapshot) -> Value? {
            { d in d.type(dt)?.traits[trait]?[a] }
        }
        if t[OnOffTrait.identifier] != nil {
            let onOff = attr(OnOffTrait.identifier, OnOffTrait.Attribute.onOff)
            let writeOn: @Sendable (HAPValue, DeviceSnapshot) -> [HomeAction]? = { v, _ in
                guard let on = v.bool else { return nil }
                return [.invoke(CommandRequest(device: id, deviceType: dt, trait: OnOffTrait.identifier, command: on ? OnOffTrait.Command.on : OnOffTrait.Command.off))]
            }
            if lightTypes.contains(dt) {
                b.service("light", type: "43", primary: primary) { s in
                    s.characteristic("on", type: "25", .bool, read: { onOff($0)?.boolValue.map(HAPValue.bool) }, write: writeOn)
                    if t[LevelControlTrait.identifier] != nil {
                        let level = attr(LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel)
                        s.characteristic("brightness", type: "8", .int, unit: "percentage", min: 0, max: 100, step: 1, read: { d in
                            level(d)?.intValue.map { .int(Int((Double(min(max($0, 0), 254)) * 100 / 254).rounded())) }
                        }, write: { v, _ in
                            guard let p = v.number else { return nil }
                            if p <= 0 {
                                return [.invoke(CommandRequest(device: id, deviceType: dt, trait: OnOffTrait.identifier, command: OnOffTrait.Command.off))]
                            }
                            let lvl = max(1, min(254, Int((p * 254 / 100).rounded())))
                            return [.invoke(CommandRequest(
                                device: id, deviceType: dt, trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevelWithOnOff,
                                arguments: ["Level": .int(Int64(lvl)), "TransitionTime": .null, "OptionsMask": .int(0), "OptionsOverride": .int(0)]))]
                        })
                    }
                    if t[ColorControlTrait.identifier] != nil {
                        let mireds = attr(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds)
                        s.characteristic("colortemp", type: "CE", .uint32, min: 140, max: 500, step: 1, read: { d in
                            mireds(d)?.intValue.map { .int(Int(min(max($0, 140), 500))) }
                        }, write: { v, _ in
                            guard let m = v.number else { return nil }
                            return [.invoke(CommandRequest(
                                device: id, deviceType: dt, trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToColorTemperature,
                                arguments: ["ColorTemperatureMireds": .int(Int64(m)), "TransitionTime": .int(0), "OptionsMask": .int(0), "OptionsOverride": .int(0)]))]
                        })
                    }
                }
            } else {
                let outlet = dt == OnOffPlugInUnitDeviceType.identifier || dt == DimmablePlugInUnitDeviceType.identifier
                b.service(outlet ? "outlet" : "switch", type: outlet ? "47" : "49", primary: primary) { s in
                    s.characteristic("on", type: "25", .bool, read: { onOff($0)?.boolValue.map(HAPValue.bool) }, write: writeOn)
                    if outlet { s.characteristic("inuse", type: "26", .bool, read: { onOff($0)?.boolValue.map(HAPValue.bool) }) }
                }
            }
        }
        if t[BooleanStateTrait.identifier] != nil {
            let state = attr(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue)
            if dt == WaterLeakDetectorDeviceType.identifier {
                b.service("leak", type: "83", primary: primary) { s in
                    s.characteristic("leak", type: "70", .uint8, min: 0, max: 1, read: { state($0)?.boolValue.map { .int($0 ? 1 : 0) } })
                }
            } else if dt == ContactSensorDeviceType.identifier || !b.has("contact") {
                // Matter: true = contact (closed). HAP ContactSensorState: 0 = detected.
                b.service("contact", type: "80", primary: primary) { s in
                    s.characteristic("state", type: "6A", .uint8, min: 0, max: 1, read: { state($0)?.boolValue.map { .int($0 ? 0 : 1) } })
                }
            }
        }
        if t[OccupancySensingTrait.identifier] != nil {
            let occ = attr(OccupancySensingTrait.identifier, OccupancySensingTrait.Attribute.occupancy)
            b.service("motion", type: "85", primary: primary) { s in
                s.characteristic("detected", type: "22", .bool, read: { occ($0)?.intValue.map { .bool($0 & 1 == 1) } })
            }
        }
        if t[SmokeCOAlarmTrait.identifier] != nil {
            let smoke = attr(SmokeCOAlarmTrait.identifier, SmokeCOAlarmTrait.Attribute.smokeState)
            b.service("smoke", type: "87", primary: primary) { s in
                s.characteristic("detected", type: "76", .uint8, min: 0, max: 1, read: { smoke($0)?.intValue.map { .int($0 > 0 ? 1 : 0) } })
            }
        }
        if t[TemperatureMeasurementTrait.identifier] != nil && dt != ThermostatDeviceType.identifier {
            let v = attr(TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue)
            b.service("temperature", type: "8A", primary: primary) { s in
                s.characteristic("current", type: "11", .float, unit: "celsius", min: -270, max: 100, step: 0.1, read: { d in
                    v(d)?.intValue.flatMap { Int16(exactly: $0) }.map { .double(min(100, max(-270, Units.celsius(temperatureValue: $0)))) }
                })
            }
        }
        if t[RelativeHumidityMeasurementTrait.identifier] != nil {
            let v = attr(RelativeHumidityMeasurementTrait.identifier, 0x0000)
            b.service("humidity", type: "82", primary: primary) { s in
                s.characteristic("current", type: "10", .float, unit: "percentage", min: 0, max: 100, step: 1, read: { d in
                    v(d)?.intValue.flatMap { UInt16(exactly: $0) }.map { .double(min(100, Units.percent(humidityValue: $0))) }
                })
            }
        }
        if t[IlluminanceMeasurementTrait.identifier] != nil {
            let v = attr(IlluminanceMeasurementTrait.identifier, 0x0000)
            b.service("light-level", type: "84", primary: primary) { s in
                s.characteristic("current", type: "6B", .float, unit: "lux", min: 0.0001, max: 100_000, read: { d in
                    v(d)?.intValue.flatMap { UInt16(exactly: $0) }.map { .double(min(100_000, max(0.0001, Units.lux(illuminanceValue: $0)))) }
                })
            }
        }
        if t[AirQualityTrait.identifier] != nil {
            let v = attr(AirQualityTrait.identifier, AirQualityTrait.Attribute.airQuality)
            b.service("air-quality", type: "8D", primary: primary) { s in
                // Matter: 0 unknown, 1 good … 6 extremely poor. HAP: 0 unknown, 1 excellent … 5 poor.
                s.characteristic("quality", type: "95", .uint8, min: 0, max: 5, read: { d in v(d)?.intValue.map { .int(Int(min($0, 5))) } })
            }
        }
        if let sw = t[SwitchTrait.identifier] {
            let positions = Int(sw[SwitchTrait.Attribute.numberOfPositions]?.intValue ?? 2)
            for button in 1...max(1, min(positions - 1, 8)) {
                b.service("button-\(button)", type: "89", primary: primary && button == 1) { s in
                    let iid = s.characteristic("event", type: "73", .uint8, perms: ["pr", "ev"], min: 0, max: 2, read: { _ in .null })
                    s.constant("index", type: "CB", .int(button), format: .uint8)
                    s.buttons[button] = iid
                }
            }
        }
        if t[DoorLockTrait.identifier] != nil {
            let state = attr(DoorLockTrait.identifier, DoorLockTrait.Attribute.lockState)
            b.service("lock", type: "45", primary: primary) { s in
                // Matter LockState: 0 not fully locked, 1 locked, 2 unlocked, 3 unlatched; HAP: 0 unsecured, 1 secured, 2 jammed, 3 unknown.
                s.characteristic("current", type: "1D", .uint8, min: 0, max: 3, read: { d in
                    guard let v = state(d)?.intValue else { return .int(3) }
                    return .int(v == 1 ? 1 : v == 0 ? 2 : 0)
                })
                s.characteristic("target", type: "1E", .uint8, min: 0, max: 1, read: { d in .int(state(d)?.intValue == 1 ? 1 : 0) }, write: { v, _ in
                    guard let n = v.number, n == 0 || n == 1 else { return nil }
                    return [.invoke(CommandRequest(device: id, deviceType: dt, trait: DoorLockTrait.identifier,
                        command: n == 1 ? DoorLockTrait.Command.lockDoor : DoorLockTrait.Command.unlockDoor))]
                })
            }
        }
        if t[WindowCoveringTrait.identifier] != nil {
            let cur = attr(WindowCoveringTrait.identifier, WindowCoveringTrait.Attribute.currentPositionLiftPercent100ths)
            let tgt = attr(WindowCoveringTrait.identifier, WindowCoveringTrait.Attribute.targetPositionLiftPercent100ths)
            // Matter: percent closed (100ths); HAP: percent open.
            let open: @Sendable (Value?) -> HAPValue? = { v in v?.intValue.map { .int(100 - Int((Double(min(max($0, 0), 10_000)) / 100).rounded())) } }
            b.service("covering", type: "8C", primary: primary) { s in
                s.characteristic("current", type: "6D", .uint8, unit: "percentage", min: 0, max: 100, step: 1, read: { open(cur($0)) })
                s.characteristic("target", type: "7C", .uint8, unit: "percentage", min: 0, max: 100, step: 1, read: { open(tgt($0) ?? cur($0)) }, write: { v, _ in
                    guard let p = v.number else { return nil }
                    return [.invoke(CommandRequest(device: id, deviceType: dt, trait: WindowCoveringTrait.identifier, command: WindowCoveringTrait.Command.goToLiftPercentage,
                        arguments: ["LiftPercent100thsValue": .int(Int64((100 - p) * 100))]))]
                })
                s.characteristic("state", type: "72", .uint8, min: 0, max: 2, read: { _ in .int(2) })
            }
        }
        if t[ThermostatTrait.identifier] != nil {
            let local = attr(ThermostatTrait.identifier, ThermostatTrait.Attribute.localTemperature)
            let mode = attr(ThermostatTrait.identifier, ThermostatTrait.Attribute.systemMode)
            let running = attr(ThermostatTrait.identifier, ThermostatTrait.Attribute.thermostatRunningMode)
            let heat = attr(ThermostatTrait.identifier, ThermostatTrait.Attribute.occupiedHeatingSetpoint)
            let cool = attr(ThermostatTrait.identifier, ThermostatTrait.Attribute.occupiedCoolingSetpoint)
            // Matter SystemMode: 0 off, 1 auto, 3 cool, 4 heat; HAP target: 0 off, 1 heat, 2 cool, 3 auto.
            let toHAP: [Int64: Int] = [0: 0, 1: 3, 3: 2, 4: 1]
            let toMatter: [Int: Int64] = [0: 0, 1: 4, 2: 3, 3: 1]
            b.service("thermostat", type: "4A", primary: primary) { s in
                s.characteristic("current-state", type: "0F", .uint8, min: 0, max: 2, read: { d in
                    let r = running(d)?.intValue ?? mode(d)?.intValue ?? 0
                    return .int(r == 4 ? 1 : r == 3 ? 2 : 0)
                })
                s.characteristic("target-state", type: "33", .uint8, min: 0, max: 3, read: { d in mode(d)?.intValue.map { .int(toHAP[$0] ?? 0) } }, write: { v, _ in
                    guard let n = v.number, let m = toMatter[Int(n)] else { return nil }
                    return [.write(device: id, deviceType: dt, trait: ThermostatTrait.identifier, attribute: ThermostatTrait.Attribute.systemMode, value: .int(m))]
                })
                s.characteristic("current", type: "11", .float, unit: "celsius", min: -270, max: 100, step: 0.1, read: { d in
                    local(d)?.intValue.flatMap { Int16(exactly: $0) }.map { .double(Units.celsius(temperatureValue: $0)) }
                })
                s.characteristic("target", type: "35", .float, unit: "celsius", min: 10, max: 38, step: 0.1, read: { d in
                    let sp = mode(d)?.intValue == 3 ? cool(d) : heat(d)
                    return sp?.intValue.flatMap { Int16(exactly: $0) }.map { .double(min(38, max(10, Units.celsius(temperatureValue: $0)))) }
                }, write: { v, d in
                    guard let c = v.number else { return nil }
                    let attribute = mode(d)?.intValue == 3 ? ThermostatTrait.Attribute.occupiedCoolingSetpoint : ThermostatTrait.Attribute.occupiedHeatingSetpoint
                    return [.write(device: id, deviceType: dt, trait: ThermostatTrait.identifier, attribute: attribute,
                        value: .int(Int64(Units.temperatureValue(celsius: c))))]
                })
                s.constant("units", type: "36", .int(0), format: .uint8, perms: ["pr", "ev"])
            }
        }
        if t[FanControlTrait.identifier] != nil {
            let fanMode = attr(FanControlTrait.identifier, FanControlTrait.Attribute.fanMode)
            let percent = attr(FanControlTrait.identifier, FanControlTrait.Attribute.percentCurrent)
            b.service("fan", type: "B7", primary: primary) { s in
                s.characteristic("active", type: "B0", .uint8, min: 0, max: 1, read: { d in
                    .int((fanMode(d)?.intValue ?? 0) != 0 || (percent(d)?.intValue ?? 0) > 0 ? 1 : 0)
                }, write: { v, _ in
                    guard let n = v.number else { return nil }
                    // FanModeEnum: 0 off, 4 on.
                    return [.write(device: id, deviceType: dt, trait: FanControlTrait.identifier, attribute: FanControlTrait.Attribute.fanMode, value: .int(n == 0 ? 0 : 4))]
                })
                s.characteristic("speed", type: "29", .float, unit: "percentage", min: 0, max: 100, step: 1, read: { d in
                    percent(d)?.intValue.map { .double(Double(min(max($0, 0), 100))) }
                }, write: { v, _ in
                    guard let p = v.number else { return nil }
                    return [.write(device: id, deviceType: dt, trait: FanControlTrait.identifier, attribute: FanControlTrait.Attribute.percentSetting, value: .int(Int64(p)))]
                })
            }
        }
    }

    /// The programmable switch value for a Switch event (HAP: 0 single, 1 double, 2 long), or nil.
    public static func buttonPress(_ event: DeviceEvent, multiPress: Bool = false) -> (button: Int, value: Int)? {
        guard event.trait == SwitchTrait.identifier else { return nil }
        let position = Int(event.fields["NewPosition"]?.intValue ?? event.fields["PreviousPosition"]?.intValue ?? 1)
        let button = max(1, min(position, 8))
        switch event.event {
        // With multi-press (MSM) every release is part of a multi-press: the count decides, once.
        case SwitchTrait.Event.shortRelease: return multiPress ? nil : (button, 0)
        case SwitchTrait.Event.multiPressComplete:
            switch event.fields["TotalNumberOfPressesCounted"]?.intValue {
            case 1: return multiPress ? (button, 0) : nil
            case 2: return (button, 1)
            default: return nil  // HAP has single, double and long only
            }
        case SwitchTrait.Event.longPress: return (button, 2)
        default: return nil
        }
    }

    /// Whether the device's Switch counts multi-presses (feature MSM, Matter 1.3 §1.13.4, or a
    /// MultiPressMax): then a single press is `MultiPressComplete` with a count of 1, not `ShortRelease`.
    public static func countsMultiPress(_ device: DeviceSnapshot) -> Bool {
        for type in device.types {
            guard let sw = type.traits[SwitchTrait.identifier] else { continue }
            if sw[SwitchTrait.Attribute.multiPressMax] != nil { return true }
            if let features = sw[0xFFFC]?.intValue, features & 0b10000 != 0 { return true }
        }
        return false
    }
}

/// Builds an accessory's services with stable iids.
struct Builder {
    var iids: IIDAllocator
    let device: DeviceSnapshot?
    var services: [HAPService] = []
    var bindings: [Int: CharacteristicBinding] = [:]
    var buttons: [Int: Int] = [:]
    var keys: Set<String> = []

    init(iids: IIDAllocator, device: DeviceSnapshot?) {
        self.iids = iids
        self.device = device
    }

    func has(_ key: String) -> Bool { keys.contains(key) }

    struct ServiceBuilder {
        var b: Builder
        let key: String
        var characteristics: [HAPCharacteristic] = []
        var buttons: [Int: Int] = [:]

        @discardableResult
        mutating func characteristic(
            _ name: String, type: String, _ format: HAPCharacteristic.Format, perms: [String]? = nil, unit: String? = nil, min: Double? = nil,
            max: Double? = nil, step: Double? = nil, read: @escaping @Sendable (DeviceSnapshot) -> HAPValue?,
            write: (@Sendable (HAPValue, DeviceSnapshot) -> [HomeAction]?)? = nil
        ) -> Int {
            let iid = b.iids.iid("\(key).\(name)")
            let p = perms ?? (write == nil ? ["pr", "ev"] : ["pr", "pw", "ev"])
            let value = b.device.flatMap(read)
            characteristics.append(HAPCharacteristic(iid: iid, type: type, format: format, perms: p, value: value, unit: unit, minValue: min, maxValue: max, minStep: step))
            b.bindings[iid] = CharacteristicBinding(read: read, write: write)
            return iid
        }

        mutating func constant(_ name: String, type: String, _ value: HAPValue, format: HAPCharacteristic.Format = .string, perms: [String] = ["pr"]) {
            let iid = b.iids.iid("\(key).\(name)")
            characteristics.append(HAPCharacteristic(iid: iid, type: type, format: format, perms: perms, value: value))
            b.bindings[iid] = CharacteristicBinding(read: { _ in value }, write: nil)
        }
    }

    mutating func service(_ key: String, type: String, primary: Bool = false, _ body: (inout ServiceBuilder) -> Void) {
        guard !keys.contains(key) else { return }
        keys.insert(key)
        let iid = iids.iid(key)
        var s = ServiceBuilder(b: self, key: key)
        body(&s)
        self = s.b
        buttons.merge(s.buttons) { $1 }
        services.append(HAPService(iid: iid, type: type, characteristics: s.characteristics, primary: primary))
    }

    mutating func information(name: String, manufacturer: String, model: String, serial: String, firmware: String) {
        service("info", type: "3E") { s in
            let iid = s.b.iids.iid("info.identify")
            s.characteristics.append(HAPCharacteristic(iid: iid, type: "14", format: .bool, perms: ["pw"], value: nil))
            s.b.bindings[iid] = CharacteristicBinding(read: { _ in nil }, write: { _, _ in [] })
            s.constant("manufacturer", type: "20", .string(manufacturer))
            s.constant("model", type: "21", .string(model))
            s.constant("name", type: "23", .string(name))
            s.constant("serial", type: "30", .string(serial))
            s.constant("firmware", type: "52", .string(firmware))
        }
    }
}
