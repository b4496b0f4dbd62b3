/// Writes the Swift sources of the catalogue. Output depends only on the model, in a fixed
/// order, so regenerating unchanged data gives byte-identical files.
struct Emitter {
    let model: Model
    /// The header lines every generated file starts with.
    let header: String

    // MARK: Catalog.generated.swift

    func catalog() -> String {
        var o = header
        o += "extension Catalog {\n"
        o += "    /// The Matter traits (clusters) of the generated catalogue, sorted by ID.\n"
        o += "    static let generatedTraits: [TraitDescriptor] = [\n"
        for t in model.traits { o += "        \(descriptorName(t)),\n" }
        o += "    ]\n\n"
        o += "    /// The Matter device types of the generated catalogue, sorted by ID.\n"
        o += "    static let generatedDeviceTypes: [DeviceTypeDescriptor] = [\n"
        for d in model.deviceTypes { o += deviceTypeDescriptor(d) }
        o += "    ]\n"
        for t in model.traits { o += "\n" + traitDescriptor(t) }
        o += "}\n"
        return o
    }

    private func descriptorName(_ t: Model.Trait) -> String { Naming.memberName(t.baseName) + "Descriptor" }

    private func items(_ items: [ItemRecord]?, indent: String) -> String? {
        guard let items, !items.isEmpty else { return nil }
        let list = items.map { "EnumItem(name: \(Naming.literal($0.name)), value: \($0.value))" }
        return "[\n" + list.map { indent + "    " + $0 + ",\n" }.joined() + indent + "]"
    }

    private func traitDescriptor(_ t: Model.Trait) -> String {
        let r = t.record
        var o = "    /// \(r.name) (\(t.id.hex())), from `\(r.source.file)` @ \(r.source.commit.prefix(12)).\n"
        o += "    private static let \(descriptorName(t)) = TraitDescriptor(\n"
        o += "        id: TraitID(\(t.id.hex())), name: \(Naming.literal(r.name)), swiftName: \(Naming.literal(t.typeName)), revision: \(r.revision),\n"
        if r.features.isEmpty {
            o += "        features: [],\n"
        } else {
            o += "        features: [\n"
            for f in r.features.sorted(by: { $0.bit < $1.bit }) {
                o += "            FeatureDescriptor(bit: \(f.bit), code: \(Naming.literal(f.code)), name: \(Naming.literal(f.name))),\n"
            }
            o += "        ],\n"
        }
        if t.attributes.isEmpty {
            o += "        attributes: [],\n"
        } else {
            o += "        attributes: [\n"
            for a in t.attributes {
                let ar = a.record
                var args = [
                    "id: AttributeID(\(a.id.hex()))", "name: \(Naming.literal(ar.name))", "swiftName: \(Naming.literal(a.swiftName))",
                    "type: .\(ar.type)",
                ]
                if let e = ar.elementType { args.append("elementType: .\(e)") }
                args.append("specType: \(Naming.literal(ar.specType))")
                if let v = ar.min { args.append("minimum: \(v)") }
                if let v = ar.max { args.append("maximum: \(v)") }
                if ar.nullable == true { args.append("nullable: true") }
                if ar.writable == true { args.append("writable: true") }
                if let u = ar.unit { args.append("unit: \(Naming.literal(u))") }
                args.append("conformance: .\(Model.conformance(ar.conformance))")
                args.append("conformanceExpression: \(Naming.literal(ar.conformance))")
                if let i = items(ar.items, indent: "                ") { args.append("items: " + i) }
                o += "            AttributeDescriptor(\n" + wrap(args, indent: "                ") + "),\n"
            }
            o += "        ],\n"
        }
        if t.commands.isEmpty {
            o += "        commands: [],\n"
        } else {
            o += "        commands: [\n"
            for c in t.commands {
                o += "            CommandDescriptor(\n"
                o += "                id: CommandID(\(c.id.hex(width: 2))), name: \(Naming.literal(c.record.name)), swiftName: \(Naming.literal(c.swiftName)),\n"
                o += "                fields: \(fieldDescriptors(c.fields, indent: "                ")),\n"
                o += "                conformance: .\(Model.conformance(c.record.conformance)), conformanceExpression: \(Naming.literal(c.record.conformance))),\n"
            }
            o += "        ],\n"
        }
        if t.events.isEmpty {
            o += "        events: []\n"
        } else {
            o += "        events: [\n"
            for e in t.events {
                o += "            EventDescriptor(\n"
                o += "                id: EventID(\(e.id.hex(width: 2))), name: \(Naming.literal(e.record.name)), swiftName: \(Naming.literal(e.swiftName)), priority: \(Naming.literal(e.record.priority)),\n"
                o += "                fields: \(fieldDescriptors(e.fields, indent: "                ")),\n"
                o += "                conformance: .\(Model.conformance(e.record.conformance)), conformanceExpression: \(Naming.literal(e.record.conformance))),\n"
            }
            o += "        ]\n"
        }
        o += "    )\n"
        return o
    }

