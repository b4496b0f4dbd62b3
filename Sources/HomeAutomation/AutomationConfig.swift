public import HomeCore
public import HomeModel
public import Foundation
import HashTreeCollections

/// `scenes:` and `automations:` of `hearth.yaml`, already read into a `Value` with the line of
/// every key path (`automations[0].starters[1].attribute.attribute` → 31): decoded, resolved
/// and validated, every problem as `file:line: key.path: message (did you mean …?)`.
///
/// A broken entry is left out; the others load (like a broken plugin section).
public struct AutomationConfig: Sendable {
    public var scenes: [Scene] = []
    public var automations: [Automation] = []
    /// Where each automation is defined (`etc/hearth.yaml:12`), by ID.
    public var automationRefs: [String: String] = [:]
    /// Blocking problems (the entry was not loaded).
    public var errors: [String] = []
    /// Warnings (the entry loaded).
    public var warnings: [String] = []
    /// Automations whose only problem is devices no plugin has reported yet (a fresh
    /// database's first start): the engine loads each once its devices appear
    /// (``AutomationEngine/loadConfigured(_:refs:pending:)``). Their refs are in ``automationRefs``.
    public var pending: [Automation] = []
    /// Scenes whose only problem is devices no plugin has reported yet: they wait like
    /// pending automations and load once their devices appear.
    public var pendingScenes: [PendingScene] = []
    /// One line per pending scene or automation: where it is and the devices it waits for.
    public var pendingNotes: [String] = []

    /// A config scene waiting for its devices: its entry as written, re-read when a device appears.
    public struct PendingScene: Sendable, Hashable {
        public let id: String
        public let value: Value
        /// `scenes[0]`.
        public let path: String
        /// `etc/hearth.yaml:3`.
        public let ref: String
    }

    public init() {}

    /// Reads the two sections. `state` and `catalog` resolve names; `scenesKnown` adds scene IDs
    /// made through the API (an automation may recall them).
    public static func read(
        scenes: Value?, automations: Value?, file: String, lines: [String: Int], state: HomeState, catalog: Catalog,
        scenesKnown: Set<String> = [], location: SolarLocation? = nil, timeZone: TimeZone = .current, checksLocation: Bool = false
    ) -> AutomationConfig {
        var out = AutomationConfig()
        func at(_ path: String) -> String {
            // The line of the path, or of its nearest parent that has one.
            var p = path
            while !p.isEmpty {
                if let l = lines[p] { return "\(file):\(l)" }
                if let dot = p.lastIndex(where: { $0 == "." || $0 == "[" }) { p = String(p[..<dot]) } else { break }
            }
            return file
        }
        if let list = scenes?.listValue {
            for (i, v) in list.enumerated() {
                let path = "scenes[\(i)]"
                do throws(ConfigProblem) {
                    var s = try resolveScene(v, path: path, state: state, catalog: catalog)
                    s.configRef = at(path)
                    out.scenes.append(s)
                } catch where !error.missingDevices.isEmpty {
                    // Only devices that are not there (yet): pending, not refused.
                    let id = sceneID(v)
                    out.pendingScenes.append(PendingScene(id: id, value: v, path: path, ref: at(path)))
                    out.pendingNotes.append(
                        "\(at(path)): \(path) (\(id)): pending: waits for " + error.missingDevices.map { "'\($0)'" }.joined(separator: ", ")
                            + " (no plugin has reported \(error.missingDevices.count == 1 ? "it" : "them") yet); it loads once "
                            + (error.missingDevices.count == 1 ? "it appears" : "they appear"))
                } catch {
                    out.errors.append("\(at(error.path)): \(error.path): \(error.message)")
                }
            }
        } else if let scenes, !scenes.isNull {
            out.errors.append("\(at("scenes")): scenes: expected a list")
        }
        let sceneIDs = scenesKnown.union(out.scenes.map(\.id)).union(out.pendingScenes.map(\.id))
        var decoded: [(Int, Automation)] = []
        if let list = automations?.listValue {
            for (i, v) in list.enumerated() {
                let path = "automations[\(i)]"
                do {
                    let data = try JSONEncoder().encode(v)
                    decoded.append((i, try JSONDecoder().decode(Automation.self, from: data)))
                } catch let error as DecodingError {
                    let (sub, message) = describeDecoding(error)
                    let full = path + sub
                    out.errors.append("\(at(full)): \(full): \(message)")
                } catch {
                    out.errors.append("\(at(path)): \(path): \(error)")
                }
            }
        } else if let automations, !automations.isNull {
            out.errors.append("\(at("automations")): automations: expected a list")
        }
        var manual: [String: Bool] = [:]
        for (_, a) in decoded { manual[a.id] = a.starters.contains { $0.kind == .manual } }
        var compiler = AutomationCompiler(catalog: catalog, state: state, scenes: sceneIDs, automations: manual)
        compiler.location = location
        compiler.checksLocation = checksLocation
        compiler.timeZone = timeZone
        // Without the pending scenes: an automation that uses one waits with it.
        var strict = compiler
        strict.scenes = scenesKnown.union(out.scenes.map(\.id))
        for (i, a) in decoded {
            let path = "automations[\(i)]"
            let issues = compiler.validate(a)
            for issue in issues {
                let full = "\(path).\(issue.path)"
                let line = "\(at(full)): \(full): \(issue.message)" + (issue.suggestion.map { " (did you mean \($0)?)" } ?? "")
                if issue.severity == .error { out.errors.append(line) } else { out.warnings.append(line) }
            }
            let errors = issues.filter { $0.severity == .error }
            let scenesWaited = out.pendingScenes.isEmpty || !errors.isEmpty ? [] : strict.validate(a).filter { $0.code == "unknownScene" }
            if !scenesWaited.isEmpty {
                out.pending.append(a)
                out.automationRefs[a.id] = at(path)
                let names = Set(out.pendingScenes.map(\.id)).filter { id in scenesWaited.contains { $0.message == "no scene '\(id)'" } }.sorted()
                out.pendingNotes.append(
                    "\(at(path)): \(path) (\(a.id)): pending: waits for scene " + names.map { "'\($0)'" }.joined(separator: ", ")
                        + " (its devices are not reported yet); it loads once \(names.count == 1 ? "it does" : "they do")")
            } else if errors.isEmpty {
                out.automations.append(a)
                out.automationRefs[a.id] = at(path)
            } else if errors.allSatisfy({ AutomationIssue.missingDeviceCodes.contains($0.code) }) {
                // Only devices that are not there (yet): pending, not refused.
                out.errors.removeLast(errors.count)
                out.pending.append(a)
                out.automationRefs[a.id] = at(path)
                out.pendingNotes.append(Self.pendingNote(a, ref: at(path), path: path, errors))
            }
        }
        return out
    }

