import HearthAPI
import HomeModel

/// Hand-written JSON for the WebSocket's hot messages (devices in `changed`, `snapshot` and
/// `delta` messages), straight from the core's ``DeviceSnapshot`` into bytes, without
/// `JSONEncoder` or the intermediate ``WireDevice``.
///
/// It writes what `APIResponse.encoder` (sorted keys) writes for the same ``WireDevice`` or
/// ``WSServerMessage``: the same keys in the same order, strings escaped the same way
/// (`"`, `\`, `/` and control characters), numbers as the encoder prints them; the tests
/// check the bytes and, over random devices, that both decode to the same values.
struct WireJSONWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func raw(_ s: String) { bytes.append(contentsOf: s.utf8) }

    /// A JSON string literal, escaped as the encoder escapes it.
    mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): raw(#"\""#)
            case UInt8(ascii: "\\"): raw(#"\\"#)
            case UInt8(ascii: "/"): raw(#"\/"#)
            case 0x08: raw(#"\b"#)
            case 0x0C: raw(#"\f"#)
            case 0x0A: raw(#"\n"#)
            case 0x0D: raw(#"\r"#)
            case 0x09: raw(#"\t"#)
            case 0..<0x20:
                raw(#"\u00"#)
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(b >> 4)])
                bytes.append(hex[Int(b & 0xF)])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Decimal digits straight into the bytes (no `String` made per number).
    mutating func int<I: BinaryInteger>(_ i: I) {
        if i >= 0, i < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(i))
            return
        }
        guard let magnitude = UInt64(exactly: i.magnitude) else { return raw(String(i)) }
        if i < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    /// A number as the encoder prints a `Double`: its description without a trailing `.0`.
    /// Not finite (the encoder refuses those): `null`.
    mutating func double(_ d: Double) {
        guard d.isFinite else { return raw("null") }
        var s = d.description
        if s.hasSuffix(".0") { s.removeLast(2) }
        raw(s)
    }

    mutating func bool(_ b: Bool) { b ? raw("true") : raw("false") }

    mutating func value(_ v: Value) {
        switch v {
        case .null: raw("null")
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .list(let l):
            bytes.append(UInt8(ascii: "["))
            for (n, e) in l.enumerated() {
                if n > 0 { bytes.append(UInt8(ascii: ",")) }
                value(e)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let o):
            bytes.append(UInt8(ascii: "{"))
            for (n, k) in o.keys.sorted().enumerated() {
                if n > 0 { bytes.append(UInt8(ascii: ",")) }
                string(k)
                bytes.append(UInt8(ascii: ":"))
                value(o[k]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    mutating func connectivity(_ c: SourceConnectivity) {
        raw(#"{"connectivityState":""#)
        raw(c.connectivityState.rawValue)
        raw(#"","dataSourceLocality":""#)
        raw(c.dataSourceLocality.rawValue)
        raw(#""}"#)
    }

    /// `"key":"string"` for an optional field; nothing when nil (as the encoder leaves it out).
    mutating func optional(_ key: String, _ s: String?) {
        guard let s else { return }
        raw(key)
        string(s)
    }

    /// A device as ``WireDevice`` encodes it: names and units from the catalogue.
    mutating func device(_ d: DeviceSnapshot, catalog: Catalog) {
        raw(#"{"commissioning":""#)
        raw(d.commissioning.rawValue)
        raw(#"","id":"#)
        string(d.id.rawValue)
        optional(#","manufacturer":"#, d.manufacturer)
        optional(#","model":"#, d.model)
        raw(#","name":"#)
        string(d.name)
        if let primary = d.primaryType {
            raw(#","primaryType":"#)
            int(primary.id.rawValue)
        }
        optional(#","roomID":"#, d.roomID?.rawValue)
        raw(#","sourceConnectivity":"#)
        connectivity(d.sourceConnectivity)
        optional(#","structureID":"#, d.structureID?.rawValue)
        optional(#","suggestedRoom":"#, d.suggestedRoom)
        raw(#","types":["#)
        for (n, t) in d.types.enumerated() {
            if n > 0 { bytes.append(UInt8(ascii: ",")) }
            raw(#"{"id":"#)
            int(t.id.rawValue)
            raw(#","isPrimaryType":"#)
            bool(t.isPrimary)
            optional(#","name":"#, catalog.deviceType(t.id)?.name)
            raw(#","sourceConnectivity":"#)
            connectivity(t.sourceConnectivity)
            raw(#","traits":["#)
            for (m, trait) in t.traits.values.sorted(by: { $0.id < $1.id }).enumerated() {
                if m > 0 { bytes.append(UInt8(ascii: ",")) }
                let descriptor = catalog.trait(trait.id)
                raw(#"{"attributes":["#)
                for (k, a) in trait.attributes.keys.sorted().enumerated() {
                    if k > 0 { bytes.append(UInt8(ascii: ",")) }
                    let ad = descriptor?.attribute(a)
                    raw(#"{"id":"#)
                    int(a.rawValue)
                    optional(#","name":"#, ad?.swiftName)
                    optional(#","unit":"#, ad?.unit)
                    raw(#","value":"#)
                    value(trait.attributes[a]!)
                    bytes.append(UInt8(ascii: "}"))
                }
                raw(#"],"id":"#)
                int(trait.id.rawValue)
                optional(#","name":"#, descriptor?.name)
                raw(#","sourceConnectivity":"#)
                connectivity(trait.sourceConnectivity)
                bytes.append(UInt8(ascii: "}"))
            }
            raw("]}")
        }
        raw("]}")
    }
}

// MARK: Deltas

/// One attribute that changed, in the order ``DeviceDelta/between(_:_:)`` lists them.
struct AttributeChange: Equatable {
    let type: DeviceTypeID
    let trait: TraitID
    let attribute: AttributeID
    let value: Value
}

extension DeviceSnapshot {
    /// The attributes whose value changed from `old` to `self`, in wire order (types as they
    /// are, traits and attributes by ID); nil when anything but values changed (name, place,
    /// types, traits, attributes present, connectivity), so the whole device must be sent.
    /// The same verdict as ``DeviceDelta/between(_:_:)`` on the two ``WireDevice``s, without
    /// building them.
    func attributeChanges(since old: DeviceSnapshot) -> [AttributeChange]? {
        guard id == old.id, name == old.name, structureID == old.structureID, roomID == old.roomID, commissioning == old.commissioning,
            manufacturer == old.manufacturer, model == old.model, suggestedRoom == old.suggestedRoom, types.count == old.types.count
        else { return nil }
        var changes: [AttributeChange] = []
        for (t, type) in types.enumerated() {
            let before = old.types[t]
            guard type.id == before.id, type.isPrimary == before.isPrimary, type.traits.count == before.traits.count else { return nil }
            // The traits are walked side by side with the old ones: a snapshot's dictionaries
            // are copies of the previous one's (the core copies only what it writes), and a copy
            // keeps its original's order, so a key is looked up (hashed) only where the orders
            // part. Sorting only what changed keeps the common case (one attribute) cheap.
            var changedTraits: [(TraitID, [AttributeChange])] = []
            var olderTraits = before.traits.makeIterator()
            for (traitID, trait) in type.traits {
                guard let was = Self.counterpart(of: traitID, next: olderTraits.next(), in: before.traits),
                    was.sourceConnectivity == trait.sourceConnectivity, was.attributes.count == trait.attributes.count
                else { return nil }
                // A trait no report touched shares its attributes' storage with the old state,
                // and Dictionary's == answers identical storage at once.
                if was.attributes == trait.attributes { continue }
                var changed: [AttributeChange] = []
                var olderAttributes = was.attributes.makeIterator()
                for (a, v) in trait.attributes {
                    guard let w = Self.counterpart(of: a, next: olderAttributes.next(), in: was.attributes) else { return nil }
                    if w != v { changed.append(AttributeChange(type: type.id, trait: traitID, attribute: a, value: v)) }
                }
                changed.sort { $0.attribute < $1.attribute }
                changedTraits.append((traitID, changed))
            }
            changedTraits.sort { $0.0 < $1.0 }
            for (_, changed) in changedTraits { changes += changed }
        }
        return changes
    }

    /// The old dictionary's value for `key`: the element its walk is at when that has the key
    /// (no hashing), else a lookup.
    private static func counterpart<Key: Hashable, Value>(of key: Key, next: (key: Key, value: Value)?, in old: [Key: Value]) -> Value? {
        if let next, next.key == key { return next.value }
        return old[key]
    }
}

extension WireJSONWriter {
    /// One element of a `delta` message's `changes`: `{"attributes":[…],"device":…}` or, with
    /// the whole device, `{"attributes":[],"device":…,"full":{…}}`.
    mutating func deviceDelta(_ id: DeviceID, attributes: [AttributeChange], full: DeviceSnapshot?, catalog: Catalog) {
        raw(#"{"attributes":["#)
        for (n, c) in attributes.enumerated() {
            if n > 0 { bytes.append(UInt8(ascii: ",")) }
            raw(#"{"attribute":"#)
            int(c.attribute.rawValue)
            raw(#","trait":"#)
            int(c.trait.rawValue)
            raw(#","type":"#)
            int(c.type.rawValue)
            raw(#","value":"#)
            value(c.value)
            bytes.append(UInt8(ascii: "}"))
        }
        raw(#"],"device":"#)
        string(id.rawValue)
        if let full {
            raw(#","full":"#)
            device(full, catalog: catalog)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}
