import DriverAPI
import HomeModel
import Foundation

/// Why a discovery message was not turned into an entity.
struct ComponentError: Error, Hashable, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Maps Home Assistant MQTT components to Matter device types and traits.
///
/// | Component | Device type | Traits |
/// |---|---|---|
/// | `binary_sensor` door/window/opening/garage_door | Contact Sensor | Boolean State (true = closed) |
/// | `binary_sensor` motion/occupancy/presence | Occupancy Sensor | Occupancy Sensing |
/// | `binary_sensor` moisture | Water Leak Detector | Boolean State |
/// | `binary_sensor` smoke / carbon_monoxide | Smoke CO Alarm | Smoke CO Alarm |
/// | `sensor` temperature/humidity/illuminance/pressure | Temperature/Humidity/Light/Pressure Sensor | the measurement trait |
/// | `sensor` battery | (the device's primary type) | Power Source |
/// | `switch` | On/Off Plug-in Unit | On/Off |
/// | `light` | On/Off, Dimmable or Color Temperature Light | On/Off, Level Control, Color Control |
/// | `cover` | Window Covering | Window Covering |
/// | `fan` | Fan | Fan Control, On/Off |
/// | `lock` | Door Lock | Door Lock |
/// | `climate` | Thermostat | Thermostat |
/// | `device_automation` trigger | Generic Switch | Switch (events) |
struct ComponentMapper {
    let topic: Discovery.Topic
    let config: [String: Value]
    private(set) var problems: [String] = []
    private var templates: [String: Template] = [:]
    private var broken: Set<String> = []

    static let supportedComponents: Set<String> = [
        "binary_sensor", "sensor", "switch", "light", "cover", "fan", "lock", "climate", "device_automation",
    ]

    init(topic: Discovery.Topic, config: [String: Value]) {
        self.topic = topic
        self.config = config
        for (key, value) in config where key.hasSuffix("_template") || key == "value_template" {
            guard let source = value.stringValue else { continue }
            do {
                templates[key] = try Template(source)
            } catch {
                broken.insert(key)
                problems.append("\(key) '\(source.shortened)' is not supported: \(error.message)")
            }
        }
        if case .list(let entries)? = config["availability"] {
            for (i, entry) in entries.enumerated() {
                guard let source = entry["value_template"]?.stringValue else { continue }
                do {
                    _ = try Template(source)
                } catch {
                    problems.append("availability[\(i)].value_template '\(source.shortened)' is not supported: \(error.message)")
                }
            }
        }
    }

    /// Compiles the discovery message into an entity.
    /// - Throws: ``ComponentError`` for a component or device class this plugin does not map, or
    ///   a configuration that lacks what the component needs.
    mutating func entity() throws(ComponentError) -> Entity {
        try DiscoverySchema.check(config)
        var entity: Entity
        switch topic.component {
        case "binary_sensor": entity = try binarySensor()
        case "sensor": entity = try sensor()
        case "switch": entity = try switchEntity()
        case "light": entity = try light()
        case "cover": entity = try cover()
        case "fan": entity = try fan()
        case "lock": entity = try lock()
        case "climate": entity = try climate()
        case "device_automation": entity = try trigger()
        default:
            throw ComponentError(
                "component '\(topic.component)' is not supported (supported: \(Self.supportedComponents.sorted().joined(separator: ", ")))")
        }
        entity.manufacturer = device?["manufacturer"]?.stringValue
        entity.model = device?["model"]?.stringValue
        entity.availability = availability()
        entity.availabilityMode = AvailabilityMode(rawValue: string("availability_mode") ?? "latest") ?? .latest
        entity.optimistic = entity.optimistic || (bool("optimistic") ?? false)
        entity.qos = Int32(max(min(int("qos") ?? 1, 2), 1))  // checked 0…2 by the schema
        entity.problems = problems
        if let attributes = string("json_attributes_topic") {
            entity.subscriptions.append(jsonAttributes(attributes))
        }
        return entity
    }

    // MARK: Configuration access

    var device: [String: Value]? { config["device"]?.objectValue }

    func string(_ key: String) -> String? {
        switch config[key] {
        case .string(let s)?: s
        case .int(let i)?: String(i)
        case .double(let d)?: String(d)
        case .bool(let b)?: b ? "True" : "False"
        default: nil
        }
    }

    func bool(_ key: String) -> Bool? {
        if let b = config[key]?.boolValue { return b }
        return string(key).map { ["true", "yes", "on", "1"].contains($0.lowercased()) }
    }

    /// An integer field (the schema has checked its range); nil when absent or not an integer.
    func int(_ key: String) -> Int? { config[key].flatMap(DiscoverySchema.integer).flatMap { Int(exactly: $0) } }

    /// A number field; nil when absent or not a finite number.
    func double(_ key: String) -> Double? { config[key].flatMap(DiscoverySchema.number) }

    func require(_ key: String) throws(ComponentError) -> String {
        guard let s = string(key), !s.isEmpty else { throw ComponentError("\(topic.component) needs '\(key)'") }
        return s
    }

    /// The device this entity belongs to, and the name it suggests.
    var deviceIdentity: (id: String, name: String) {
        var id: String?
        switch device?["identifiers"] {
        case .string(let s)?: id = s
        case .list(let l)?: id = l.first.map(\.templateText)
        default: break
        }
        if id == nil, case .list(let connections)? = device?["connections"], case .list(let pair)? = connections.first {
            id = pair.map(\.templateText).joined(separator: "_")
        }
        let uniqueID = string("unique_id")
        let entityName = string("name")
        let deviceName = device?["name"]?.stringValue
        let fallbackName = topic.objectID.replacingOccurrences(of: "_", with: " ")
        return (id ?? uniqueID ?? topic.key, deviceName ?? entityName ?? fallbackName)
    }

    func base(_ type: DeviceTypeID?, rank: Int, _ traits: [TraitID: [AttributeID: Value]]) -> Entity {
        let identity = deviceIdentity
        var entity = Entity(
            key: topic.key, deviceID: identity.id, deviceName: identity.name, deviceType: type, rank: rank, traits: traits)
        entity.entityName = string("name")
        return entity
    }

