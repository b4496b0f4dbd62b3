public import HomeModel
import Foundation

/// How one exported device looks on the broker: its Home Assistant discovery configs, the JSON
/// its state topic carries, and the command topics it listens to. Pure: no I/O.
///
/// Topics (for node `hearth_garage`, base `hearth/hearth_garage`, device `gpio:relay`):
///
/// | What | Topic |
/// |---|---|
/// | discovery config | `homeassistant/switch/hearth_garage/gpio_relay_xxxxxxxx_onoff/config` |
/// | state (JSON, retained) | `hearth/hearth_garage/gpio_relay_xxxxxxxx/state` |
/// | availability (retained) | `hearth/hearth_garage/gpio_relay_xxxxxxxx/availability` |
/// | commands | `…/gpio_relay_xxxxxxxx/onoff/set` (`ON`, `OFF`, `TOGGLE`), `…/light/set` (HA's JSON light schema: `state`, `brightness` 0–255, `color_temp` in mireds, `color` as `h`/`s` or `x`/`y`, `transition`), `…/lock/set` (`LOCK`, `UNLOCK`); none when the policy is read only |
/// | button events | `…/gpio_relay_xxxxxxxx/action` (`button_1_short_press`, …) |
/// | this bridge (LWT) | `hearth/hearth_garage/bridge/availability` |
///
/// State JSON is in Home Assistant's units: °C, %, lx, hPa, brightness 0–255, `ON`/`OFF`; a
/// light's keys are the JSON schema's (`state`, `brightness`, `color_mode`, `color_temp`, `color`).
/// A read-only export (``ExposurePolicy/allowControl`` off) publishes switches and lights as
/// binary sensors (a dimmer's brightness as a % sensor) and locks as a lock binary sensor.
public struct ExportTopics: Sendable, Hashable {
    public let prefix: String
    public let nodeID: String
    public let base: String

    public init(prefix: String, nodeID: String, base: String) {
        self.prefix = prefix
        self.nodeID = nodeID
        self.base = base
    }

    public var bridgeAvailability: String { "\(base)/bridge/availability" }
    /// Home Assistant's birth and last-will topic.
    public var haStatus: String { "\(prefix)/status" }
    /// Every config this node publishes (for cleaning up stale retained ones).
    public var ownConfigs: String { "\(prefix)/+/\(nodeID)/+/config" }
    public var commands: String { "\(base)/+/+/set" }

    public func config(_ component: String, _ objectID: String) -> String { "\(prefix)/\(component)/\(nodeID)/\(objectID)/config" }
    public func state(_ slug: String) -> String { "\(base)/\(slug)/state" }
    public func availability(_ slug: String) -> String { "\(base)/\(slug)/availability" }
    public func action(_ slug: String) -> String { "\(base)/\(slug)/action" }
    public func command(_ slug: String, _ what: String) -> String { "\(base)/\(slug)/\(what)/set" }

    /// A topic- and ID-safe name for a device ID that never changes: the ID with unsafe
    /// characters replaced, plus a hash of the raw ID when anything was replaced (so `a:b`
    /// and `a_b` never collide).
    public static func slug(_ id: DeviceID) -> String {
        let raw = id.rawValue
        let cleaned = String(raw.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" })
        guard cleaned != raw else { return cleaned }
        var hash: UInt32 = 2_166_136_261
        for b in raw.utf8 {
            hash ^= UInt32(b)
            hash = hash &* 16_777_619
        }
        return cleaned + "_" + String(format: "%08x", hash)
    }

    /// The device a command topic is for, and what it sets (`onoff`, `brightness`); nil for
    /// any other topic.
    public func parseCommand(_ topic: String) -> (slug: String, what: String)? {
        guard topic.hasPrefix(base + "/") else { return nil }
        let parts = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2] == "set", !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return (String(parts[0]), String(parts[1]))
    }
}

/// One retained discovery config.
public struct ExportedConfig: Sendable, Hashable {
    public let topic: String
    /// The JSON payload (keys sorted, so an unchanged config is byte-identical).
    public let payload: [UInt8]
}