    /// `etc/hearth.yaml:12: automations[0] (hall-light): pending: waits for 'gpio:x' (no plugin has reported it yet)`.
    static func pendingNote(_ a: Automation, ref: String, path: String, _ errors: [AutomationIssue]) -> String {
        var names: [String] = []
        let hints = errors.compactMap { e in e.suggestion.map { "\(e.path): did you mean \($0)?" } }
        for e in errors {
            // "no device 'NAME'" → NAME
            if let open = e.message.firstIndex(of: "'"), let close = e.message.lastIndex(of: "'"), open < close {
                let name = String(e.message[e.message.index(after: open)..<close])
                if !names.contains(name) { names.append(name) }
            }
        }
        return "\(ref): \(path) (\(a.id)): pending: waits for " + names.map { "'\($0)'" }.joined(separator: ", ")
            + " (no plugin has reported \(names.count == 1 ? "it" : "them") yet); it loads once \(names.count == 1 ? "it appears" : "they appear")"
            + (hints.isEmpty ? "" : " — if it is a typo: " + hints.joined(separator: "; "))
    }

    struct ConfigProblem: Error {
        let path: String
        let message: String
        /// Set when the only problem is devices that are not there: their names.
        var missingDevices: [String] = []
    }

    /// A scene entry's ID: `id`, or its name as a slug.
    static func sceneID(_ v: Value) -> String {
        v["id"]?.stringValue ?? (v["name"]?.stringValue ?? "").lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
    }

    /// A decoding error's key path (`.starters[0]`) and message.
    public static func describeDecoding(_ error: DecodingError) -> (String, String) {
        error.pathAndMessage
    }

