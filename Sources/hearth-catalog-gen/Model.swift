import Foundation

/// The catalogue resolved for emitting: IDs parsed, Swift names chosen, everything sorted.
struct Model {
    struct Field {
        let record: FieldRecord
        let swiftName: String
        var swiftType: String { Model.swiftType(record.type) }
    }

    struct Attribute {
        let id: UInt32
        let record: AttributeRecord
        let swiftName: String
        var swiftType: String { Model.swiftType(record.type) }
    }

    struct Command {
        let id: UInt32
        let record: CommandRecord
        let swiftName: String
        let fields: [Field]
    }

    struct Event {
        let id: UInt32
        let record: EventRecord
        let swiftName: String
        let fields: [Field]
    }

    struct Trait {
        let id: UInt32
        let record: TraitRecord
        /// `OnOff`; the type is `OnOffTrait`, the `MatterTraits` property `onOffTrait`.
        let baseName: String
        let attributes: [Attribute]
        let commands: [Command]
        let events: [Event]
        var typeName: String { baseName + "Trait" }
        var propertyName: String { Naming.memberName(baseName) + "Trait" }
    }

    struct DeviceType {
        let id: UInt32
        let record: DeviceTypeRecord
        let baseName: String
        let required: [UInt32]
        let optional: [UInt32]
        /// Traits the spec lists for this device type that the catalogue does not define.
        let outside: [TraitReference]
        var typeName: String { baseName + "DeviceType" }
    }

    let version: String
    let traits: [Trait]
    let deviceTypes: [DeviceType]

    static let dataTypes: Set<String> = [
        "bool", "uint8", "uint16", "uint24", "uint32", "uint64", "int8", "int16", "int32", "int64", "enum8", "enum16",
        "bitmap8", "bitmap16", "bitmap32", "bitmap64", "single", "double", "string", "octets", "list", "structure",
    ]

    /// The Swift type a value of `type` is read and passed as.
    static func swiftType(_ type: String) -> String {
        switch type {
        case "bool": "Bool"
        case "uint8", "enum8", "bitmap8": "UInt8"
        case "uint16", "enum16", "bitmap16": "UInt16"
        case "uint24", "uint32", "bitmap32": "UInt32"
        case "uint64", "bitmap64": "UInt64"
        case "int8": "Int8"
        case "int16": "Int16"
        case "int32": "Int32"
        case "int64": "Int64"
        case "single": "Float"
        case "double": "Double"
        case "string", "octets": "String"
        case "list": "[Value]"
        default: "[String: Value]"
        }
    }

    static func isInteger(_ type: String) -> Bool {
        ["uint8", "uint16", "uint24", "uint32", "uint64", "int8", "int16", "int32", "int64", "enum8", "enum16",
         "bitmap8", "bitmap16", "bitmap32", "bitmap64"].contains(type)
    }

    /// `M` → mandatory, `O` → optional, `P…` → provisional, `D` or `…, D` → deprecated, else conditional.
    static func conformance(_ expression: String) -> String {
        let e = expression.trimmingCharacters(in: .whitespaces)
        if e == "M" { return "mandatory" }
        if e == "O" { return "optional" }
        if e == "P" || e.hasPrefix("P,") { return "provisional" }
        if e == "D" || e.hasSuffix(", D") { return "deprecated" }
        return "conditional"
    }