/// What one device exports: its configs, and how to read its state.
public struct ExportedDevice: Sendable, Hashable {
    public let id: DeviceID
    public let slug: String
    public let configs: [ExportedConfig]
    public let state: [UInt8]
    public let online: Bool
    /// The device type carrying On/Off and Level Control, for commands.
    public let onOffType: DeviceTypeID?
    public let levelType: DeviceTypeID?
    /// The light's device type (its commands arrive as JSON on one `light/set` topic), and the
    /// Home Assistant colour modes it advertises (`onoff`, `brightness`, `color_temp`, `hs`, `xy`).
    public let lightType: DeviceTypeID?
    public let colorModes: [String]
    /// Whether the configs carry command topics (the policy's ``ExposurePolicy/allowControl``).
    public let controllable: Bool
    /// The device type carrying Door Lock (exported only when the policy opts it in).
    public let lockType: DeviceTypeID?
}

/// Maps devices (as the exposure policy shows them) to discovery configs and state.
public struct ExportMapper: Sendable {
    public let topics: ExportTopics
    /// `origin` block: who publishes (HA shows it; a Hearth reads `via_device` and the node ID).
    public let softwareVersion: String
    /// Whether controllers may send commands: when false the configs carry no command topic
    /// (switches and lights become binary sensors, locks a lock binary sensor).
    public var allowControl: Bool

    public init(topics: ExportTopics, softwareVersion: String = "1", allowControl: Bool = true) {
        self.topics = topics
        self.softwareVersion = softwareVersion
        self.allowControl = allowControl
    }

    static let lightTypes: Set<DeviceTypeID> = [
        OnOffLightDeviceType.identifier, DimmableLightDeviceType.identifier, ColorTemperatureLightDeviceType.identifier,
        ExtendedColorLightDeviceType.identifier,
    ]

    /// The bridge itself, as a device HA shows (its connectivity from the LWT topic).
    public func bridgeConfig() -> ExportedConfig {
        let object = "bridge_connection"
        let config: [String: Any] = [
            "name": "Connection", "unique_id": "\(topics.nodeID)_\(object)", "object_id": "\(topics.nodeID)_\(object)",
            "device_class": "connectivity", "entity_category": "diagnostic",
            "state_topic": topics.bridgeAvailability, "payload_on": "online", "payload_off": "offline",
            "device": ["identifiers": [topics.nodeID], "name": "Hearth \(topics.nodeID)", "manufacturer": "Hearth", "model": "Hearth bridge",
                "sw_version": softwareVersion],
            "origin": origin,
        ]
        return ExportedConfig(topic: topics.config("binary_sensor", topics.nodeID + "_" + object), payload: Self.json(config))
    }

    var origin: [String: Any] { ["name": "Hearth", "sw_version": softwareVersion, "support_url": "https://github.com/hearth-home/hearth"] }

