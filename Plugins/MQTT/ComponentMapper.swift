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
/// | `binary_sensor` without a class | Contact Sensor | Boolean State (true = `ON`, not inverted) |
/// | `binary_sensor` smoke / carbon_monoxide / gas | Smoke CO Alarm | Smoke CO Alarm |
/// | `sensor` temperature/humidity/illuminance/pressure | Temperature/Humidity/Light/Pressure Sensor | the measurement trait |
/// | `sensor` battery, voltage in mV | (the device's primary type) | Power Source |
/// | `sensor` power/energy/voltage/current | Electrical Sensor | Electrical Power / Energy Measurement |
/// | `sensor` carbon_dioxide/pm25/pm10/volatile_organic_compounds[_parts] | Air Quality Sensor | the concentration trait |
/// | `switch` | On/Off Plug-in Unit | On/Off |
/// | `light` | On/Off, Dimmable or Color Temperature Light | On/Off, Level Control, Color Control |
/// | `cover` | Window Covering | Window Covering |
/// | `fan` | Fan | Fan Control, On/Off |
/// | `lock` | Door Lock | Door Lock |
/// | `climate` | Thermostat | Thermostat |
/// | `device_automation` trigger | Generic Switch | Switch (events) |
/// | `button` identify (the firmware's own way to identify: zigbee2mqtt, ESPHome) | (the device's primary type) | Identify |
///
/// Every entity's `device` block becomes the device's identity (`BasicInformation`): vendor
/// (`manufacturer`), product (`model`), part number (`model_id`), serial number, firmware
/// (`sw_version`) and hardware (`hw_version`) versions, and a unique ID (the first of
/// `identifiers`, else of `connections`); `suggested_area` pre-selects the room.
struct ComponentMapper {
    let topic: Discovery.Topic
    let config: [String: Value]
    private(set) var problems: [String] = []
    var templates: [String: Template] = [:]
    var broken: Set<String> = []

    static let supportedComponents: Set<String> = [
        "binary_sensor", "sensor", "switch", "light", "cover", "fan", "lock", "climate", "device_automation", "button",
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
        case "button": entity = try identifyButton()
        default:
            throw ComponentError(
                "component '\(topic.component)' is not supported (supported: \(Self.supportedComponents.sorted().joined(separator: ", ")))")
        }
        entity.manufacturer = device?["manufacturer"]?.stringValue
        entity.model = device?["model"]?.stringValue
        entity.identity = deviceBlockIdentity
        entity.suggestedArea = device?["suggested_area"].flatMap(\.templateText).flatMap { $0.isEmpty ? nil : $0 }
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

    /// The `device` block as a ``DeviceIdentity``; nil when the message has none.
    var deviceBlockIdentity: DeviceIdentity? {
        guard let device else { return nil }
        func text(_ key: String) -> String? {
            guard let v = device[key], !v.isNull else { return nil }
            let t = v.templateText
            return t.isEmpty ? nil : t
        }
        var unique: String?
        switch device["identifiers"] {
        case .string(let s)?: unique = s
        case .list(let l)?: unique = l.first.map(\.templateText)
        default: break
        }
        if unique == nil, case .list(let connections)? = device["connections"], case .list(let pair)? = connections.first,
            let value = pair.last
        {
            unique = value.templateText
        }
        return DeviceIdentity(
            vendorName: text("manufacturer"), productName: text("model"), partNumber: text("model_id"),
            serialNumber: text("serial_number"), firmwareVersion: text("sw_version"), hardwareVersion: text("hw_version"),
            uniqueID: unique)
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
            return try Self.attributeUpdates(attributes)
        }
    }

    /// What a `json_attributes_topic` object says about traits the home model has (the device
    /// gains the trait on the first such value):
    ///
    /// | Key | Firmware | Trait, attribute |
    /// |---|---|---|
    /// | `battery` (%) | zigbee2mqtt, OpenMQTTGateway | Power Source `BatPercentRemaining` (0.5 %) |
    /// | `Wifi.Signal` (dBm) | Tasmota `STATE` | Wi-Fi Network Diagnostics `RSSI` |
    /// | `wifi_sta.rssi` (dBm) | Shelly Gen1 | Wi-Fi Network Diagnostics `RSSI` |
    ///
    /// zigbee2mqtt's `linkquality` is a Zigbee LQI (0…255), which no Matter cluster carries; it is
    /// not mapped (nor Tasmota's `Wifi.RSSI`, a percentage).
    static func attributeUpdates(_ attributes: [String: Value]) throws(PayloadError) -> [Update] {
        var updates: [Update] = []
        if let battery = attributes["battery"], let percent = Evaluator.number(battery) {
            updates.append(try Mapping.battery(percent))
        }
        let signal = attributes["Wifi"]?["Signal"] ?? attributes["wifi_sta"]?["rssi"]
        if let signal, let dBm = Evaluator.number(signal) {
            guard dBm.isFinite, (-120...0).contains(dBm) else { throw PayloadError("Wi-Fi signal \(dBm.formatted) dBm is outside −120…0 dBm") }
            updates.append(.attribute(WiFiNetworkDiagnosticsTrait.identifier, WiFiNetworkDiagnosticsTrait.Attribute.rssi, .int(Int64(dBm.rounded()))))
        }
        return updates
    }
}
