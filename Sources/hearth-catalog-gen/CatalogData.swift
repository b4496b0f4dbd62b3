import Foundation

/// The project's data file `catalog/matter.json`, after `overrides.json` was applied.
struct CatalogData: Decodable {
    let version: String
    let traits: [TraitRecord]
    let deviceTypes: [DeviceTypeRecord]
}

struct SourceRecord: Decodable {
    let repo: String
    let file: String
    let commit: String
}

struct ItemRecord: Decodable {
    let name: String
    let value: Int64
}

struct FeatureRecord: Decodable {
    let bit: Int
    let code: String
    let name: String
    let conformance: String
}

struct AttributeRecord: Decodable {
    let id: String
    let name: String
    let swiftName: String?
    let type: String
    let elementType: String?
    let specType: String
    let min: Int64?
    let max: Int64?
    let nullable: Bool?
    let writable: Bool?
    let unit: String?
    let conformance: String
    let items: [ItemRecord]?
}

struct FieldRecord: Decodable {
    let name: String
    let swiftName: String?
    let type: String
    let elementType: String?
    let specType: String
    let min: Int64?
    let max: Int64?
    let nullable: Bool?
    let optional: Bool?
    let `default`: Int64?
    let items: [ItemRecord]?
}

struct CommandRecord: Decodable {
    let id: String
    let name: String
    let swiftName: String?
    let conformance: String
    let response: String?
    let fields: [FieldRecord]
}

struct EventRecord: Decodable {
    let id: String
    let name: String
    let swiftName: String?
    let priority: String
    let conformance: String
    let fields: [FieldRecord]
}

struct TraitRecord: Decodable {
    let id: String
    let name: String
    let swiftName: String?
    let revision: Int
    let features: [FeatureRecord]
    let attributes: [AttributeRecord]
    let commands: [CommandRecord]
    let events: [EventRecord]
    let source: SourceRecord
}

struct TraitReference: Decodable {
    let id: String
    let name: String
}

struct DeviceTypeRecord: Decodable {
    let id: String
    let name: String
    let swiftName: String?
    let revision: Int
    let `class`: String
    let sensitive: Bool?
    let requiredTraits: [TraitReference]
    let optionalTraits: [TraitReference]
    let source: SourceRecord
}

struct GeneratorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Parses `0x0006`-style IDs.
func parseHex(_ text: String, _ what: String) throws -> UInt32 {
    let lower = text.lowercased()
    guard lower.hasPrefix("0x"), let value = UInt32(lower.dropFirst(2), radix: 16) else {
        throw GeneratorError("\(what): '\(text)' is not a hex ID like 0x0006")
    }
    return value
}

/// Applies `overrides.json` to the raw JSON tree of `matter.json`.
///
/// Overrides are keyed by hex ID: `traits.<id>` may carry `swiftName`, and per attribute,
/// command or event (`attributes.<id>`, …) a `set` object of replaced keys, a `swiftName`, or
/// (commands) `fieldsFrom: <command id>`. Every override must match something, so a stale
/// override is an error rather than silently ignored.
func applyOverrides(_ data: inout [String: Any], _ overrides: [String: Any]) throws {
    func sameID(_ a: Any?, _ b: String) -> Bool {
        guard let a = a as? String else { return false }
        return (try? parseHex(a, "id")) == (try? parseHex(b, "id"))
    }
    func patch(_ record: inout [String: Any], with entry: [String: Any], _ label: String) throws {
        for (key, value) in entry {
            switch key {
            case "reason": break
            case "swiftName": record["swiftName"] = value
            case "set":
                guard let set = value as? [String: Any] else { throw GeneratorError("\(label): 'set' must be an object") }
                for (k, v) in set { record[k] = v }
            case "fieldsFrom": break  // handled by the caller, which sees the sibling commands
            default: throw GeneratorError("\(label): unknown override key '\(key)'")
            }
        }
    }
    if let traitOverrides = overrides["traits"] as? [String: Any] {
        var traits = data["traits"] as? [[String: Any]] ?? []
        for (traitID, rawEntry) in traitOverrides.sorted(by: { $0.key < $1.key }) {
            guard let entry = rawEntry as? [String: Any] else { throw GeneratorError("override traits.\(traitID) must be an object") }
            guard let t = traits.firstIndex(where: { sameID($0["id"], traitID) }) else {
                throw GeneratorError("override traits.\(traitID): no such trait in matter.json")
            }
            for (key, value) in entry {
                switch key {
                case "reason": break
                case "swiftName": traits[t]["swiftName"] = value
                case "attributes", "commands", "events":
                    guard let members = value as? [String: Any] else { throw GeneratorError("traits.\(traitID).\(key) must be an object") }
                    var records = traits[t][key] as? [[String: Any]] ?? []
                    let original = records
                    for (memberID, rawMember) in members.sorted(by: { $0.key < $1.key }) {
                        let label = "override traits.\(traitID).\(key).\(memberID)"
                        guard let member = rawMember as? [String: Any] else { throw GeneratorError("\(label) must be an object") }
                        guard let m = records.firstIndex(where: { sameID($0["id"], memberID) }) else {
                            throw GeneratorError("\(label): no such element in matter.json")
                        }
                        try patch(&records[m], with: member, label)
                        if let from = member["fieldsFrom"] as? String {
                            guard key == "commands", let source = original.first(where: { sameID($0["id"], from) }) else {
                                throw GeneratorError("\(label): fieldsFrom '\(from)' names no command of this trait")
                            }
                            records[m]["fields"] = source["fields"]
                        }
                    }
                    traits[t][key] = records
                default: throw GeneratorError("override traits.\(traitID): unknown key '\(key)'")
                }
            }
        }
        data["traits"] = traits
    }
    if let typeOverrides = overrides["deviceTypes"] as? [String: Any] {
        var types = data["deviceTypes"] as? [[String: Any]] ?? []
        for (typeID, rawEntry) in typeOverrides.sorted(by: { $0.key < $1.key }) {
            let label = "override deviceTypes.\(typeID)"
            guard let entry = rawEntry as? [String: Any] else { throw GeneratorError("\(label) must be an object") }
            guard let d = types.firstIndex(where: { sameID($0["id"], typeID) }) else {
                throw GeneratorError("\(label): no such device type in matter.json")
            }
            try patch(&types[d], with: entry, label)
        }
        data["deviceTypes"] = types
    }
}