    /// Reads a topic's payload through an optional template into a value.
    func reader(_ templateKey: String?) -> @Sendable (Message) throws(PayloadError) -> Value {
        guard let templateKey, let template = templates[templateKey] else {
            return { message throws(PayloadError) in .string(message.text) }
        }
        return { message throws(PayloadError) in
            do throws(TemplateError) {
                return try template.render(message.variables)
            } catch {
                throw PayloadError("\(templateKey): \(error.message)")
            }
        }
    }

    /// A subscription to `topicKey` (when configured and its template compiled).
    func subscription(
        _ topicKey: String, template templateKey: String?,
        _ read: @escaping @Sendable (Value, Message) throws(PayloadError) -> [Update]
    ) -> StateSubscription? {
        guard let t = string(topicKey), !t.isEmpty else { return nil }
        if let templateKey, broken.contains(templateKey) { return nil }
        let value = reader(templateKey)
        return StateSubscription(topic: t) { message throws(PayloadError) in try read(try value(message), message) }
    }

    func availability() -> [AvailabilityTopic] {
        var out: [AvailabilityTopic] = []
        let defaultOn = string("payload_available") ?? "online"
        let defaultOff = string("payload_not_available") ?? "offline"
        if let t = string("availability_topic") {
            out.append(
                AvailabilityTopic(
                    topic: t, available: defaultOn, notAvailable: defaultOff,
                    template: config["availability_template"]?.stringValue.flatMap { try? Template($0) }))
        }
        if case .list(let entries)? = config["availability"] {
            for entry in entries {
                guard let t = entry["topic"]?.stringValue else { continue }
                out.append(
                    AvailabilityTopic(
                        topic: t, available: entry["payload_available"]?.templateText ?? "online",
                        notAvailable: entry["payload_not_available"]?.templateText ?? "offline",
                        template: entry["value_template"]?.stringValue.flatMap { try? Template($0) }))
            }
        }
        return out
    }

    func jsonAttributes(_ attributesTopic: String) -> StateSubscription {
        let value = broken.contains("json_attributes_template") ? nil : templates["json_attributes_template"]
        return StateSubscription(topic: attributesTopic) { message throws(PayloadError) in
            var object: Value
            if let value {
                do throws(TemplateError) {
                    object = try value.render(message.variables)
                } catch {
                    throw PayloadError("json_attributes_template: \(error.message)")
                }
                if case .string(let s) = object, let parsed = try? JSONParser.parse(s) { object = parsed }
            } else {
                switch message.json {
                case .success(let v): object = v
                case .failure(let f): throw PayloadError("json_attributes: the payload is \(f)")
                }
            }
            guard case .object(let attributes) = object else {
                throw PayloadError("json_attributes: expected a JSON object, got \(object.kindName)")
            }
            // The one attribute the home model has a place for: the battery level.
            if let battery = attributes["battery"], let percent = Evaluator.number(battery) {
                return [try Mapping.battery(percent)]
            }
            return []
        }
    }

    // MARK: binary_sensor

    mutating func binarySensor() throws(ComponentError) -> Entity {
        let on = string("payload_on") ?? "ON"
        let off = string("payload_off") ?? "OFF"
        let deviceClass = string("device_class") ?? ""
        @Sendable func state(_ v: Value) throws(PayloadError) -> Bool {
            let text = v.templateText
            if text == on { return true }
            if text == off { return false }
            throw PayloadError("'\(text.prefix(40))' is neither payload_on '\(on)' nor payload_off '\(off)'")
        }
        var entity: Entity
        let read: @Sendable (Bool) -> [Update]
        switch deviceClass {
        case "door", "window", "opening", "garage_door", "":
            // Matter's Boolean State on a contact sensor is true when the contact is closed.
            let inverted = deviceClass != ""
            entity = base(ContactSensorDeviceType.identifier, rank: 70, [BooleanStateTrait.identifier: [:]])
            read = { [.attribute(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool(inverted ? !$0 : $0))] }
        case "motion", "occupancy", "presence":
            entity = base(
                OccupancySensorDeviceType.identifier, rank: 71,
                [
                    OccupancySensingTrait.identifier: [
                        OccupancySensingTrait.Attribute.occupancySensorType: .int(0),
                        OccupancySensingTrait.Attribute.occupancySensorTypeBitmap: .int(1),
                    ]
                ])
            read = { [.attribute(OccupancySensingTrait.identifier, OccupancySensingTrait.Attribute.occupancy, .int($0 ? 1 : 0))] }
        case "moisture":
            entity = base(WaterLeakDetectorDeviceType.identifier, rank: 68, [BooleanStateTrait.identifier: [:]])
            read = { [.attribute(BooleanStateTrait.identifier, BooleanStateTrait.Attribute.stateValue, .bool($0))] }
        case "smoke", "carbon_monoxide", "gas":
            let attribute = deviceClass == "smoke" ? SmokeCOAlarmTrait.Attribute.smokeState : SmokeCOAlarmTrait.Attribute.coState
            let expressed: Int64 = deviceClass == "smoke" ? 1 : 2
            entity = base(
                SmokeCOAlarmDeviceType.identifier, rank: 65,
                [SmokeCOAlarmTrait.identifier: [SmokeCOAlarmTrait.Attribute.expressedState: .int(0), attribute: .int(0)]])
            read = {
                [
                    .attribute(SmokeCOAlarmTrait.identifier, attribute, .int($0 ? 2 : 0)),
                    .attribute(SmokeCOAlarmTrait.identifier, SmokeCOAlarmTrait.Attribute.expressedState, .int($0 ? expressed : 0)),
                ]
            }
        default:
            throw ComponentError("binary_sensor device_class '\(deviceClass)' is not mapped to a Matter device type")
        }
        guard
            let sub = subscription(
                "state_topic", template: "value_template", { v, _ throws(PayloadError) in read(try state(v)) })
        else {
            throw ComponentError("binary_sensor needs a 'state_topic' and a supported value_template")
        }
        entity.subscriptions.append(sub)
        return entity
    }

    // MARK: sensor

