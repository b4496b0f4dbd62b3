import HomeModel

/// The types and ranges of the discovery fields this plugin reads, after Home Assistant's MQTT
/// discovery schema (`homeassistant/components/mqtt/*.py`: `cv.string`, `cv.boolean`,
/// `vol.Coerce(int)`, `valid_qos_schema`, `valid_subscribe_topic`, `valid_publish_topic`…).
///
/// A field of the wrong type or out of range refuses the whole entity with the field named,
/// before any of it is compiled: no network number is ever converted to an integer unchecked.
/// Fields this plugin does not read are not checked (Home Assistant drops them too).
enum DiscoverySchema {
    enum Kind: Sendable {
        /// A string; numbers and booleans are taken as their text (`cv.string`).
        case text
        /// A topic filter this plugin subscribes to.
        case subscribeTopic
        /// A topic name this plugin publishes to.
        case publishTopic
        /// A template's source.
        case template
        /// `cv.boolean`: a boolean, a number, or one of the words Home Assistant accepts.
        case bool
        /// An integer in the range (an integral number, or a string holding one).
        case integer(ClosedRange<Int64>)
        /// A finite number in the range.
        case number(ClosedRange<Double>)
        /// One of these strings.
        case oneOf([String])
        /// A list of strings.
        case stringList
        /// A JSON object.
        case object
    }

    /// Ranges where Home Assistant has none: wide enough for every real device, narrow enough
    /// that every conversion stays exact.
    static let fields: [String: Kind] = [
        "name": .text, "unique_id": .text, "object_id": .text, "device_class": .text, "unit_of_measurement": .text,
        "payload_on": .text, "payload_press": .text, "payload_off": .text, "payload_available": .text, "payload_not_available": .text,
        "payload_open": .text, "payload_close": .text, "payload_stop": .text, "payload_lock": .text,
        "payload_unlock": .text, "payload": .text, "state_on": .text, "state_off": .text, "state_open": .text,
        "state_closed": .text, "state_opening": .text, "state_closing": .text, "state_stopped": .text,
        "state_locked": .text, "state_unlocked": .text, "state_locking": .text, "state_unlocking": .text,
        "state_jammed": .text, "type": .text, "subtype": .text, "temperature_unit": .text,
        "schema": .oneOf(["default", "basic", "json", "template"]),
        "automation_type": .text, "topic": .subscribeTopic,
        "availability_mode": .oneOf(["all", "any", "latest"]),
        "qos": .integer(0...2),
        "optimistic": .bool, "retain": .bool, "color_temp_kelvin": .bool, "brightness": .bool, "color_temp": .bool,
        "enabled_by_default": .bool, "force_update": .bool,
        "brightness_scale": .integer(1...1_000_000),
        "min_mireds": .integer(1...0xFEFF), "max_mireds": .integer(1...0xFEFF),
        "min_kelvin": .integer(1...1_000_000), "max_kelvin": .integer(1...1_000_000),
        "position_open": .integer(-1_000_000_000...1_000_000_000),
        "position_closed": .integer(-1_000_000_000...1_000_000_000),
        "speed_range_min": .integer(1...1_000_000_000), "speed_range_max": .integer(1...1_000_000_000),
        "min_temp": .number(-1e6...1e6), "max_temp": .number(-1e6...1e6), "temp_step": .number(0...1e6),
        "expire_after": .integer(0...Int64(Int32.max)), "off_delay": .integer(0...Int64(Int32.max)),
        "modes": .stringList, "supported_color_modes": .stringList, "preset_modes": .stringList,
        "device": .object, "origin": .object,
    ]

    /// Checks every field this plugin reads.
    /// - Throws: ``ComponentError`` naming the first field (in key order) that is wrong.
    static func check(_ config: [String: Value]) throws(ComponentError) {
        for key in config.keys.sorted() {
            let value = config[key]!
            if value.isNull { continue }  // an absent field (`"name": null` is allowed)
            if let kind = fields[key] {
                try check(value, kind, field: key)
            } else if key.hasSuffix("_topic") {
                try check(value, key.contains("command") || key.hasPrefix("set_") ? .publishTopic : .subscribeTopic, field: key)
            } else if key.hasSuffix("_template") {
                try check(value, .template, field: key)
            }
        }
        if let device = config["device"]?.objectValue { try checkDevice(device) }
        if let availability = config["availability"], !availability.isNull {
            guard case .list(let entries) = availability else {
                throw ComponentError("field 'availability': expected a list of {topic, …} objects, got \(describe(availability))")
            }
            for (i, entry) in entries.enumerated() {
                guard case .object(let e) = entry else {
                    throw ComponentError("field 'availability[\(i)]': expected an object, got \(describe(entry))")
                }
                guard let topic = e["topic"], !topic.isNull else { throw ComponentError("field 'availability[\(i)].topic' is missing") }
                try check(topic, .subscribeTopic, field: "availability[\(i)].topic")
                for key in ["payload_available", "payload_not_available"] where e[key] != nil && !e[key]!.isNull {
                    try check(e[key]!, .text, field: "availability[\(i)].\(key)")
                }
                if let t = e["value_template"], !t.isNull { try check(t, .template, field: "availability[\(i)].value_template") }
            }
        }
    }