    /// `{id, name, room?, structure?, transition?, allowSensitive?, targets: [{device, type?, trait, attribute, value}]}`.
    static func resolveScene(_ v: Value, path: String, state: HomeState, catalog: Catalog) throws(ConfigProblem) -> Scene {
        guard let o = v.objectValue else { throw ConfigProblem(path: path, message: "a scene is an object") }
        for key in o.keys where !["id", "name", "room", "structure", "transition", "allowSensitive", "targets"].contains(key) {
            throw ConfigProblem(path: "\(path).\(key)", message: "unknown key '\(key)'")
        }
        guard let name = o["name"]?.stringValue else { throw ConfigProblem(path: "\(path).name", message: "a scene needs a name") }
        let id = sceneID(v)
        let structures = state.structures.values.sorted { $0.id < $1.id }
        var structure = structures.first
        if let s = o["structure"]?.stringValue {
            structure = structures.first { NamingRules.normalised($0.name) == NamingRules.normalised(s) || $0.id.rawValue == s }
            if structure == nil {
                throw ConfigProblem(path: "\(path).structure", message: "no structure '\(s)'" + hint(s, structures.map(\.name)))
            }
        }
        guard let structure else {
            // A fresh home: no device has been commissioned yet, so the scene waits for its devices.
            var names: [String] = []
            for t in o["targets"]?.listValue ?? [] { if let d = t["device"]?.stringValue, !names.contains(d) { names.append(d) } }
            throw ConfigProblem(path: path, message: "there is no structure yet (commission a device first)", missingDevices: names)
        }
        var room: RoomID?
        if let r = o["room"]?.stringValue {
            let rooms = state.rooms.values.filter { $0.structureID == structure.id }
            guard let found = rooms.first(where: { NamingRules.normalised($0.name) == NamingRules.normalised(r) || $0.id.rawValue == r }) else {
                throw ConfigProblem(path: "\(path).room", message: "no room '\(r)' in \(structure.name)" + hint(r, rooms.map(\.name)))
            }
            room = found.id
        }
        var transition = 0
        if let t = o["transition"] {
            let span: Span? = t.doubleValue.map { Span(milliseconds: Int64($0 * 1000)) } ?? t.stringValue.flatMap(Span.init(parsing:))
            guard let span, span.milliseconds >= 0 else { throw ConfigProblem(path: "\(path).transition", message: "a duration, e.g. 2s") }
            transition = Int(span.milliseconds)
        }
        guard let targets = o["targets"]?.listValue else { throw ConfigProblem(path: "\(path).targets", message: "a scene needs targets") }
        var resolved: [SceneTarget] = []
        var missing: (path: String, message: String, names: [String])?
        for (i, t) in targets.enumerated() {
            let tp = "\(path).targets[\(i)]"
            guard let deviceName = t["device"]?.stringValue else { throw ConfigProblem(path: "\(tp).device", message: "missing device") }
            let device = state.commissioned[DeviceID(rawValue: deviceName)]
                ?? state.commissioned.values.first { NamingRules.normalised($0.name) == NamingRules.normalised(deviceName) }
            guard let traitName = t["trait"]?.stringValue, let trait = catalog.trait(named: traitName) else {
                throw ConfigProblem(path: "\(tp).trait", message: "no trait '\(t["trait"]?.stringValue ?? "")'")
            }
            guard let attrName = t["attribute"]?.stringValue,
                let attribute = trait.attribute(named: attrName) ?? catalog.attributeByLooseName(trait, attrName)
            else {
                throw ConfigProblem(
                    path: "\(tp).attribute", message: "\(trait.name) has no attribute '\(t["attribute"]?.stringValue ?? "")'"
                        + hint(t["attribute"]?.stringValue ?? "", trait.attributes.map(\.name)))
            }
            guard let device else {
                // Not (yet) in the home: the scene waits for it, unless something else is wrong.
                if missing == nil {
                    missing = ("\(tp).device", "no device '\(deviceName)'" + hint(deviceName, state.commissioned.keys.map(\.rawValue)), [])
                }
                if missing?.names.contains(deviceName) == false { missing?.names.append(deviceName) }
                continue
            }
            var type = device.types.first { $0.traits[trait.id] != nil }
            if let typeName = t["type"]?.stringValue {
                guard let dt = catalog.deviceType(named: typeName), let found = device.type(dt.id) else {
                    throw ConfigProblem(path: "\(tp).type", message: "\(device.name) is not a '\(typeName)'")
                }
                type = found
            }
            guard let type, let value = t["value"] else {
                throw ConfigProblem(path: tp, message: "\(device.name) has no \(trait.name), or the target has no value")
            }
            resolved.append(SceneTarget(device: device.id, deviceType: type.id, trait: trait.id, attribute: attribute.id, value: value))
        }
        if let missing { throw ConfigProblem(path: missing.path, message: missing.message, missingDevices: missing.names) }
        return Scene(
            id: id, name: name, structureID: structure.id, roomID: room, transitionMilliseconds: transition, targets: resolved,
            allowSensitive: o["allowSensitive"]?.boolValue ?? false, source: "config")
    }

    static func hint(_ name: String, _ names: [String]) -> String {
        let close = EditDistance.closest(to: name, in: names, limit: 2)
        return close.isEmpty ? "" : " (did you mean " + close.map { "'\($0)'" }.joined(separator: " or ") + "?)"
    }
}