    mutating func sensor() throws(ComponentError) -> Entity {
        let deviceClass = string("device_class") ?? ""
        let unit = string("unit_of_measurement") ?? ""
        var entity: Entity
        let convert: @Sendable (Double) throws(PayloadError) -> [Update]
        switch deviceClass {
        case "temperature":
            entity = base(TemperatureSensorDeviceType.identifier, rank: 80, [TemperatureMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                [.attribute(TemperatureMeasurementTrait.identifier, TemperatureMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(try Mapping.temperature(x, unit: unit))))]
            }
        case "humidity":
            entity = base(HumiditySensorDeviceType.identifier, rank: 81, [RelativeHumidityMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                guard (0...100).contains(x) else { throw PayloadError("humidity \(x) % is outside 0…100 %") }
                return [.attribute(RelativeHumidityMeasurementTrait.identifier, RelativeHumidityMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(Units.humidityValue(percent: x))))]
            }
        case "illuminance":
            entity = base(LightSensorDeviceType.identifier, rank: 83, [IlluminanceMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                guard x >= 0, x <= 3_576_000 else { throw PayloadError("illuminance \(x) lx is outside 0…3,576,000 lx") }
                return [.attribute(IlluminanceMeasurementTrait.identifier, IlluminanceMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(Units.illuminanceValue(lux: x))))]
            }
        case "pressure", "atmospheric_pressure":
            entity = base(PressureSensorDeviceType.identifier, rank: 82, [PressureMeasurementTrait.identifier: [:]])
            convert = { x throws(PayloadError) in
                [.attribute(PressureMeasurementTrait.identifier, PressureMeasurementTrait.Attribute.measuredValue,
                    .int(Int64(try Mapping.pressure(x, unit: unit))))]
            }
        case "battery":
            entity = base(nil, rank: 100, [PowerSourceTrait.identifier: [:]])
            convert = { x throws(PayloadError) in [try Mapping.battery(x)] }
        default:
            throw ComponentError(
                "sensor device_class '\(deviceClass.isEmpty ? "(none)" : deviceClass)' is not mapped (mapped: temperature, humidity, illuminance, pressure, battery)")
        }
        guard
            let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
                guard let x = Evaluator.number(v), x.isFinite else {
                    throw PayloadError("'\(v.templateText.prefix(40))' is not a number")
                }
                return try convert(x)
            })
        else { throw ComponentError("sensor needs a 'state_topic' and a supported value_template") }
        entity.subscriptions.append(sub)
        return entity
    }

    // MARK: switch

    mutating func switchEntity() throws(ComponentError) -> Entity {
        let payloadOn = string("payload_on") ?? "ON"
        let payloadOff = string("payload_off") ?? "OFF"
        let stateOn = string("state_on") ?? payloadOn
        let stateOff = string("state_off") ?? payloadOff
        var entity = base(OnOffPlugInUnitDeviceType.identifier, rank: 60, [OnOffTrait.identifier: [:]])
        if let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
            [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(try Mapping.onOff(v, on: stateOn, off: stateOff)))]
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        if let command = string("command_topic") {
            entity.commands.merge(Mapping.onOffCommands(topic: command, on: payloadOn, off: payloadOff)) { $1 }
        }
        return entity
    }

    // MARK: light

    mutating func light() throws(ComponentError) -> Entity {
        let schema = string("schema") ?? "default"
        switch schema {
        case "json": return try jsonLight()
        case "default", "basic": return try defaultLight()
        default: throw ComponentError("light schema '\(schema)' is not supported (supported: default, json)")
        }
    }

    /// Which colours a light takes besides a temperature: hue/saturation, xy (rgb lights too).
    struct ColorSupport: Equatable {
        var hueSaturation = false
        var xy = false
        var any: Bool { hueSaturation || xy }
    }

    static func lightType(brightness: Bool, colorTemp: Bool, color: ColorSupport = ColorSupport()) -> DeviceTypeID {
        if color.any { return ExtendedColorLightDeviceType.identifier }
        return colorTemp
            ? ColorTemperatureLightDeviceType.identifier
            : (brightness ? DimmableLightDeviceType.identifier : OnOffLightDeviceType.identifier)
    }

    static func lightTraits(
        brightness: Bool, colorTemp: Bool, minMireds: Int?, maxMireds: Int?, color: ColorSupport = ColorSupport()
    ) -> [TraitID: [AttributeID: Value]] {
        var traits: [TraitID: [AttributeID: Value]] = [OnOffTrait.identifier: [:]]
        if color.any {
            traits[ColorControlTrait.identifier] = [
                ColorControlTrait.Attribute.colorMode: .int(color.xy ? ColorConversion.modeXY : ColorConversion.modeHueSaturation),
                ColorControlTrait.Attribute.colorCapabilities: .int(
                    ColorConversion.capabilities(hueSaturation: color.hueSaturation, xy: color.xy, temperature: colorTemp)),
            ]
        }
        if brightness || colorTemp || color.any {
            traits[LevelControlTrait.identifier] = [
                LevelControlTrait.Attribute.minLevel: .int(1), LevelControlTrait.Attribute.maxLevel: .int(254),
            ]
        }
        if colorTemp {
            var attributes: [AttributeID: Value] = traits[ColorControlTrait.identifier] ?? [ColorControlTrait.Attribute.colorMode: .int(2)]
            if let minMireds { attributes[ColorControlTrait.Attribute.colorTempPhysicalMinMireds] = .int(Int64(minMireds)) }
            if let maxMireds { attributes[ColorControlTrait.Attribute.colorTempPhysicalMaxMireds] = .int(Int64(maxMireds)) }
            traits[ColorControlTrait.identifier] = attributes
        }
        return traits
    }

    mutating func defaultLight() throws(ComponentError) -> Entity {
        let payloadOn = string("payload_on") ?? "ON"
        let payloadOff = string("payload_off") ?? "OFF"
        let scale = Double(int("brightness_scale") ?? 255)
        let kelvin = bool("color_temp_kelvin") ?? false
        let hasBrightness = string("brightness_state_topic") != nil || string("brightness_command_topic") != nil
        let hasColorTemp = string("color_temp_state_topic") != nil || string("color_temp_command_topic") != nil
        var entity = base(
            Self.lightType(brightness: hasBrightness, colorTemp: hasColorTemp), rank: 10,
            Self.lightTraits(brightness: hasBrightness, colorTemp: hasColorTemp, minMireds: int("min_mireds"), maxMireds: int("max_mireds")))
        // Tasmota's discovery names the light's state template value_template.
        let stateTemplate = config["state_value_template"] == nil && config["value_template"] != nil ? "value_template" : "state_value_template"
        if let sub = subscription("state_topic", template: stateTemplate, { v, _ throws(PayloadError) in
            [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(try Mapping.onOff(v, on: payloadOn, off: payloadOff)))]
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        if let sub = subscription("brightness_state_topic", template: "brightness_value_template", { v, _ throws(PayloadError) in
            [try Mapping.level(v, scale: scale)]
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("color_temp_state_topic", template: "color_temp_value_template", { v, _ throws(PayloadError) in
            [try Mapping.colorTemperature(v, kelvin: kelvin)]
        }) {
            entity.subscriptions.append(sub)
        }
        let command = try require("command_topic")
        entity.commands.merge(Mapping.onOffCommands(topic: command, on: payloadOn, off: payloadOff)) { $1 }
        if let brightnessTopic = string("brightness_command_topic") {
            let handler: CommandHandler = { args, _ throws in
                let level = try Mapping.levelArgument(args)
                let brightness = Int((Double(Units.brightness(level: level)) * scale / 255).rounded())
                return Action(
                    publish: [Outgoing(topic: brightnessTopic, payload: String(brightness))],
                    assumed: [
                        .attribute(LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .int(Int64(level))),
                        .attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true)),
                    ])
            }
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevel)] = handler
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevelWithOnOff)] = handler
        }
        if let colorTopic = string("color_temp_command_topic") {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToColorTemperature)] = {
                args, _ throws in
                let mireds = try Mapping.miredsArgument(args)
                let payload = kelvin ? String(Int(Units.kelvin(mireds: mireds).rounded())) : String(mireds)
                return Action(
                    publish: [Outgoing(topic: colorTopic, payload: payload)],
                    assumed: [.attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds, .int(Int64(mireds)))])
            }
        }
        return entity
    }

    mutating func jsonLight() throws(ComponentError) -> Entity {
        let scale = Double(int("brightness_scale") ?? 255)
        let kelvin = bool("color_temp_kelvin") ?? false
        let modes = config["supported_color_modes"]?.listValue?.compactMap(\.stringValue) ?? []
        let hasColorTemp = modes.contains("color_temp") || (bool("color_temp") ?? false)
        let hasBrightness = hasColorTemp || (bool("brightness") ?? false)
            || modes.contains { ["brightness", "hs", "xy", "rgb", "rgbw", "rgbww", "white"].contains($0) }
        // Every colour mode Home Assistant defines maps to Color Control: xy as is, rgb/rgbw/rgbww
        // through xy, hs as hue and saturation.
        let color = ColorSupport(
            hueSaturation: modes.contains("hs"), xy: modes.contains { ["xy", "rgb", "rgbw", "rgbww"].contains($0) })
        let rgbOnly = !modes.contains("xy") && color.xy
        var entity = base(
            Self.lightType(brightness: hasBrightness, colorTemp: hasColorTemp, color: color), rank: 10,
            Self.lightTraits(
                brightness: hasBrightness, colorTemp: hasColorTemp, minMireds: int("min_mireds"), maxMireds: int("max_mireds"), color: color))
        if let stateTopic = string("state_topic") {
            entity.subscriptions.append(
                StateSubscription(topic: stateTopic) { message throws(PayloadError) in
                    let json: Value
                    switch message.json {
                    case .success(let v): json = v
                    case .failure(let f): throw PayloadError("json light state: the payload is \(f)")
                    }
                    guard case .object(let o) = json else { throw PayloadError("json light state: expected a JSON object, got \(json.kindName)") }
                    var updates: [Update] = []
                    if let state = o["state"] {
                        updates.append(.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(try Mapping.onOff(state, on: "ON", off: "OFF"))))
                    }
                    if hasBrightness, let b = o["brightness"], !b.isNull { updates.append(try Mapping.level(b, scale: scale)) }
                    let mode = o["color_mode"]?.stringValue
                    if hasColorTemp, let ct = o["color_temp"], !ct.isNull, mode == nil || mode == "color_temp" {
                        updates.append(try Mapping.colorTemperature(ct, kelvin: kelvin))
                        if color.any {
                            updates.append(.attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorMode, .int(ColorConversion.modeTemperature)))
                        }
                    }
                    if color.any, let c = o["color"]?.objectValue, mode != "color_temp" {
                        updates += try ColorConversion.updates(color: c, mode: mode)
                    }
                    if updates.isEmpty { throw PayloadError("json light state: no 'state', 'brightness', 'color_temp' or 'color' key") }
                    return updates
                })
        } else {
            entity.optimistic = true
        }
        let command = try require("command_topic")
        @Sendable func json(_ object: [String: Value]) -> String { Value.object(object).jsonText }
        let on: CommandHandler = { _, _ throws in
            Action(publish: [Outgoing(topic: command, payload: json(["state": "ON"]))],
                assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))])
        }
        let off: CommandHandler = { _, _ throws in
            Action(publish: [Outgoing(topic: command, payload: json(["state": "OFF"]))],
                assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(false))])
        }
        entity.commands[CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.on)] = on
        entity.commands[CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.off)] = off
        entity.commands[CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle)] = { args, current throws in
            guard let isOn = current[OnOffTrait.identifier, OnOffTrait.Attribute.onOff]?.boolValue else {
                throw HomeError.unsupportedOperation("toggle needs the light's current state, which it has not reported yet")
            }
            return try (isOn ? off : on)(args, current)
        }
        if hasBrightness {
            let handler: CommandHandler = { args, _ throws in
                let level = try Mapping.levelArgument(args)
                let brightness = Int((Double(Units.brightness(level: level)) * scale / 255).rounded())
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "brightness": .int(Int64(brightness))]))],
                    assumed: [
                        .attribute(LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .int(Int64(level))),
                        .attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true)),
                    ])
            }
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevel)] = handler
            entity.commands[CommandKey(trait: LevelControlTrait.identifier, command: LevelControlTrait.Command.moveToLevelWithOnOff)] = handler
        }
        if color.xy {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToColor)] = { args, _ throws in
                guard let x = (args["ColorX"] ?? args["colorX"])?.intValue, let y = (args["ColorY"] ?? args["colorY"])?.intValue,
                    (0...0xFEFF).contains(x), (0...0xFEFF).contains(y)
                else { throw HomeError.invalidArgument("moveToColor needs colorX and colorY between 0 and 65279") }
                let cx = Double(x) / 65536, cy = Double(y) / 65536
                let payload: Value
                if rgbOnly {
                    let rgb = ColorConversion.rgb(x: cx, y: cy)
                    payload = .object(["r": .int(rgb.red), "g": .int(rgb.green), "b": .int(rgb.blue)])
                } else {
                    payload = .object(["x": .double((cx * 10000).rounded() / 10000), "y": .double((cy * 10000).rounded() / 10000)])
                }
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "color": payload]))],
                    assumed: [
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentX, .int(x)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentY, .int(y)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorMode, .int(ColorConversion.modeXY)),
                    ])
            }
        }
        if color.hueSaturation {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToHueAndSaturation)] = {
                args, _ throws in
                guard let h = (args["Hue"] ?? args["hue"])?.intValue, let s = (args["Saturation"] ?? args["saturation"])?.intValue,
                    (0...254).contains(h), (0...254).contains(s)
                else { throw HomeError.invalidArgument("moveToHueAndSaturation needs hue and saturation between 0 and 254") }
                let degrees = (Double(h) * 360 / 254 * 10).rounded() / 10
                let percent = (Double(s) * 100 / 254 * 10).rounded() / 10
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "color": ["h": .double(degrees), "s": .double(percent)]]))],
                    assumed: [
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentHue, .int(h)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.currentSaturation, .int(s)),
                        .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorMode, .int(ColorConversion.modeHueSaturation)),
                    ])
            }
        }
        if hasColorTemp {
            entity.commands[CommandKey(trait: ColorControlTrait.identifier, command: ColorControlTrait.Command.moveToColorTemperature)] = {
                args, _ throws in
                let mireds = try Mapping.miredsArgument(args)
                let value: Value = kelvin ? .int(Int64(Units.kelvin(mireds: mireds).rounded())) : .int(Int64(mireds))
                return Action(
                    publish: [Outgoing(topic: command, payload: json(["state": "ON", "color_temp": value]))],
                    assumed: [.attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds, .int(Int64(mireds)))])
            }
        }
        return entity
    }

    // MARK: cover

    mutating func cover() throws(ComponentError) -> Entity {
        let open = Double(int("position_open") ?? 100)
        let closed = Double(int("position_closed") ?? 0)
        guard open != closed else { throw ComponentError("cover position_open and position_closed are equal") }
        let states = (
            open: string("state_open") ?? "open", closed: string("state_closed") ?? "closed",
            opening: string("state_opening") ?? "opening", closing: string("state_closing") ?? "closing",
            stopped: string("state_stopped") ?? "stopped"
        )
        var entity = base(
            WindowCoveringDeviceType.identifier, rank: 40,
            [
                WindowCoveringTrait.identifier: [
                    WindowCoveringTrait.Attribute.type: .int(0), WindowCoveringTrait.Attribute.endProductType: .int(0),
                    WindowCoveringTrait.Attribute.configStatus: .int(0x1B), WindowCoveringTrait.Attribute.operationalStatus: .int(0),
                ]
            ])
        let trait = WindowCoveringTrait.identifier
        let lift = WindowCoveringTrait.Attribute.currentPositionLiftPercent100ths
        let status = WindowCoveringTrait.Attribute.operationalStatus
        // With a position topic, the reported position wins: `open` says only that the cover
        // has stopped (a cover 30 % open reports `open` too), as in Home Assistant.
        let positionReported = string("position_topic") != nil
        if let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
            switch v.templateText {
            case states.open:
                return [.attribute(trait, status, .int(0))] + (positionReported ? [] : [.attribute(trait, lift, .int(0))])
            case states.closed:
                return [.attribute(trait, status, .int(0))] + (positionReported ? [] : [.attribute(trait, lift, .int(10000))])
            case states.opening: return [.attribute(trait, status, .int(0b0101))]
            case states.closing: return [.attribute(trait, status, .int(0b1010))]
            case states.stopped: return [.attribute(trait, status, .int(0))]
            case "", "None": return []
            case let other: throw PayloadError("cover state '\(other.prefix(40))' is none of \(states.open), \(states.closed), \(states.opening), \(states.closing), \(states.stopped)")
            }
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("position_topic", template: "position_template", { v, _ throws(PayloadError) in
            guard let p = Evaluator.number(v), p.isFinite else { throw PayloadError("cover position '\(v.templateText.prefix(40))' is not a number") }
            let fractionOpen = (p - closed) / (open - closed)
            guard (0...1).contains(fractionOpen) else {
                throw PayloadError("cover position \(p) is outside \(min(open, closed))…\(max(open, closed))")
            }
            return [.attribute(trait, lift, .int(Int64(Units.percent100ths(percent: (1 - fractionOpen) * 100))))]
        }) {
            entity.subscriptions.append(sub)
        }
        if entity.subscriptions.isEmpty { entity.optimistic = true }
        if let command = string("command_topic") {
            for (id, payload, assumed) in [
                (WindowCoveringTrait.Command.upOrOpen, string("payload_open") ?? "OPEN", Int64(0)),
                (WindowCoveringTrait.Command.downOrClose, string("payload_close") ?? "CLOSE", Int64(10000)),
                (WindowCoveringTrait.Command.stopMotion, string("payload_stop") ?? "STOP", Int64(-1)),
            ] {
                entity.commands[CommandKey(trait: trait, command: id)] = { _, _ throws in
                    Action(publish: [Outgoing(topic: command, payload: payload)], assumed: assumed < 0 ? [] : [.attribute(trait, lift, .int(assumed))])
                }
            }
        }
        if let setTopic = string("set_position_topic") {
            let template = broken.contains("set_position_template") ? nil : templates["set_position_template"]
            entity.commands[CommandKey(trait: trait, command: WindowCoveringTrait.Command.goToLiftPercentage)] = { args, _ throws in
                guard let v = (args["LiftPercent100thsValue"] ?? args["liftPercent100thsValue"])?.intValue, (0...10000).contains(v) else {
                    throw HomeError.invalidArgument("goToLiftPercentage needs liftPercent100thsValue between 0 and 10000")
                }
                let position = Int((closed + (1 - Double(v) / 10000) * (open - closed)).rounded())
                var payload = String(position)
                if let template {
                    do throws(TemplateError) {
                        payload = try template.render(Template.Variables(value: payload, json: nil, extra: ["position": .int(Int64(position))])).templateText
                    } catch {
                        throw HomeError.invalidArgument("set_position_template: \(error.message)")
                    }
                }
                return Action(publish: [Outgoing(topic: setTopic, payload: payload)], assumed: [.attribute(trait, lift, .int(v))])
            }
        }
        return entity
    }

    // MARK: fan

    mutating func fan() throws(ComponentError) -> Entity {
        let payloadOn = string("payload_on") ?? "ON"
        let payloadOff = string("payload_off") ?? "OFF"
        let low = Double(int("speed_range_min") ?? 1)
        let high = Double(int("speed_range_max") ?? 100)
        guard high > low else { throw ComponentError("fan speed_range_max must be above speed_range_min") }
        let fanTrait = FanControlTrait.identifier
        var entity = base(
            FanDeviceType.identifier, rank: 50,
            [
                fanTrait: [FanControlTrait.Attribute.fanModeSequence: .int(2), FanControlTrait.Attribute.percentSetting: .null],
                OnOffTrait.identifier: [:],
            ])
        if let sub = subscription("state_topic", template: "state_value_template", { v, _ throws(PayloadError) in
            let on = try Mapping.onOff(v, on: payloadOn, off: payloadOff)
            var updates: [Update] = [
                .attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(on)),
                .attribute(fanTrait, FanControlTrait.Attribute.fanMode, .int(on ? 4 : 0)),
            ]
            if !on { updates.append(.attribute(fanTrait, FanControlTrait.Attribute.percentCurrent, .int(0))) }
            return updates
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        if let sub = subscription("percentage_state_topic", template: "percentage_value_template", { v, _ throws(PayloadError) in
            guard let speed = Evaluator.number(v), speed.isFinite else { throw PayloadError("fan percentage '\(v.templateText.prefix(40))' is not a number") }
            guard speed == 0 || (low...high).contains(speed) else { throw PayloadError("fan speed \(speed) is outside \(low)…\(high)") }
            let percent = speed == 0 ? 0 : Int64(((speed - low + 1) / (high - low + 1) * 100).rounded())
            return [.attribute(fanTrait, FanControlTrait.Attribute.percentCurrent, .int(percent))]
        }) {
            entity.subscriptions.append(sub)
        }
        let command = try require("command_topic")
        entity.commands.merge(Mapping.onOffCommands(topic: command, on: payloadOn, off: payloadOff)) { $1 }
        let percentTopic = string("percentage_command_topic")
        entity.writes[WriteKey(trait: fanTrait, attribute: FanControlTrait.Attribute.fanMode)] = { args, _ throws in
            guard let mode = args["value"]?.intValue, (0...6).contains(mode) else { throw HomeError.invalidArgument("fanMode must be 0…6") }
            return Action(publish: [Outgoing(topic: command, payload: mode == 0 ? payloadOff : payloadOn)],
                assumed: [.attribute(fanTrait, FanControlTrait.Attribute.fanMode, .int(mode == 0 ? 0 : 4))])
        }
        if let percentTopic {
            entity.writes[WriteKey(trait: fanTrait, attribute: FanControlTrait.Attribute.percentSetting)] = { args, _ throws in
                guard let p = args["value"]?.intValue, (0...100).contains(p) else { throw HomeError.invalidArgument("percentSetting must be 0…100") }
                let speed = p == 0 ? 0 : Int((low - 1 + Double(p) / 100 * (high - low + 1)).rounded())
                return Action(publish: [Outgoing(topic: percentTopic, payload: String(max(speed, p == 0 ? 0 : Int(low))))],
                    assumed: [.attribute(fanTrait, FanControlTrait.Attribute.percentSetting, .int(p))])
            }
        }
        return entity
    }

    // MARK: lock

    mutating func lock() throws(ComponentError) -> Entity {
        let states: [String: Int64] = [
            string("state_locked") ?? "LOCKED": 1, string("state_unlocked") ?? "UNLOCKED": 2,
            string("state_locking") ?? "LOCKING": 0, string("state_unlocking") ?? "UNLOCKING": 0,
            string("state_jammed") ?? "JAMMED": 0, string("state_open") ?? "OPEN": 3,
        ]
        let trait = DoorLockTrait.identifier
        var entity = base(
            DoorLockDeviceType.identifier, rank: 20,
            [trait: [DoorLockTrait.Attribute.lockType: .int(0), DoorLockTrait.Attribute.actuatorEnabled: .bool(true), DoorLockTrait.Attribute.lockState: .null]])
        if let sub = subscription("state_topic", template: "value_template", { v, _ throws(PayloadError) in
            guard let state = states[v.templateText] else {
                throw PayloadError("lock state '\(v.templateText.prefix(40))' is none of \(states.keys.sorted().joined(separator: ", "))")
            }
            return [.attribute(trait, DoorLockTrait.Attribute.lockState, .int(state))]
        }) {
            entity.subscriptions.append(sub)
        } else {
            entity.optimistic = true
        }
        let command = try require("command_topic")
        for (id, payload, state) in [
            (DoorLockTrait.Command.lockDoor, string("payload_lock") ?? "LOCK", Int64(1)),
            (DoorLockTrait.Command.unlockDoor, string("payload_unlock") ?? "UNLOCK", Int64(2)),
        ] {
            entity.commands[CommandKey(trait: trait, command: id)] = { _, _ throws in
                Action(publish: [Outgoing(topic: command, payload: payload)], assumed: [.attribute(trait, DoorLockTrait.Attribute.lockState, .int(state))])
            }
        }
        return entity
    }

    // MARK: climate

    static let systemModes: [String: Int64] = ["off": 0, "auto": 1, "heat_cool": 1, "cool": 3, "heat": 4, "fan_only": 7, "dry": 8]

    mutating func climate() throws(ComponentError) -> Entity {
        let unit = string("temperature_unit") ?? "C"
        let modes = config["modes"]?.listValue?.compactMap(\.stringValue) ?? ["auto", "off", "cool", "heat", "dry", "fan_only"]
        let heats = modes.contains("heat") || modes.contains("auto") || modes.contains("heat_cool")
        let cools = modes.contains("cool") || modes.contains("heat_cool")
        let trait = ThermostatTrait.identifier
        var attributes: [AttributeID: Value] = [
            ThermostatTrait.Attribute.localTemperature: .null,
            ThermostatTrait.Attribute.controlSequenceOfOperation: .int(heats && cools ? 4 : (cools ? 0 : 2)),
            ThermostatTrait.Attribute.systemMode: .int(modes.contains("heat") ? 4 : 1),
        ]
        if let lo = double("min_temp"), let v = try? Mapping.temperature(lo, unit: unit) {
            attributes[ThermostatTrait.Attribute.absMinHeatSetpointLimit] = .int(Int64(v))
        }
        if let hi = double("max_temp"), let v = try? Mapping.temperature(hi, unit: unit) {
            attributes[ThermostatTrait.Attribute.absMaxHeatSetpointLimit] = .int(Int64(v))
        }
        var entity = base(ThermostatDeviceType.identifier, rank: 30, [trait: attributes])
        var setpoints: [AttributeID] = []
        if heats { setpoints.append(ThermostatTrait.Attribute.occupiedHeatingSetpoint) }
        if cools { setpoints.append(ThermostatTrait.Attribute.occupiedCoolingSetpoint) }
        let setpointAttributes = setpoints
        if let sub = subscription("current_temperature_topic", template: "current_temperature_template", { v, _ throws(PayloadError) in
            guard let x = Evaluator.number(v), x.isFinite else { throw PayloadError("current temperature '\(v.templateText.prefix(40))' is not a number") }
            return [.attribute(trait, ThermostatTrait.Attribute.localTemperature, .int(Int64(try Mapping.temperature(x, unit: unit))))]
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("temperature_state_topic", template: "temperature_state_template", { v, _ throws(PayloadError) in
            guard let x = Evaluator.number(v), x.isFinite else { throw PayloadError("setpoint '\(v.templateText.prefix(40))' is not a number") }
            let value = Int64(try Mapping.temperature(x, unit: unit))
            return setpointAttributes.map { .attribute(trait, $0, .int(value)) }
        }) {
            entity.subscriptions.append(sub)
        }
        if let sub = subscription("mode_state_topic", template: "mode_state_template", { v, _ throws(PayloadError) in
            guard let mode = Self.systemModes[v.templateText] else {
                throw PayloadError("climate mode '\(v.templateText.prefix(40))' is none of \(Self.systemModes.keys.sorted().joined(separator: ", "))")
            }
            return [.attribute(trait, ThermostatTrait.Attribute.systemMode, .int(mode))]
        }) {
            entity.subscriptions.append(sub)
        }
        if entity.subscriptions.isEmpty { entity.optimistic = true }
        @Sendable func format(_ value: Int) -> String {
            let celsius = Double(value) / 100
            let out = unit.uppercased().hasPrefix("F") ? celsius * 9 / 5 + 32 : celsius
            return String((out * 10).rounded() / 10)
        }
        if let temperatureTopic = string("temperature_command_topic") {
            let write: CommandHandler = { args, _ throws in
                guard let v = args["value"]?.intValue, (-27315...32767).contains(v) else {
                    throw HomeError.invalidArgument("a setpoint is a temperature in 0.01 °C")
                }
                return Action(publish: [Outgoing(topic: temperatureTopic, payload: format(Int(v)))],
                    assumed: setpointAttributes.map { .attribute(trait, $0, .int(v)) })
            }
            for attribute in setpointAttributes { entity.writes[WriteKey(trait: trait, attribute: attribute)] = write }
            entity.commands[CommandKey(trait: trait, command: ThermostatTrait.Command.setpointRaiseLower)] = { args, current throws in
                guard let amount = (args["Amount"] ?? args["amount"])?.intValue, (-127...127).contains(amount) else {
                    throw HomeError.invalidArgument("setpointRaiseLower needs amount between -127 and 127 (0.1 °C steps)")
                }
                guard let attribute = setpointAttributes.first, let now = current[trait, attribute]?.intValue else {
                    throw HomeError.unsupportedOperation("the thermostat has not reported its setpoint yet")
                }
                return try write(["value": .int(now + amount * 10)], current)
            }
        }
        if let modeTopic = string("mode_command_topic") {
            entity.writes[WriteKey(trait: trait, attribute: ThermostatTrait.Attribute.systemMode)] = { args, _ throws in
                guard let v = args["value"]?.intValue,
                    let name = Self.systemModes.filter({ $0.value == v && modes.contains($0.key) }).keys.sorted().first
                else { throw HomeError.invalidArgument("systemMode \(args["value"] ?? .null) is not one of this thermostat's modes (\(modes.joined(separator: ", ")))") }
                return Action(publish: [Outgoing(topic: modeTopic, payload: name)], assumed: [.attribute(trait, ThermostatTrait.Attribute.systemMode, .int(v))])
            }
        }
        return entity
    }

    // MARK: device_automation

    mutating func trigger() throws(ComponentError) -> Entity {
        guard string("automation_type") ?? "trigger" == "trigger" else {
            throw ComponentError("device_automation automation_type '\(string("automation_type") ?? "")' is not supported (only trigger)")
        }
        let triggerTopic = try require("topic")
        let type = string("type") ?? "action"
        let subtype = string("subtype") ?? ""
        let payload = string("payload")
        let position = Int(subtype.reversed().prefix { $0.isNumber }.reversed().map(String.init).joined()) ?? 1
        let kind = Mapping.pressKind(type: type, subtype: subtype)
        var entity = base(
            GenericSwitchDeviceType.identifier, rank: 90,
            [SwitchTrait.identifier: [SwitchTrait.Attribute.numberOfPositions: .int(2), SwitchTrait.Attribute.currentPosition: .int(0)]])
        entity.mergesWithSameType = true
        entity.switchPosition = max(1, min(position, 254))
        entity.key = topic.key
        if broken.contains("value_template") { return entity }
        let value = reader("value_template")
        let pos = Int64(max(1, min(position, 254)))
        entity.subscriptions.append(
            StateSubscription(topic: triggerTopic) { message throws(PayloadError) in
                if let payload, try value(message).templateText != payload { return [] }
                return Mapping.pressEvents(kind, position: pos)
            })
        return entity
    }
}

extension String {
    /// At most 120 characters, for a log line that quotes network input.
    var shortened: String { count > 120 ? String(prefix(120)) + "…" : self }
}

extension Double {
    /// The number for a message: integral values without a fraction.
    var formatted: String { rounded() == self && abs(self) < 1e15 ? String(Int64(self)) : String(self) }
}

/// Conversions from payload values to attribute values in the specification's units.
enum Mapping {
    static func onOff(_ v: Value, on: String, off: String) throws(PayloadError) -> Bool {
        let text = v.templateText
        if text == on { return true }
        if text == off { return false }
        if case .bool(let b) = v { return b }
        throw PayloadError("'\(text.prefix(40))' is neither '\(on)' nor '\(off)'")
    }

    static func temperature(_ x: Double, unit: String) throws(PayloadError) -> Int16 {
        let celsius: Double
        switch unit.uppercased() {
        case "°F", "F", "FAHRENHEIT": celsius = (x - 32) * 5 / 9
        case "K", "KELVIN": celsius = x - 273.15
        default: celsius = x
        }
        guard celsius >= -273.15, celsius <= 327.67 else { throw PayloadError("temperature \(x) \(unit) is outside −273.15…327.67 °C") }
        return Units.temperatureValue(celsius: celsius)
    }

    static func pressure(_ x: Double, unit: String) throws(PayloadError) -> Int16 {
        let hPa: Double
        switch unit.lowercased() {
        case "kpa": hPa = x * 10
        case "pa": hPa = x / 100
        case "bar": hPa = x * 1000
        case "psi": hPa = x * 68.9476
        case "inhg": hPa = x * 33.8639
        case "mmhg": hPa = x * 1.33322
        default: hPa = x  // hPa, mbar
        }
        guard hPa >= 0, hPa <= 32767 else { throw PayloadError("pressure \(x) \(unit) is outside 0…3276.7 kPa") }
        return Units.pressureValue(hectopascals: hPa)
    }

    static func battery(_ percent: Double) throws(PayloadError) -> Update {
        guard percent.isFinite, (0...100).contains(percent) else { throw PayloadError("battery \(percent) % is outside 0…100 %") }
        // BatPercentRemaining is in half percent (0…200).
        return .attribute(PowerSourceTrait.identifier, PowerSourceTrait.Attribute.batPercentRemaining, .int(Int64((percent * 2).rounded())))
    }

    static func level(_ v: Value, scale: Double) throws(PayloadError) -> Update {
        guard let b = Evaluator.number(v), b.isFinite else { throw PayloadError("brightness '\(v.templateText.prefix(40))' is not a number") }
        guard scale.isFinite, scale >= 1 else { throw PayloadError("brightness_scale \(scale) is not a number ≥ 1") }
        guard (0...scale).contains(b) else { throw PayloadError("brightness \(b) is outside 0…\(scale.formatted)") }
        let level = Units.level(brightness: UInt8((b * 255 / scale).rounded()))
        return .attribute(LevelControlTrait.identifier, LevelControlTrait.Attribute.currentLevel, .int(Int64(level)))
    }

    static func colorTemperature(_ v: Value, kelvin: Bool) throws(PayloadError) -> Update {
        guard let x = Evaluator.number(v), x.isFinite, x > 0 else { throw PayloadError("color temperature '\(v.templateText.prefix(40))' is not a positive number") }
        let mireds = kelvin ? Units.mireds(kelvin: x) : UInt16(max(1, min(x.rounded(), 0xFEFF)))
        guard kelvin || x <= 0xFEFF else { throw PayloadError("color temperature \(x) mireds is outside 1…65279") }
        return .attribute(ColorControlTrait.identifier, ColorControlTrait.Attribute.colorTemperatureMireds, .int(Int64(mireds)))
    }

    static func levelArgument(_ args: [String: Value]) throws(HomeError) -> UInt8 {
        guard let l = (args["Level"] ?? args["level"])?.intValue, (0...254).contains(l) else {
            throw HomeError.invalidArgument("moveToLevel needs level between 0 and 254")
        }
        return UInt8(max(l, 1))
    }

    static func miredsArgument(_ args: [String: Value]) throws(HomeError) -> UInt16 {
        guard let m = (args["ColorTemperatureMireds"] ?? args["colorTemperatureMireds"])?.intValue, (1...0xFEFF).contains(m) else {
            throw HomeError.invalidArgument("moveToColorTemperature needs colorTemperatureMireds between 1 and 65279")
        }
        return UInt16(m)
    }

    static func onOffCommands(topic: String, on: String, off: String) -> [CommandKey: CommandHandler] {
        let onAction = Action(publish: [Outgoing(topic: topic, payload: on)], assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(true))])
        let offAction = Action(publish: [Outgoing(topic: topic, payload: off)], assumed: [.attribute(OnOffTrait.identifier, OnOffTrait.Attribute.onOff, .bool(false))])
        return [
            CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.on): { _, _ throws in onAction },
            CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.off): { _, _ throws in offAction },
            CommandKey(trait: OnOffTrait.identifier, command: OnOffTrait.Command.toggle): { _, current throws in
                guard let isOn = current[OnOffTrait.identifier, OnOffTrait.Attribute.onOff]?.boolValue else {
                    throw HomeError.unsupportedOperation("toggle needs the device's current state, which it has not reported yet")
                }
                return isOn ? offAction : onAction
            },
        ]
    }

    enum PressKind: Hashable, Sendable { case short, shortRelease, long, longRelease, multi(Int) }

    static func pressKind(type: String, subtype: String) -> PressKind {
        let words = (type + " " + subtype).lowercased()
        if words.contains("long_release") || words.contains("hold_release") || words.hasSuffix("release") && words.contains("hold") {
            return .longRelease
        }
        if words.contains("long") || words.contains("hold") { return .long }
        if words.contains("quintuple") { return .multi(5) }
        if words.contains("quadruple") { return .multi(4) }
        if words.contains("triple") { return .multi(3) }
        if words.contains("double") { return .multi(2) }
        if words.contains("release") { return .shortRelease }
        return .short
    }

    static func pressEvents(_ kind: PressKind, position: Int64) -> [Update] {
        let s = SwitchTrait.identifier
        switch kind {
        case .short:
            return [.event(s, SwitchTrait.Event.initialPress, ["NewPosition": .int(position)]),
                .event(s, SwitchTrait.Event.shortRelease, ["PreviousPosition": .int(position)])]
        case .shortRelease: return [.event(s, SwitchTrait.Event.shortRelease, ["PreviousPosition": .int(position)])]
        case .long: return [.event(s, SwitchTrait.Event.longPress, ["NewPosition": .int(position)])]
        case .longRelease: return [.event(s, SwitchTrait.Event.longRelease, ["PreviousPosition": .int(position)])]
        case .multi(let n):
            return [.event(s, SwitchTrait.Event.multiPressComplete, ["PreviousPosition": .int(position), "TotalNumberOfPressesCounted": .int(Int64(n))])]
        }
    }
}