    static func checkDevice(_ device: [String: Value]) throws(ComponentError) {
        for key in ["name", "manufacturer", "model", "model_id", "sw_version", "hw_version", "suggested_area", "serial_number"] {
            if let v = device[key], !v.isNull { try check(v, .text, field: "device.\(key)") }
        }
        if let ids = device["identifiers"], !ids.isNull {
            switch ids {
            case .string: break
            case .list(let l):
                for (i, id) in l.enumerated() { try check(id, .text, field: "device.identifiers[\(i)]") }
            default: throw ComponentError("field 'device.identifiers': expected a string or a list of strings, got \(describe(ids))")
            }
        }
        if let connections = device["connections"], !connections.isNull {
            guard case .list(let l) = connections else {
                throw ComponentError("field 'device.connections': expected a list of [type, value] pairs, got \(describe(connections))")
            }
            for (i, pair) in l.enumerated() {
                guard case .list(let p) = pair, p.count == 2 else {
                    throw ComponentError("field 'device.connections[\(i)]': expected a [type, value] pair, got \(describe(pair))")
                }
                for (j, part) in p.enumerated() { try check(part, .text, field: "device.connections[\(i)][\(j)]") }
            }
        }
    }

    static func check(_ value: Value, _ kind: Kind, field: String) throws(ComponentError) {
        func refuse(_ expected: String) -> ComponentError {
            ComponentError("field '\(field)': expected \(expected), got \(describe(value))")
        }
        switch kind {
        case .text:
            switch value {
            case .string, .int, .double, .bool: return
            default: throw refuse("a string")
            }
        case .template:
            guard case .string = value else { throw refuse("a template string") }
        case .subscribeTopic, .publishTopic:
            guard case .string(let topic) = value else { throw refuse("a topic string") }
            if let problem = MQTTTopic.problem(topic, kind.isPublish ? .publish : .subscribe) {
                throw ComponentError("field '\(field)': the topic '\(topic.prefix(80).debugDescription.dropFirst().dropLast())' \(problem)")
            }
        case .bool:
            if boolean(value) == nil { throw refuse("a boolean") }
        case .integer(let range):
            guard let i = integer(value) else { throw refuse("an integer") }
            guard range.contains(i) else { throw refuse("an integer in \(range.lowerBound)…\(range.upperBound)") }
        case .number(let range):
            guard let d = number(value) else { throw refuse("a finite number") }
            guard range.contains(d) else { throw refuse("a number in \(range.lowerBound)…\(range.upperBound)") }
        case .oneOf(let options):
            guard let s = value.stringValue, options.contains(s) else { throw refuse("one of \(options.joined(separator: ", "))") }
        case .stringList:
            guard case .list(let l) = value, l.allSatisfy({ $0.stringValue != nil }) else { throw refuse("a list of strings") }
        case .object:
            guard case .object = value else { throw refuse("an object") }
        }
    }

    /// A short description of a value for an error message (kind and at most 40 characters).
    static func describe(_ value: Value) -> String {
        let text = value.templateText
        return "\(value.kindName) '\(text.prefix(40))\(text.count > 40 ? "…" : "")'"
    }

    /// `cv.boolean`.
    static func boolean(_ value: Value) -> Bool? {
        switch value {
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d.isNaN ? nil : d != 0
        case .string(let s):
            switch s.lowercased() {
            case "1", "true", "yes", "on", "enable": return true
            case "0", "false", "no", "off", "disable": return false
            default: return nil
            }
        default: return nil
        }
    }

    /// A finite number: a JSON number or a string holding one.
    static func number(_ value: Value) -> Double? {
        let d: Double?
        switch value {
        case .int(let i): d = Double(i)
        case .double(let x): d = x
        case .string(let s): d = Double(s.trimmingSpaces)
        default: d = nil
        }
        guard let d, d.isFinite else { return nil }
        return d
    }

    /// An integer: an integral JSON number, or a string holding one (Home Assistant's
    /// `vol.Coerce(int)`); nil for fractions, non-finite numbers and anything beyond ±2⁵³.
    static func integer(_ value: Value) -> Int64? {
        if case .int(let i) = value { return i }
        if case .string(let s) = value, let i = Int64(s.trimmingSpaces) { return i }
        guard let d = number(value), d.rounded() == d, abs(d) <= 9_007_199_254_740_992 else { return nil }
        return Int64(d)
    }
}

extension DiscoverySchema.Kind {
    var isPublish: Bool { if case .publishTopic = self { true } else { false } }
}

extension String {
    var trimmingSpaces: Substring {
        var s = self[...]
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }
}
