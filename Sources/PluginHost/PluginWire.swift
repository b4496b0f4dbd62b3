public import DriverAPI
public import HomeModel

/// The isolated-mode message format, version 1: how ``DriverContext`` calls, commands and
/// their results travel between the host and a plugin process as JSON objects.
///
/// `docs/plugin-protocol.md` is the reference a plugin in another language follows. IDs are
/// JSON numbers (or strings holding a decimal or `0x` hexadecimal number); inside objects whose
/// keys are IDs (a device type's traits, a trait's attributes) the keys are such strings, and
/// the host writes them as `0x0006`.
public enum PluginWire {
    /// The protocol version this host speaks. A child whose `hello` names another is refused.
    public static let version: Int64 = 1

    /// A message that does not follow the format: what is wrong, and where.
    public struct FormatError: Error, Hashable, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
        init(_ message: String) { self.message = message }
    }

    // MARK: Reading fields

    static func object(_ v: Value?, _ what: String) throws(FormatError) -> [String: Value] {
        guard let o = v?.objectValue else { throw FormatError("\(what): expected an object, found \(v?.kindName ?? "nothing")") }
        return o
    }

    static func string(_ o: [String: Value], _ key: String, in what: String) throws(FormatError) -> String {
        guard let s = o[key]?.stringValue else {
            throw FormatError("\(what).\(key): expected a string, found \(o[key]?.kindName ?? "nothing")")
        }
        return s
    }

    static func optionalString(_ o: [String: Value], _ key: String, in what: String) throws(FormatError) -> String? {
        guard let v = o[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw FormatError("\(what).\(key): expected a string, found \(v.kindName)") }
        return s
    }

    /// An ID: a JSON integer, or a string with a decimal or `0x` hexadecimal number.
    static func id(_ v: Value?, _ what: String) throws(FormatError) -> UInt32 {
        if let i = v?.intValue, let u = UInt32(exactly: i) { return u }
        if let s = v?.stringValue {
            let parsed = s.lowercased().hasPrefix("0x") ? UInt32(s.dropFirst(2), radix: 16) : UInt32(s)
            if let parsed { return parsed }
        }
        throw FormatError("\(what): expected an ID (an integer or \"0x…\"), found \(v.map { "\($0)" } ?? "nothing")")
    }

    static func optionalID(_ v: Value?, _ what: String) throws(FormatError) -> UInt32? {
        guard let v, !v.isNull else { return nil }
        return try id(v, what)
    }

    static func key<I: MatterIdentifier>(_ id: I) -> String { id.hex }

    // MARK: Manifest and configuration

    public static func encode(_ m: PluginManifest) -> Value {
        ["id": .string(m.id), "name": .string(m.name), "version": .string(m.version), "summary": .string(m.summary)]
    }

    public static func manifest(_ v: Value?) throws(FormatError) -> PluginManifest {
        let o = try object(v, "manifest")
        return PluginManifest(
            id: try string(o, "id", in: "manifest"), name: try optionalString(o, "name", in: "manifest") ?? "",
            version: try optionalString(o, "version", in: "manifest") ?? "",
            summary: try optionalString(o, "summary", in: "manifest") ?? "")
    }

    public static func encode(_ c: PluginConfiguration) -> Value {
        [
            "value": c.value, "file": .string(c.file), "keyPath": .string(c.keyPath),
            "lines": .object(c.lines.mapValues { .int(Int64($0)) }),
        ]
    }

    public static func configuration(_ v: Value?) throws(FormatError) -> PluginConfiguration {
        let o = try object(v, "configuration")
        var lines: [String: Int] = [:]
        for (k, l) in o["lines"]?.objectValue ?? [:] { if let i = l.intValue { lines[k] = Int(i) } }
        return PluginConfiguration(
            value: o["value"] ?? .object([:]), file: try optionalString(o, "file", in: "configuration") ?? "hearth.yaml",
            keyPath: try optionalString(o, "keyPath", in: "configuration") ?? "", lines: lines)
    }

    // MARK: Devices

    public static func encode(_ d: DeviceDescription) -> Value {
        var o: [String: Value] = [
            "localID": .string(d.localID), "name": .string(d.name), "locality": .string(d.locality.rawValue),
            "optimistic": .bool(d.optimistic),
            "types": .list(
                d.types.map { t in
                    [
                        "id": .int(Int64(t.id.rawValue)), "isPrimary": .bool(t.isPrimary),
                        "traits": .object(
                            Dictionary(
                                uniqueKeysWithValues: t.traits.map { trait, attributes in
                                    (key(trait), .object(Dictionary(uniqueKeysWithValues: attributes.map { (key($0.key), $0.value) })))
                                })),
                    ]
                }),
        ]
        if let m = d.manufacturer { o["manufacturer"] = .string(m) }
        if let m = d.model { o["model"] = .string(m) }
        if let c = d.commission {
            var h: [String: Value] = ["name": .string(c.name)]
            if let r = c.room { h["room"] = .string(r) }
            if let s = c.structure { h["structure"] = .string(s) }
            o["commission"] = .object(h)
        }
        if let i = d.identity {
            var h: [String: Value] = [:]
            for (k, v) in [
                ("vendorName", i.vendorName), ("productName", i.productName), ("partNumber", i.partNumber),
                ("serialNumber", i.serialNumber), ("firmwareVersion", i.firmwareVersion), ("hardwareVersion", i.hardwareVersion),
                ("uniqueID", i.uniqueID),
            ] {
                if let v { h[k] = .string(v) }
            }
            if let v = i.vendorID { h["vendorID"] = .int(Int64(v)) }
            if let v = i.productID { h["productID"] = .int(Int64(v)) }
            o["identity"] = .object(h)
        }
        if let r = d.suggestedRoom { o["suggestedRoom"] = .string(r) }
        return .object(o)
    }

    /// A device's `identity` object (every field optional; IDs 0…65535).
    static func identity(_ v: Value?, in what: String) throws(FormatError) -> DeviceIdentity? {
        guard let v, !v.isNull else { return nil }
        let h = try object(v, "\(what).identity")
        func id16(_ key: String) throws(FormatError) -> UInt16? {
            guard let x = h[key], !x.isNull else { return nil }
            guard let n = x.intValue, let u = UInt16(exactly: n) else { throw FormatError("\(what).identity.\(key): expected an integer 0…65535") }
            return u
        }
        let at = "\(what).identity"
        return DeviceIdentity(
            vendorName: try optionalString(h, "vendorName", in: at), vendorID: try id16("vendorID"),
            productName: try optionalString(h, "productName", in: at), productID: try id16("productID"),
            partNumber: try optionalString(h, "partNumber", in: at), serialNumber: try optionalString(h, "serialNumber", in: at),
            firmwareVersion: try optionalString(h, "firmwareVersion", in: at), hardwareVersion: try optionalString(h, "hardwareVersion", in: at),
            uniqueID: try optionalString(h, "uniqueID", in: at))
    }

    public static func device(_ v: Value?) throws(FormatError) -> DeviceDescription {
        let o = try object(v, "device")
        let localID = try string(o, "localID", in: "device")
        let what = "device \(localID)"
        guard let typesList = o["types"]?.listValue else { throw FormatError("\(what).types: expected a list") }
        var types: [DeviceTypeDescription] = []
        for (i, tv) in typesList.enumerated() {
            let t = try object(tv, "\(what).types[\(i)]")
            var traits: [TraitID: [AttributeID: Value]] = [:]
            for (tk, av) in try object(t["traits"] ?? .object([:]), "\(what).types[\(i)].traits") {
                let trait = TraitID(try id(.string(tk), "\(what).types[\(i)].traits key"))
                var attributes: [AttributeID: Value] = [:]
                for (ak, value) in try object(av, "\(what).types[\(i)].traits.\(tk)") {
                    attributes[AttributeID(try id(.string(ak), "\(what).types[\(i)].traits.\(tk) key"))] = value
                }
                traits[trait] = attributes
            }
            types.append(
                DeviceTypeDescription(
                    id: DeviceTypeID(try id(t["id"], "\(what).types[\(i)].id")), isPrimary: t["isPrimary"]?.boolValue ?? false,
                    traits: traits))
        }
        var commission: CommissionHint?
        if let c = o["commission"], !c.isNull {
            let h = try object(c, "\(what).commission")
            commission = CommissionHint(
                name: try string(h, "name", in: "\(what).commission"), room: try optionalString(h, "room", in: "\(what).commission"),
                structure: try optionalString(h, "structure", in: "\(what).commission"))
        }
        let localityName = try optionalString(o, "locality", in: what) ?? "local"
        guard let locality = DataSourceLocality(rawValue: localityName) else {
            throw FormatError("\(what).locality: '\(localityName)' is not one of \(DataSourceLocality.allCases.map(\.rawValue))")
        }
        return DeviceDescription(
            localID: localID, name: try optionalString(o, "name", in: what) ?? localID,
            manufacturer: try optionalString(o, "manufacturer", in: what), model: try optionalString(o, "model", in: what),
            types: types, locality: locality, commission: commission, optimistic: o["optimistic"]?.boolValue ?? false,
            identity: try identity(o["identity"], in: what), suggestedRoom: try optionalString(o, "suggestedRoom", in: what))
    }

    // MARK: Reports and events

    public static func encode(_ r: AttributeReport) -> Value {
        var o: [String: Value] = [
            "localID": .string(r.localID), "trait": .int(Int64(r.trait.rawValue)),
            "attribute": .int(Int64(r.attribute.rawValue)), "value": r.value,
        ]
        if let t = r.deviceType { o["deviceType"] = .int(Int64(t.rawValue)) }
        return .object(o)
    }

    public static func report(_ v: Value) throws(FormatError) -> AttributeReport {
        let o = try object(v, "report")
        return AttributeReport(
            localID: try string(o, "localID", in: "report"), deviceType: try optionalID(o["deviceType"], "report.deviceType").map(DeviceTypeID.init),
            trait: TraitID(try id(o["trait"], "report.trait")), attribute: AttributeID(try id(o["attribute"], "report.attribute")),
            value: o["value"] ?? .null)
    }

    public static func encode(_ e: EventReport) -> Value {
        var o: [String: Value] = [
            "localID": .string(e.localID), "trait": .int(Int64(e.trait.rawValue)), "event": .int(Int64(e.event.rawValue)),
            "fields": .object(e.fields),
        ]
        if let t = e.deviceType { o["deviceType"] = .int(Int64(t.rawValue)) }
        if let ts = e.timestampNanoseconds, let i = Int64(exactly: ts) { o["timestampNanoseconds"] = .int(i) }
        return .object(o)
    }

    public static func event(_ v: Value?) throws(FormatError) -> EventReport {
        let o = try object(v, "event")
        var timestamp: UInt64?
        if let t = o["timestampNanoseconds"], !t.isNull {
            guard let i = t.intValue, i >= 0 else { throw FormatError("event.timestampNanoseconds: expected a non-negative integer") }
            timestamp = UInt64(i)
        }
        return EventReport(
            localID: try string(o, "localID", in: "event"), deviceType: try optionalID(o["deviceType"], "event.deviceType").map(DeviceTypeID.init),
            trait: TraitID(try id(o["trait"], "event.trait")), event: EventID(try id(o["event"], "event.event")),
            fields: try object(o["fields"] ?? .object([:]), "event.fields"), timestampNanoseconds: timestamp)
    }

    // MARK: Connectivity of one trait

    /// A `traitConnectivity` message (a type of its own, so a host that does not know it
    /// ignores it rather than taking it for the whole device).
    public static func encodeTraitConnectivity(
        _ state: ConnectivityState, device localID: String, trait: TraitID, deviceType: DeviceTypeID?
    ) -> Value {
        var o: [String: Value] = [
            "type": "traitConnectivity", "state": .string(state.rawValue), "localID": .string(localID), "trait": .int(Int64(trait.rawValue)),
        ]
        if let deviceType { o["deviceType"] = .int(Int64(deviceType.rawValue)) }
        return .object(o)
    }

    public static func traitConnectivity(_ o: [String: Value]) throws(FormatError) -> (
        state: ConnectivityState, localID: String, trait: TraitID, deviceType: DeviceTypeID?
    ) {
        let name = try string(o, "state", in: "traitConnectivity")
        guard let state = ConnectivityState(rawValue: name) else {
            throw FormatError("traitConnectivity.state: '\(name)' is not one of \(ConnectivityState.allCases.map(\.rawValue))")
        }
        return (
            state, try string(o, "localID", in: "traitConnectivity"), TraitID(try id(o["trait"], "traitConnectivity.trait")),
            try optionalID(o["deviceType"], "traitConnectivity.deviceType").map(DeviceTypeID.init)
        )
    }

    // MARK: Health

    /// A `health` message: `{"type": "health", "state": "unhealthy", "reason": "…"}`.
    public static func encode(_ h: PluginHealth) -> Value {
        var o: [String: Value] = ["type": "health", "state": .string(h.state.rawValue)]
        if let r = h.reason { o["reason"] = .string(r) }
        return .object(o)
    }

    public static func health(_ o: [String: Value]) throws(FormatError) -> PluginHealth {
        let name = try string(o, "state", in: "health")
        guard let state = PluginHealth.State(rawValue: name) else {
            throw FormatError("health.state: '\(name)' is not one of \(PluginHealth.State.allCases.map(\.rawValue))")
        }
        return PluginHealth(state, reason: try optionalString(o, "reason", in: "health"))
    }

    // MARK: Commands and writes

    public static func encode(_ c: DriverCommand, id: Int64) -> Value {
        [
            "type": "command", "id": .int(id), "localID": .string(c.localID), "deviceType": .int(Int64(c.deviceType.rawValue)),
            "trait": .int(Int64(c.trait.rawValue)), "command": .int(Int64(c.command.rawValue)), "arguments": .object(c.arguments),
            "origin": .string(c.origin),
        ]
    }

    public static func command(_ o: [String: Value]) throws(FormatError) -> DriverCommand {
        DriverCommand(
            localID: try string(o, "localID", in: "command"), deviceType: DeviceTypeID(try id(o["deviceType"], "command.deviceType")),
            trait: TraitID(try id(o["trait"], "command.trait")), command: CommandID(try id(o["command"], "command.command")),
            arguments: try object(o["arguments"] ?? .object([:]), "command.arguments"),
            origin: try optionalString(o, "origin", in: "command") ?? "")
    }

    public static func encode(_ w: DriverWrite, id: Int64) -> Value {
        [
            "type": "write", "id": .int(id), "localID": .string(w.localID), "deviceType": .int(Int64(w.deviceType.rawValue)),
            "trait": .int(Int64(w.trait.rawValue)), "attribute": .int(Int64(w.attribute.rawValue)), "value": w.value,
            "origin": .string(w.origin),
        ]
    }

    public static func write(_ o: [String: Value]) throws(FormatError) -> DriverWrite {
        DriverWrite(
            localID: try string(o, "localID", in: "write"), deviceType: DeviceTypeID(try id(o["deviceType"], "write.deviceType")),
            trait: TraitID(try id(o["trait"], "write.trait")), attribute: AttributeID(try id(o["attribute"], "write.attribute")),
            value: o["value"] ?? .null, origin: try optionalString(o, "origin", in: "write") ?? "")
    }

    /// A `result` for request `id`: the value, or the error (a ``HomeError`` keeps its code).
    public static func result(id: Int64, _ outcome: Result<Value, any Error>) -> Value {
        switch outcome {
        case .success(let v): return ["type": "result", "id": .int(id), "value": v]
        case .failure(let error):
            let e = error as? HomeError ?? .driverError("\(error)")
            return ["type": "result", "id": .int(id), "error": ["code": .string(e.code.rawValue), "message": .string(e.message)]]
        }
    }

    /// Reads a `result`'s outcome.
    public static func outcome(_ o: [String: Value]) -> Result<Value, HomeError> {
        if let e = o["error"]?.objectValue {
            return .failure(
                HomeError(HomeError.Code(rawValue: e["code"]?.stringValue ?? "driverError"), e["message"]?.stringValue ?? "the plugin refused"))
        }
        return .success(o["value"] ?? .null)
    }
}
