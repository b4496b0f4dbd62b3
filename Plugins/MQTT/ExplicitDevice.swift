import DriverAPI
import HomeModel
import Foundation

/// A device that announces nothing, mapped by hand in `hearth.yaml`: its device type, where
/// each attribute is read from, and what each command publishes.
///
/// ```yaml
/// - id: greenhouse
///   name: Greenhouse thermometer
///   room: Garden
///   deviceType: Temperature Sensor          # spec name, Swift name or 0x0302
///   availability: { topic: greenhouse/status, online: up, offline: down }
///   attributes:
///     - trait: Temperature Measurement
///       attribute: MeasuredValue
///       topic: greenhouse/sensor
///       json: readings.temp                 # a path into a JSON payload; omit for a plain one
///       unit: celsius                       # converted to the spec's units (0.01 °C)
///   commands:
///     - { trait: On/Off, command: On, topic: relay/set, payload: "1" }
///     - { trait: Level Control, command: MoveToLevel, topic: dimmer/set, payload: "{{ Level }}" }
/// ```
struct ExplicitDevice: Decodable, Sendable {
    struct Availability: Decodable, Sendable {
        var topic: String
        var online: String?
        var offline: String?
    }

    struct AttributeMapping: Decodable, Sendable {
        var trait: String
        var attribute: String
        var topic: String
        /// A path into a JSON payload (`a.b[0]`, `$.a.b`); nil reads the whole payload.
        var json: String?
        /// A template instead of `json` (`{{ value_json.x | float }}`).
        var template: String?
        /// Payload text → value (`{"ON": true, "OFF": false}`).
        var map: [String: Value]?
        /// Converts a reading into the spec's units.
        var unit: String?
        /// Multiplies a numeric reading (after `unit`).
        var scale: Double?
    }

    struct CommandMapping: Decodable, Sendable {
        var trait: String
        var command: String
        var topic: String
        /// The payload; may use the command's arguments as template names (`{{ Level }}`).
        var payload: String
        var retain: Bool?
        /// What an optimistic device assumes after the command (attribute name → value).
        var assume: [String: Value]?
    }

    struct WriteMapping: Decodable, Sendable {
        var trait: String
        var attribute: String
        var topic: String
        /// The payload; `{{ value }}` is the written value.
        var payload: String?
    }

    var id: String
    var name: String?
    var room: String?
    var structure: String?
    var deviceType: String
    var manufacturer: String?
    var model: String?
    var availability: Availability?
    var optimistic: Bool?
    var qos: Int?
    var attributes: [AttributeMapping]?
    var commands: [CommandMapping]?
    var writes: [WriteMapping]?

    static let units = ["celsius", "fahrenheit", "percent100ths", "lux", "hPa", "kPa", "brightness", "batteryPercent", "mireds", "kelvin"]

