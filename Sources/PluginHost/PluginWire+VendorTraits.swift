public import HomeModel

/// Vendor traits in a program plugin's `hello` (`vendorTraits`): the same declarations a `.so`
/// plugin makes with `TraitDescriptor.vendor(…)`, as JSON (`docs/plugin-protocol.md`).
///
/// ```json
/// {"namespace": "ExampleOrganization", "id": "0xFFF1FC01", "name": "Spinner",
///  "attributes": [{"id": 0, "name": "RPM", "type": "uint16", "minimum": 0, "maximum": 3000, "unit": "rpm"}],
///  "commands": [{"id": 0, "name": "Spin", "fields": [{"name": "RPM", "type": "uint16", "maximum": 3000}]}],
///  "events": [{"id": 0, "name": "Stalled", "fields": []}]}
/// ```
extension PluginWire {
    /// The vendor traits of a `hello` (absent: none). The catalogue checks them further
    /// (ID range, names) when the host adds them.
    public static func vendorTraits(_ v: Value?) throws(FormatError) -> [TraitDescriptor] {
        guard let v, !v.isNull else { return [] }
        guard let list = v.listValue else { throw FormatError("hello.vendorTraits: expected a list, found \(v.kindName)") }
        guard list.count <= 64 else { throw FormatError("hello.vendorTraits: at most 64 traits (got \(list.count))") }
        var traits: [TraitDescriptor] = []
        for (i, item) in list.enumerated() {
            let what = "hello.vendorTraits[\(i)]"
            let o = try object(item, what)
            let attributes = try elements(o, "attributes", in: what) { a, at throws(FormatError) in
                AttributeDescriptor.vendor(
                    id: AttributeID(try id(a["id"], "\(at).id")), name: try string(a, "name", in: at), type: try dataType(a, in: at),
                    minimum: try integer(a, "minimum", in: at), maximum: try integer(a, "maximum", in: at),
                    unit: try optionalString(a, "unit", in: at), nullable: try flag(a, "nullable", in: at),
                    writable: try flag(a, "writable", in: at), items: try items(a, in: at))
            }
            let commands = try elements(o, "commands", in: what) { c, at throws(FormatError) in
                CommandDescriptor.vendor(
                    id: CommandID(try id(c["id"], "\(at).id")), name: try string(c, "name", in: at), fields: try fields(c, in: at))
            }
            let events = try elements(o, "events", in: what) { e, at throws(FormatError) in
                EventDescriptor.vendor(
                    id: EventID(try id(e["id"], "\(at).id")), name: try string(e, "name", in: at),
                    priority: try optionalString(e, "priority", in: at) ?? "info", fields: try fields(e, in: at))
            }
            traits.append(
                TraitDescriptor.vendor(
                    namespace: try string(o, "namespace", in: what), id: TraitID(try id(o["id"], "\(what).id")),
                    name: try string(o, "name", in: what), swiftName: try optionalString(o, "swiftName", in: what),
                    attributes: attributes, commands: commands, events: events))
        }
        return traits
    }

    static func elements<T>(
        _ o: [String: Value], _ key: String, in what: String, _ make: ([String: Value], String) throws(FormatError) -> T
    ) throws(FormatError) -> [T] {
        guard let v = o[key], !v.isNull else { return [] }
        guard let list = v.listValue else { throw FormatError("\(what).\(key): expected a list, found \(v.kindName)") }
        var out: [T] = []
        for (i, item) in list.enumerated() {
            let at = "\(what).\(key)[\(i)]"
            out.append(try make(try object(item, at), at))
        }
        return out
    }

    static func fields(_ o: [String: Value], in what: String) throws(FormatError) -> [FieldDescriptor] {
        try elements(o, "fields", in: what) { f, at throws(FormatError) in
            FieldDescriptor.vendor(
                name: try string(f, "name", in: at), type: try dataType(f, in: at), minimum: try integer(f, "minimum", in: at),
                maximum: try integer(f, "maximum", in: at), optional: try flag(f, "optional", in: at), items: try items(f, in: at))
        }
    }

    static func items(_ o: [String: Value], in what: String) throws(FormatError) -> [EnumItem] {
        try elements(o, "items", in: what) { item, at throws(FormatError) in
            guard let value = item["value"]?.intValue else { throw FormatError("\(at).value: expected an integer") }
            return EnumItem(name: try string(item, "name", in: at), value: value)
        }
    }

    static func dataType(_ o: [String: Value], in what: String) throws(FormatError) -> DataType {
        let name = try string(o, "type", in: what)
        guard let type = DataType(rawValue: name), type != .list, type != .structure else {
            throw FormatError("\(what).type: '\(name)' is not a plain data type (bool, uint8…uint64, int8…int64, enum8, enum16, bitmap8…bitmap64, single, double, string, octets)")
        }
        return type
    }

    static func integer(_ o: [String: Value], _ key: String, in what: String) throws(FormatError) -> Int64? {
        guard let v = o[key], !v.isNull else { return nil }
        guard let i = v.intValue else { throw FormatError("\(what).\(key): expected an integer, found \(v.kindName)") }
        return i
    }

    static func flag(_ o: [String: Value], _ key: String, in what: String) throws(FormatError) -> Bool {
        guard let v = o[key], !v.isNull else { return false }
        guard let b = v.boolValue else { throw FormatError("\(what).\(key): expected true or false, found \(v.kindName)") }
        return b
    }
}