    /// Everything a device exports; an empty `configs` when nothing of it can be shown in HA.
    public func export(_ device: DeviceSnapshot) -> ExportedDevice {
        let slug = ExportTopics.slug(device.id)
        var configs: [ExportedConfig] = []
        var state: [String: Any] = [:]
        var onOffType: DeviceTypeID?
        var levelType: DeviceTypeID?
        var lockType: DeviceTypeID?
        var lightType: DeviceTypeID?
        var colorModes: [String] = []
        var sensors: Set<String> = []
        let deviceBlock: [String: Any] = {
            var d: [String: Any] = [
                "identifiers": ["\(topics.nodeID)_\(slug)"], "name": device.name, "via_device": topics.nodeID,
                "manufacturer": device.manufacturer ?? "Hearth", "model": device.model ?? "Hearth device",
                "serial_number": device.id.rawValue,
            ]
            if let room = device.roomID { d["suggested_area"] = room.rawValue }
            return d
        }()
        let availability: [[String: Any]] = [
            ["topic": topics.bridgeAvailability], ["topic": topics.availability(slug)],
        ]
        func entity(_ component: String, _ suffix: String, _ name: String?, _ extra: [String: Any]) {
            let object = "\(slug)_\(suffix)"
            var c: [String: Any] = ["device": deviceBlock, "origin": origin]
            // A device trigger has no entity: HA's trigger schema knows no unique_id, name, state or availability.
            if component != "device_automation" {
                c["unique_id"] = "\(topics.nodeID)_\(object)"
                c["object_id"] = "\(topics.nodeID)_\(object)"
                c["availability"] = availability
                c["availability_mode"] = "all"
                c["name"] = name.map { $0 as Any } ?? NSNull()
                c["state_topic"] = topics.state(slug)
            }
            c.merge(extra) { $1 }
            configs.append(ExportedConfig(topic: topics.config(component, object), payload: Self.json(c)))
        }
        for type in device.types {
            let traits = type.traits
            if let onOff = traits[OnOffTrait.identifier], onOffType == nil {
                onOffType = type.id
                if let on = onOff[OnOffTrait.Attribute.onOff]?.boolValue { state["state"] = on ? "ON" : "OFF" }
                if Self.lightTypes.contains(type.id) {
                    let light = LightExport(type: type.id, traits: traits)
                    lightType = type.id
                    colorModes = light.colorModes
                    if light.hasBrightness { levelType = type.id }
                    state.merge(light.state) { $1 }
                    if allowControl {
                        entity("light", "light", nil, light.config(command: topics.command(slug, "light")))
                    } else {
                        entity("binary_sensor", "light", nil, [
                            "device_class": "light", "value_template": "{{ value_json.state }}", "payload_on": "ON", "payload_off": "OFF",
                        ])
                        if light.hasBrightness {
                            // Read only: the brightness as a percentage sensor (no command topics at all).
                            entity("sensor", "brightness", "Brightness", [
                                "unit_of_measurement": "%", "state_class": "measurement", "icon": "mdi:brightness-percent",
                                "value_template": "{{ (value_json.brightness | float(0) * 100 / 255) | round(0) }}",
                            ])
                        }
                    }
                } else if allowControl {
                    entity("switch", "onoff", nil, [
                        "command_topic": topics.command(slug, "onoff"), "value_template": "{{ value_json.state }}",
                        "payload_on": "ON", "payload_off": "OFF",
                    ])
                } else {
                    entity("binary_sensor", "onoff", nil, [
                        "device_class": "power", "value_template": "{{ value_json.state }}", "payload_on": "ON", "payload_off": "OFF",
                    ])
                }
            }
            func sensor(_ trait: TraitID, _ key: String, _ deviceClass: String, _ unit: String, _ read: (Int64) -> Double?) {
                guard let t = traits[trait], !sensors.contains(key) else { return }
                sensors.insert(key)
                if let v = t[0x0000]?.intValue, let x = read(v) { state[key] = (x * 100).rounded() / 100 }
                entity("sensor", key, key.prefix(1).uppercased() + key.dropFirst(), [
                    "device_class": deviceClass, "unit_of_measurement": unit, "state_class": "measurement",
                    "value_template": "{{ value_json.\(key) }}",
                ])
            }
            sensor(TemperatureMeasurementTrait.identifier, "temperature", "temperature", "°C") {
                Int16(exactly: $0).map { Units.celsius(temperatureValue: $0) }
            }
            sensor(RelativeHumidityMeasurementTrait.identifier, "humidity", "humidity", "%") {
                UInt16(exactly: $0).map { Units.percent(humidityValue: $0) }
            }
            sensor(IlluminanceMeasurementTrait.identifier, "illuminance", "illuminance", "lx") {
                UInt16(exactly: $0).map { Units.lux(illuminanceValue: $0) }
            }
            sensor(PressureMeasurementTrait.identifier, "pressure", "pressure", "hPa") {
                Int16(exactly: $0).map { Units.hectopascals(pressureValue: $0) }
            }
            if let b = traits[BooleanStateTrait.identifier] {
                let leak = type.id == WaterLeakDetectorDeviceType.identifier
                let key = leak ? "moisture" : "contact"
                if let v = b[BooleanStateTrait.Attribute.stateValue]?.boolValue {
                    // Matter: true = contact closed (a leak detector: true = leak). HA: ON = open / wet.
                    state[key] = (leak ? v : !v) ? "ON" : "OFF"
                }
                entity("binary_sensor", key, leak ? "Leak" : "Contact", [
                    "device_class": leak ? "moisture" : "opening", "value_template": "{{ value_json.\(key) }}",
                    "payload_on": "ON", "payload_off": "OFF",
                ])
            }
            if let lock = traits[DoorLockTrait.identifier], lockType == nil {
                lockType = type.id
                switch lock[DoorLockTrait.Attribute.lockState]?.intValue {
                case 1: state["lock"] = "LOCKED"
                case 2: state["lock"] = "UNLOCKED"
                case 0: state["lock"] = "JAMMED"
                default: break
                }
                if allowControl {
                    entity("lock", "lock", nil, [
                        "command_topic": topics.command(slug, "lock"), "value_template": "{{ value_json.lock }}",
                        "payload_lock": "LOCK", "payload_unlock": "UNLOCK", "state_locked": "LOCKED", "state_unlocked": "UNLOCKED",
                        "state_jammed": "JAMMED",
                    ])
                } else {
                    // HA's lock binary sensor: on means unlocked.
                    entity("binary_sensor", "lock", "Lock", [
                        "device_class": "lock", "value_template": "{{ value_json.lock }}", "payload_on": "UNLOCKED", "payload_off": "LOCKED",
                    ])
                }
            }
            if let o = traits[OccupancySensingTrait.identifier] {
                if let v = o[OccupancySensingTrait.Attribute.occupancy]?.intValue { state["occupancy"] = v & 1 == 1 ? "ON" : "OFF" }
                entity("binary_sensor", "occupancy", "Occupancy", [
                    "device_class": "occupancy", "value_template": "{{ value_json.occupancy }}", "payload_on": "ON", "payload_off": "OFF",
                ])
            }
            if let s = traits[SwitchTrait.identifier] {
                let positions = Int(s[SwitchTrait.Attribute.numberOfPositions]?.intValue ?? 2)
                for button in 1...max(1, min(positions - 1, 8)) {
                    for kind in ExportMapper.pressKinds {
                        entity("device_automation", "button_\(button)_\(kind)", nil, [
                            "automation_type": "trigger", "topic": topics.action(slug), "type": "button_\(kind)",
                            "subtype": "button_\(button)", "payload": "button_\(button)_\(kind)",
                        ])
                    }
                }
            }
        }
        return ExportedDevice(
            id: device.id, slug: slug, configs: configs, state: Self.json(state),
            online: device.sourceConnectivity.connectivityState != .offline, onOffType: onOffType, levelType: levelType,
            lightType: lightType, colorModes: colorModes, controllable: allowControl, lockType: lockType)
    }

    static let pressKinds = ["short_press", "long_press", "long_release", "double_press"]

    /// The `action` payload for a Switch event, or nil for events HA has no trigger for.
    public static func action(for event: DeviceEvent) -> String? {
        guard event.trait == SwitchTrait.identifier else { return nil }
        let position = event.fields["NewPosition"]?.intValue ?? event.fields["PreviousPosition"]?.intValue ?? 1
        let button = max(1, min(position, 8))
        switch event.event {
        case SwitchTrait.Event.shortRelease: return "button_\(button)_short_press"
        case SwitchTrait.Event.longPress: return "button_\(button)_long_press"
        case SwitchTrait.Event.longRelease: return "button_\(button)_long_release"
        case SwitchTrait.Event.multiPressComplete:
            return event.fields["TotalNumberOfPressesCounted"]?.intValue == 2 ? "button_\(button)_double_press" : nil
        default: return nil
        }
    }

    /// Sorted-key JSON.
    static func json(_ object: [String: Any]) -> [UInt8] { ExportJSON.encode(object) }
}