    /// Compiles the mapping into an entity.
    /// - Throws: ``HomeError`` `invalidArgument` naming the file, line and key of the problem.
    func entity(path: String, configuration: PluginConfiguration, catalog: Catalog) throws(HomeError) -> Entity {
        func problem(_ key: String, _ message: String) -> HomeError {
            .invalidArgument(configuration.problem(at: key.isEmpty ? path : "\(path).\(key)", message))
        }
        guard !id.isEmpty, !id.contains("/") else { throw problem("id", "must be a non-empty name without '/'") }
        guard let type = catalog.deviceType(named: deviceType) else {
            throw problem("deviceType", "unknown device type '\(deviceType)' (see `hearth catalog`)")
        }
        if let qos, !(0...2).contains(qos) { throw problem("qos", "must be 0, 1 or 2") }
        var entity = Entity(
            key: "config/\(id)", deviceID: id, deviceName: name ?? id, deviceType: type.id, rank: 0, traits: [:])
        entity.manufacturer = manufacturer
        entity.model = model
        entity.optimistic = optimistic ?? false
        entity.qos = Int32(qos ?? 1)
        if let name {
            entity.commission = CommissionHint(name: name, room: room, structure: structure)
        }
        if let a = availability {
            if let p = MQTTTopic.problem(a.topic, .subscribe) { throw problem("availability.topic", "the topic \(p)") }
            entity.availability = [AvailabilityTopic(topic: a.topic, available: a.online ?? "online", notAvailable: a.offline ?? "offline")]
        }
        for trait in type.requiredTraits { entity.traits[trait] = [:] }

        func resolveTrait(_ name: String, _ key: String) throws(HomeError) -> TraitDescriptor {
            guard let t = catalog.trait(named: name) else { throw problem(key, "unknown trait '\(name)'") }
            if entity.traits[t.id] == nil { entity.traits[t.id] = [:] }
            return t
        }

        for (i, m) in (attributes ?? []).enumerated() {
            let key = "attributes[\(i)]"
            let trait = try resolveTrait(m.trait, "\(key).trait")
            guard let attribute = trait.attribute(named: m.attribute) else {
                throw problem("\(key).attribute", "trait \(trait.name) has no attribute '\(m.attribute)'")
            }
            if let unit = m.unit, !Self.units.contains(unit) {
                throw problem("\(key).unit", "unknown unit '\(unit)' (known: \(Self.units.joined(separator: ", ")))")
            }
            if m.json != nil, m.template != nil { throw problem(key, "give either json or template, not both") }
            var template: Template?
            do throws(TemplateError) {
                if let source = m.template {
                    template = try Template(source)
                } else if let path = m.json {
                    template = try Template("{{ value_json" + (try Self.jinjaPath(path)) + " }}")
                }
            } catch {
                throw problem(m.template != nil ? "\(key).template" : "\(key).json", error.message)
            }
            if let p = MQTTTopic.problem(m.topic, .subscribe) { throw problem("\(key).topic", "the topic \(p)") }
            let mapping = m
            let compiled = template
            entity.subscriptions.append(
                StateSubscription(topic: m.topic) { message throws(PayloadError) in
                    var raw: Value = .string(message.text)
                    if let compiled {
                        do throws(TemplateError) {
                            raw = try compiled.render(message.variables)
                        } catch {
                            throw PayloadError(error.message)
                        }
                    }
                    let value = try Self.convert(raw, mapping: mapping, attribute: attribute)
                    do throws(HomeError) {
                        try attribute.validate(value, in: trait)
                    } catch {
                        throw PayloadError(error.message)
                    }
                    return [.attribute(trait.id, attribute.id, value)]
                })
        }
        for (i, c) in (commands ?? []).enumerated() {
            let key = "commands[\(i)]"
            let trait = try resolveTrait(c.trait, "\(key).trait")
            guard let command = trait.command(named: c.command) else {
                throw problem("\(key).command", "trait \(trait.name) has no command '\(c.command)'")
            }
            let payload: Template
            do throws(TemplateError) {
                payload = try Template(c.payload)
            } catch {
                throw problem("\(key).payload", error.message)
            }
            var assumed: [Update] = []
            for (name, value) in c.assume ?? [:] {
                guard let a = trait.attribute(named: name) else {
                    throw problem("\(key).assume.\(name)", "trait \(trait.name) has no attribute '\(name)'")
                }
                assumed.append(.attribute(trait.id, a.id, value))
            }
            let topic = c.topic
            if let p = MQTTTopic.problem(topic, .publish) { throw problem("\(key).topic", "the topic \(p)") }
            let retain = c.retain ?? false
            let qos = entity.qos
            let fixedAssumed = assumed
            entity.commands[CommandKey(trait: trait.id, command: command.id)] = { args, _ throws in
                var names: [String: Value] = [:]
                for (k, v) in args {
                    names[k] = v
                    if let first = k.first { names[first.lowercased() + k.dropFirst()] = v }
                }
                let text: String
                do throws(TemplateError) {
                    text = try payload.render(Template.Variables(value: "", json: nil, extra: names)).templateText
                } catch {
                    throw HomeError.invalidArgument("payload of command \(command.name): \(error.message)")
                }
                return Action(publish: [Outgoing(topic: topic, payload: text, qos: qos, retain: retain)], assumed: fixedAssumed)
            }
        }
        for (i, w) in (writes ?? []).enumerated() {
            let key = "writes[\(i)]"
            let trait = try resolveTrait(w.trait, "\(key).trait")
            guard let attribute = trait.attribute(named: w.attribute) else {
                throw problem("\(key).attribute", "trait \(trait.name) has no attribute '\(w.attribute)'")
            }
            let payload: Template
            do throws(TemplateError) {
                payload = try Template(w.payload ?? "{{ value }}")
            } catch {
                throw problem("\(key).payload", error.message)
            }
            let topic = w.topic
            if let p = MQTTTopic.problem(topic, .publish) { throw problem("\(key).topic", "the topic \(p)") }
            let qos = entity.qos
            entity.writes[WriteKey(trait: trait.id, attribute: attribute.id)] = { args, _ throws in
                let value = args["value"] ?? .null
                let text: String
                do throws(TemplateError) {
                    text = try payload.render(Template.Variables(value: value.templateText, json: nil, extra: ["value": value])).templateText
                } catch {
                    throw HomeError.invalidArgument("payload of write \(attribute.name): \(error.message)")
                }
                return Action(publish: [Outgoing(topic: topic, payload: text, qos: qos)], assumed: [.attribute(trait.id, attribute.id, value)])
            }
        }
        return entity
    }