    private func fieldDescriptors(_ fields: [Model.Field], indent: String) -> String {
        guard !fields.isEmpty else { return "[]" }
        var o = "[\n"
        for f in fields {
            let r = f.record
            var args = [
                "name: \(Naming.literal(r.name))", "swiftName: \(Naming.literal(f.swiftName))", "type: .\(r.type)",
                "specType: \(Naming.literal(r.specType))",
            ]
            if let v = r.min { args.append("minimum: \(v)") }
            if let v = r.max { args.append("maximum: \(v)") }
            if r.nullable == true { args.append("nullable: true") }
            if r.optional == true { args.append("optional: true") }
            if let i = items(r.items, indent: indent + "        ") { args.append("items: " + i) }
            o += indent + "    FieldDescriptor(\n" + wrap(args, indent: indent + "        ") + "),\n"
        }
        return o + indent + "]"
    }

    private func deviceTypeDescriptor(_ d: Model.DeviceType) -> String {
        let r = d.record
        func ids(_ list: [UInt32]) -> String { "[" + list.map { "TraitID(\($0.hex()))" }.joined(separator: ", ") + "]" }
        var o = "        DeviceTypeDescriptor(\n"
        o += "            id: DeviceTypeID(\(d.id.hex())), name: \(Naming.literal(r.name)), swiftName: \(Naming.literal(d.typeName)),\n"
        o += "            revision: \(r.revision), deviceClass: \(Naming.literal(r.class)),\n"
        o += "            requiredTraits: \(ids(d.required)),\n"
        o += "            optionalTraits: \(ids(d.optional))"
        o += r.sensitive == true ? ",\n            isSensitive: true),\n" : "),\n"
        return o
    }

