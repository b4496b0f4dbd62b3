public import HomeCore
public import HomeModel
import Foundation

/// What one device can start, test and do in an automation (`GET /candidates?device=`, the
/// web editor's pickers, GHA's candidates call), from the catalogue and the traits the device
/// has. An app sees only the device types its grant shows, only the (device type, trait) pairs
/// it may automate, and actions only when it may control.
extension AutomationEngine {
    /// `{device, name, starters, conditions, actions}`, each element `{kind, type, trait, name,
    /// fields?, minimum?, maximum?, unit?}` (HearthAPI's `WireCandidates`); `notFound` for a
    /// device `principal` cannot see, in the same words as for one that does not exist.
    public func deviceCandidates(_ device: String, as principal: Principal) throws(AutomationError) -> Value {
        let d: DeviceSnapshot
        do { d = try core.home(for: principal).currentDevice(id: DeviceID(rawValue: device)).snapshot } catch { throw AutomationError(error) }
        let catalog = core.catalog
        let app = principal.role == .app
        let pairs = principal.scope?.automationTypes
        let mayAct = !app || principal.scope?.canControl == true
        var starters: [Value] = [["kind": "connectivity"]]
        var conditions: [Value] = [["kind": "connectivity"]]
        var actions: [Value] = []
        func element(_ kind: String, _ type: String, _ trait: String, _ name: String, _ a: AttributeDescriptor? = nil, fields: [FieldDescriptor]? = nil) -> Value {
            var o: [String: Value] = ["kind": .string(kind), "type": .string(type), "trait": .string(trait), "name": .string(name)]
            if let fields { o["fields"] = .list(fields.map { .string($0.name) }) }
            if let min = a?.minimum { o["minimum"] = .int(min) }
            if let max = a?.maximum { o["maximum"] = .int(max) }
            if let unit = a?.unit { o["unit"] = .string(unit) }
            return .object(o)
        }
        for type in d.types {
            let typeName = catalog.deviceType(type.id)?.swiftName.replacingOccurrences(of: "DeviceType", with: "") ?? type.id.hex
            for traitID in type.traits.keys.sorted() {
                guard let trait = catalog.trait(traitID) else { continue }
                if app, !(pairs?.contains(AutomationType(deviceType: type.id, trait: traitID)) ?? false) { continue }
                let traitName = trait.swiftName.replacingOccurrences(of: "Trait", with: "")
                let present = type.traits[traitID]?.attributes ?? [:]
                for a in trait.attributes where present[a.id] != nil {
                    starters.append(element("attribute", typeName, traitName, a.name, a))
                    conditions.append(element("attribute", typeName, traitName, a.name, a))
                    if a.writable, mayAct { actions.append(element("write", typeName, traitName, a.name, a)) }
                }
                for e in trait.events { starters.append(element("event", typeName, traitName, e.name, fields: e.fields)) }
                if mayAct {
                    for c in trait.commands { actions.append(element("command", typeName, traitName, c.name, fields: c.fields)) }
                }
            }
        }
        return [
            "device": .string(d.id.rawValue), "name": .string(d.name), "starters": .list(starters), "conditions": .list(conditions),
            "actions": .list(actions),
        ]
    }
}