    /// Turns `a.b[0]` or `$.a.b` into the template path `['a']['b'][0]`.
    static func jinjaPath(_ path: String) throws(TemplateError) -> String {
        var p = Substring(path)
        if p.hasPrefix("$") { p = p.dropFirst() }
        var out = ""
        var name = ""
        func flush() {
            if !name.isEmpty {
                out += "['" + name.replacingOccurrences(of: "'", with: "\\'") + "']"
                name = ""
            }
        }
        var i = p.startIndex
        while i < p.endIndex {
            let c = p[i]
            if c == "." {
                flush()
            } else if c == "[" {
                flush()
                guard let close = p[i...].firstIndex(of: "]") else { throw TemplateError("unclosed '[' in json path '\(path)'") }
                let inner = p[p.index(after: i)..<close]
                guard let n = Int(inner) else { throw TemplateError("json path '\(path)': [\(inner)] is not a list index") }
                out += "[\(n)]"
                i = close
            } else {
                name.append(c)
            }
            i = p.index(after: i)
        }
        flush()
        return out
    }

    /// Converts a read value into the attribute's type and units.
    static func convert(_ raw: Value, mapping m: AttributeMapping, attribute: AttributeDescriptor) throws(PayloadError) -> Value {
        var value = raw
        if let map = m.map {
            guard let mapped = map[raw.templateText] else {
                throw PayloadError("'\(raw.templateText.prefix(40))' is not one of \(map.keys.sorted().joined(separator: ", "))")
            }
            value = mapped
        }
        if attribute.type == .bool {
            if case .bool = value { return value }
            switch value.templateText.lowercased() {
            case "true", "on", "1", "yes": return .bool(true)
            case "false", "off", "0", "no": return .bool(false)
            default: throw PayloadError("'\(value.templateText.prefix(40))' is not a boolean")
            }
        }
        if attribute.type == .string { return .string(value.templateText) }
        guard attribute.type.isInteger || attribute.type == .single || attribute.type == .double else { return value }
        if value.isNull, attribute.nullable { return .null }
        guard var x = Evaluator.number(value), x.isFinite else {
            throw PayloadError("'\(value.templateText.prefix(40))' is not a number")
        }
        switch m.unit {
        case "celsius"?: x = Double(try Mapping.temperature(x, unit: "C"))
        case "fahrenheit"?: x = Double(try Mapping.temperature(x, unit: "F"))
        case "percent100ths"?:
            guard (0...100).contains(x) else { throw PayloadError("\(x) % is outside 0…100 %") }
            x = Double(Units.percent100ths(percent: x))
        case "lux"?:
            guard x >= 0 else { throw PayloadError("illuminance \(x) lx is negative") }
            x = Double(Units.illuminanceValue(lux: x))
        case "hPa"?: x = Double(try Mapping.pressure(x, unit: "hPa"))
        case "kPa"?: x = Double(try Mapping.pressure(x, unit: "kPa"))
        case "brightness"?:
            guard (0...255).contains(x) else { throw PayloadError("brightness \(x) is outside 0…255") }
            x = Double(Units.level(brightness: UInt8(x.rounded())))
        case "batteryPercent"?:
            guard (0...100).contains(x) else { throw PayloadError("battery \(x) % is outside 0…100 %") }
            x *= 2
        case "mireds"?: break
        case "kelvin"?:
            guard x > 0 else { throw PayloadError("colour temperature \(x) K is not positive") }
            x = Double(Units.mireds(kelvin: x))
        default: break
        }
        if let scale = m.scale { x *= scale }
        if attribute.type.isInteger {
            let r = x.rounded()
            guard abs(r) < 9.2e18 else { throw PayloadError("\(x) is out of range") }
            return .int(Int64(r))
        }
        return .double(x)
    }
}