    /// Arguments on lines of at most ~120 columns.
    private func wrap(_ args: [String], indent: String) -> String {
        var lines: [String] = []
        var line = ""
        for (i, arg) in args.enumerated() {
            let piece = arg + (i == args.count - 1 ? "" : ",")
            if arg.contains("\n") {
                if !line.isEmpty { lines.append(line) }
                lines.append(indent + piece)
                line = ""
            } else if line.isEmpty {
                line = indent + piece
            } else if line.count + 1 + piece.count > 120 {
                lines.append(line)
                line = indent + piece
            } else {
                line += " " + piece
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }

    // MARK: Traits.generated.swift

    func traits() -> String {
        var o = header
        for t in model.traits { o += trait(t) + "\n" }
        o += """
            /// Reads an integer attribute as `T`; nil when absent, null, not an integer or out of `T`'s range.
            private func generatedInteger<T: FixedWidthInteger>(_ value: Value?, as type: T.Type = T.self) -> T? {
                value?.intValue.flatMap { T(exactly: $0) }
            }

            """
        return o
    }

    private func doc(_ t: Model.Trait) -> String {
        let r = t.record
        var o = "/// \(r.name) (\(t.id.hex())), cluster revision \(r.revision): the typed view of a device type's trait.\n"
        if !r.features.isEmpty {
            o += "///\n/// Features: " + r.features.sorted { $0.bit < $1.bit }.map { "\($0.name) (\($0.code))" }.joined(separator: ", ") + ".\n"
        }
        o += "///\n/// Generated from `catalog/matter.json`; the facts come from `\(r.source.file)` in\n"
        o += "/// \(r.source.repo) at \(r.source.commit.prefix(12)).\n"
        return o
    }

    private func trait(_ t: Model.Trait) -> String {
        var o = doc(t)
        o += "public struct \(t.typeName): Trait {\n"
        o += "    public static let identifier: TraitID = \(t.id.hex())\n"
        o += "    public let state: TraitState\n"
        o += "    public let binding: TraitBinding\n\n"
        o += "    public init(state: TraitState, binding: TraitBinding) {\n"
        o += "        self.state = state\n"
        o += "        self.binding = binding\n"
        o += "    }\n\n"
        o += "    /// Attribute IDs.\n"
        o += "    public enum Attribute {\n"
        for a in t.attributes {
            o += "        /// \(a.record.name) (\(a.record.specType), conformance \(a.record.conformance)).\n"
            o += "        public static let \(Naming.escaped(a.swiftName)): AttributeID = \(a.id.hex())\n"
        }
        o += "    }\n\n"
        o += "    /// Command IDs.\n"
        o += "    public enum Command {\n"
        for c in t.commands {
            o += "        /// \(c.record.name) (conformance \(c.record.conformance)).\n"
            o += "        public static let \(Naming.escaped(c.swiftName)): CommandID = \(c.id.hex(width: 2))\n"
        }
        o += "    }\n\n"
        o += "    /// Event IDs.\n"
        o += "    public enum Event {\n"
        for e in t.events {
            o += "        /// \(e.record.name) (priority \(e.record.priority), conformance \(e.record.conformance)).\n"
            o += "        public static let \(Naming.escaped(e.swiftName)): EventID = \(e.id.hex(width: 2))\n"
        }
        o += "    }\n\n"
        o += "    /// The trait's attribute values in the specification's units; each nil when absent or null.\n"
        o += "    public struct Attributes: Sendable {\n"
        o += "        private let storage: [AttributeID: Value]\n\n"
        o += "        public init(_ values: [AttributeID: Value]) { self.storage = values }\n"
        for a in t.attributes {
            let r = a.record
            var facts = [r.specType]
            if let lo = r.min, let hi = r.max { facts.append("\(lo)…\(hi)") } else if let lo = r.min { facts.append("≥ \(lo)") } else if let hi = r.max { facts.append("≤ \(hi)") }
            if let u = r.unit { facts.append("in \(u)") }
            if r.nullable == true { facts.append("nullable") }
            if r.writable == true { facts.append("writable") }
            o += "\n        /// \(r.name) (\(a.id.hex())): \(facts.joined(separator: ", ")).\n"
            o += "        public var \(Naming.escaped(a.swiftName)): \(a.swiftType)? { \(read(a)) }\n"
        }
        o += "    }\n\n"
        o += "    /// The attribute values now.\n"
        o += "    public var attributes: Attributes { Attributes(state.attributes) }\n"
        for c in t.commands { o += "\n" + command(c) }
        o += "}\n"
        return o
    }

    private func read(_ a: Model.Attribute) -> String {
        let v = "storage[Attribute.\(Naming.escaped(a.swiftName))]"
        switch a.record.type {
        case "bool": return "\(v)?.boolValue"
        case "single": return "\(v)?.doubleValue.map { Float($0) }"
        case "double": return "\(v)?.doubleValue"
        case "string", "octets": return "\(v)?.stringValue"
        case "list": return "\(v)?.listValue"
        case "structure": return "\(v)?.objectValue"
        default: return "generatedInteger(\(v))"
        }
    }

    private func command(_ c: Model.Command) -> String {
        let r = c.record
        var o = "    /// Sends \(r.name) (\(c.id.hex(width: 2)), conformance \(r.conformance))"
        o += r.response.map { "; the device answers with \($0)." } ?? "."
        o += "\n"
        if !c.fields.isEmpty {
            o += "    ///\n    /// - Parameters:\n"
            for f in c.fields {
                var facts = [f.record.specType]
                if let lo = f.record.min, let hi = f.record.max { facts.append("\(lo)…\(hi)") }
                if f.record.nullable == true { facts.append("nil sends null") }
                if f.record.optional == true { facts.append("optional, nil leaves it out") }
                o += "    ///   - \(f.swiftName): \(f.record.name) (\(facts.joined(separator: ", "))).\n"
            }
        }
        o += "    /// - Returns: the command's response, ``Value/null`` when it has none.\n"
        o += "    /// - Throws: ``HomeError`` when the trait is detached, the arguments are invalid or the device fails.\n"
        let params = c.fields.map { f -> String in
            let optional = f.record.nullable == true || f.record.optional == true
            var p = "\(Naming.escaped(f.swiftName)): \(f.swiftType)\(optional ? "?" : "")"
            if optional {
                p += " = nil"
            } else if let d = f.record.default, Model.isInteger(f.record.type) {
                p += " = \(d)"
            }
            return p
        }
        o += "    @discardableResult\n"
        o += "    public func \(Naming.escaped(c.swiftName))(\(params.joined(separator: ", "))) async throws -> Value {\n"
        if c.fields.isEmpty {
            o += "        try await binding.invoke(Self.identifier, Command.\(Naming.escaped(c.swiftName)))\n"
        } else {
            o += "        var arguments: [String: Value] = [:]\n"
            for f in c.fields {
                let name = Naming.escaped(f.swiftName)
                let key = Naming.literal(f.record.name)
                if f.record.optional == true {
                    o += "        if let \(name) { arguments[\(key)] = \(wrapValue(f, "\(name)")) }\n"
                } else if f.record.nullable == true {
                    o += "        arguments[\(key)] = \(name).map { \(wrapValue(f, "$0")) } ?? .null\n"
                } else {
                    o += "        arguments[\(key)] = \(wrapValue(f, name))\n"
                }
            }
            o += "        return try await binding.invoke(Self.identifier, Command.\(Naming.escaped(c.swiftName)), arguments)\n"
        }
        o += "    }\n"
        return o
    }

    private func wrapValue(_ f: Model.Field, _ x: String) -> String {
        switch f.record.type {
        case "bool": return "Value.bool(\(x))"
        case "single", "double": return "Value.double(Double(\(x)))"
        case "string", "octets": return "Value.string(\(x))"
        case "list": return "Value.list(\(x))"
        case "structure": return "Value.object(\(x))"
        case "uint64", "bitmap64": return "Value.int(Int64(clamping: \(x)))"
        default: return "Value.int(Int64(\(x)))"
        }
    }

    // MARK: DeviceTypes.generated.swift

    func deviceTypes() -> String {
        var o = header
        for d in model.deviceTypes {
            let r = d.record
            func names(_ ids: [UInt32]) -> String {
                ids.isEmpty ? "none" : ids.map { "\(model.trait($0).record.name) (\($0.hex()))" }.joined(separator: ", ")
            }
            o += "/// \(r.name) (\(d.id.hex())), device type revision \(r.revision), class \(r.class)"
            o += r.sensitive == true ? "; sensitive.\n" : ".\n"
            o += "///\n/// Required traits: \(names(d.required)).\n"
            o += "/// Optional traits: \(names(d.optional)).\n"
            if !d.outside.isEmpty {
                o += "/// Also optional or conditional in the spec, not in this catalogue: "
                o += d.outside.map { "\($0.name) (\($0.id))" }.joined(separator: ", ") + ".\n"
            }
            o += "///\n/// Generated from `catalog/matter.json`; the facts come from `\(r.source.file)` in\n"
            o += "/// \(r.source.repo) at \(r.source.commit.prefix(12)).\n"
            o += "public struct \(d.typeName): DeviceType {\n"
            o += "    public static let identifier: DeviceTypeID = \(d.id.hex())\n"
            o += "    /// The traits every device of this type has.\n"
            o += "    public static let requiredTraits: [TraitID] = [" + d.required.map { $0.hex() }.joined(separator: ", ") + "]\n"
            o += "    /// The traits a device of this type may add.\n"
            o += "    public static let optionalTraits: [TraitID] = [" + d.optional.map { $0.hex() }.joined(separator: ", ") + "]\n"
            o += "    public let state: DeviceTypeState\n"
            o += "    public let binding: TraitBinding\n\n"
            o += "    public init(state: DeviceTypeState, binding: TraitBinding) {\n"
            o += "        self.state = state\n"
            o += "        self.binding = binding\n"
            o += "    }\n"
            o += "}\n\n"
        }
        return o
    }

    // MARK: MatterTraits.generated.swift

    func matterTraits() -> String {
        var o = header
        o += "/// The standard (Matter) traits of one device type, each nil when the device type lacks it.\n"
        o += "///\n/// Reached through ``DeviceType/matterTraits``: `light.matterTraits.onOffTrait?.attributes.onOff`.\n"
        o += "public struct MatterTraits: Sendable {\n"
        o += "    public let state: DeviceTypeState\n"
        o += "    public let binding: TraitBinding\n\n"
        o += "    public init(state: DeviceTypeState, binding: TraitBinding) {\n"
        o += "        self.state = state\n"
        o += "        self.binding = binding\n"
        o += "    }\n"
        for t in model.traits {
            o += "\n    /// \(t.record.name) (\(t.id.hex())), nil when absent.\n"
            o += "    public var \(t.propertyName): \(t.typeName)? {\n"
            o += "        state.traits[\(t.typeName).identifier].map { \(t.typeName)(state: $0, binding: binding) }\n"
            o += "    }\n"
        }
        o += "}\n"
        return o
    }
}