    init(_ data: CatalogData) throws {
        version = data.version
        var traits: [Trait] = []
        for t in data.traits {
            let id = try parseHex(t.id, "trait \(t.name)")
            let label = "trait \(t.name) (\(t.id))"
            func checkType(_ type: String, _ element: String?, _ what: String) throws {
                guard Model.dataTypes.contains(type) else { throw GeneratorError("\(label): \(what) has unknown type '\(type)'") }
                if let element, !Model.dataTypes.contains(element) {
                    throw GeneratorError("\(label): \(what) has unknown element type '\(element)'")
                }
            }
            func fields(_ records: [FieldRecord], _ owner: String) throws -> [Field] {
                var names = Set<String>()
                return try records.map { f in
                    try checkType(f.type, f.elementType, "\(owner).\(f.name)")
                    let name = f.swiftName ?? Naming.memberName(f.name)
                    guard names.insert(name).inserted, name != "arguments" else {
                        throw GeneratorError("\(label): \(owner) has two fields named '\(name)' (or one named 'arguments')")
                    }
                    return Field(record: f, swiftName: name)
                }
            }
            var seen = Set<String>()
            let attributes = try t.attributes.map { a in
                try checkType(a.type, a.elementType, "attribute \(a.name)")
                let name = a.swiftName ?? Naming.memberName(a.name)
                guard seen.insert(name).inserted, name != "storage" else { throw GeneratorError("\(label): attribute name '\(name)' twice") }
                return Attribute(id: try parseHex(a.id, "\(label) attribute \(a.name)"), record: a, swiftName: name)
            }.sorted { $0.id < $1.id }
            seen = ["state", "binding", "attributes", "metadata", "identifier"]
            let commands = try t.commands.map { c in
                let name = c.swiftName ?? Naming.memberName(c.name)
                guard seen.insert(name).inserted else { throw GeneratorError("\(label): command name '\(name)' clashes") }
                return Command(
                    id: try parseHex(c.id, "\(label) command \(c.name)"), record: c, swiftName: name,
                    fields: try fields(c.fields, "command \(c.name)"))
            }.sorted { $0.id < $1.id }
            seen = []
            let events = try t.events.map { e in
                let name = e.swiftName ?? Naming.memberName(e.name)
                guard seen.insert(name).inserted else { throw GeneratorError("\(label): event name '\(name)' twice") }
                guard ["debug", "info", "critical"].contains(e.priority) else {
                    throw GeneratorError("\(label): event \(e.name) has priority '\(e.priority)'")
                }
                return Event(
                    id: try parseHex(e.id, "\(label) event \(e.name)"), record: e, swiftName: name,
                    fields: try fields(e.fields, "event \(e.name)"))
            }.sorted { $0.id < $1.id }
            for (kind, ids) in [("attribute", attributes.map(\.id)), ("command", commands.map(\.id)), ("event", events.map(\.id))]
            where Set(ids).count != ids.count {
                throw GeneratorError("\(label): duplicate \(kind) ID")
            }
            traits.append(Trait(
                id: id, record: t, baseName: t.swiftName ?? Naming.typeName(t.name), attributes: attributes,
                commands: commands, events: events))
        }
        traits.sort { $0.id < $1.id }
        for (a, b) in zip(traits, traits.dropFirst()) where a.id == b.id || a.baseName == b.baseName {
            throw GeneratorError("traits \(a.record.name) and \(b.record.name) share an ID or a Swift name")
        }
        if Set(traits.map(\.baseName)).count != traits.count { throw GeneratorError("two traits share a Swift name") }
        self.traits = traits

        let known = Set(traits.map(\.id))
        var types: [DeviceType] = []
        for d in data.deviceTypes {
            let label = "device type \(d.name) (\(d.id))"
            var required: [UInt32] = []
            var optional: [UInt32] = []
            var outside: [TraitReference] = []
            for r in d.requiredTraits {
                let id = try parseHex(r.id, "\(label) trait \(r.name)")
                guard known.contains(id) else { throw GeneratorError("\(label) requires \(r.name) (\(r.id)), which the catalogue lacks") }
                if !required.contains(id) { required.append(id) }
            }
            for r in d.optionalTraits {
                let id = try parseHex(r.id, "\(label) trait \(r.name)")
                if known.contains(id) {
                    if !optional.contains(id) && !required.contains(id) { optional.append(id) }
                } else {
                    outside.append(r)
                }
            }
            types.append(DeviceType(
                id: try parseHex(d.id, label), record: d, baseName: d.swiftName ?? Naming.typeName(d.name),
                required: required.sorted(), optional: optional.sorted(),
                outside: outside.sorted { (try? parseHex($0.id, "")) ?? 0 < (try? parseHex($1.id, "")) ?? 0 }))
        }
        types.sort { $0.id < $1.id }
        if Set(types.map(\.id)).count != types.count || Set(types.map(\.baseName)).count != types.count {
            throw GeneratorError("two device types share an ID or a Swift name")
        }
        self.deviceTypes = types
    }

    func trait(_ id: UInt32) -> Trait { traits.first { $0.id == id }! }
}

extension UInt32 {
    /// `0x0006`, or `0xFFF1FC00` for wide IDs.
    func hex(width: Int = 4) -> String {
        let digits = String(self, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: Swift.max(0, width - digits.count)) + digits
    }
}
