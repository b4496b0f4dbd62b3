public import HomeModel
public import Foundation
import HashTreeCollections
import Synchronization

/// Where scenes are kept (storage implements it, like ``LayoutStore``).
public protocol SceneStore: Sendable {
    func loadScenes() throws(HomeError) -> [Scene]
    /// Inserts or replaces a scene (its revision already bumped).
    func saveScene(_ scene: Scene) throws(HomeError)
    func deleteScene(id: String) throws(HomeError)
    func markRecalled(id: String, at: Date) throws(HomeError)
}

/// What one recall did: each step with its error, if any.
public struct SceneRecallResult: Sendable {
    public struct StepResult: Sendable {
        public let step: SceneStep
        /// nil when the step succeeded.
        public let error: HomeError?
    }
    public let scene: String
    public let steps: [StepResult]
    public var failed: Int { steps.filter { $0.error != nil }.count }
}

/// The home's scenes: create, edit and delete (admins), list, recall (members too; apps within
/// their grant), capture, and `isActive` computed live from the core's state.
///
/// Recall sends each target through the same command path as the API (`Home.invoke` /
/// `Home.write` as the caller), so validation and errors are the ones a client gets.
public final class SceneBook: Sendable {
    public let core: HomeCore
    let store: (any SceneStore)?
    let scenes = Mutex<[String: Scene]>([:])

    public init(core: HomeCore, store: (any SceneStore)? = nil) throws(HomeError) {
        self.core = core
        self.store = store
        if let store {
            let loaded = try store.loadScenes()
            scenes.withLock { s in for x in loaded { s[x.id] = x } }
        }
    }

    // MARK: - Reading

    /// The scenes this principal may see, sorted by name: users see all; an app only scenes
    /// whose every target it can see.
    public func list(as principal: Principal) throws(HomeError) -> [Scene] {
        try core.checkSession(principal)
        let all = scenes.withLock { Array($0.values) }
        return all.filter { inScope($0, principal) }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    /// One scene, or `notFound` (also when the principal may not see it).
    public func scene(_ id: String, as principal: Principal) throws(HomeError) -> Scene {
        try core.checkSession(principal)
        guard let s = scenes.withLock({ $0[id] }), inScope(s, principal) else { throw .notFound("no scene '\(id)'") }
        return s
    }

    /// Whether the scene's targets hold now.
    public func isActive(_ id: String) -> Bool {
        guard let s = scenes.withLock({ $0[id] }) else { return false }
        return s.isActive(in: core.state)
    }

    func inScope(_ scene: Scene, _ principal: Principal) -> Bool {
        guard principal.scope != nil else { return true }
        let state = core.state
        return scene.targets.allSatisfy { t in
            core.visible(.devices, state.devices[t.device], principal)?.type(t.deviceType)?.traits[t.trait] != nil
        }
    }

    // MARK: - Editing (admins)

    /// Creates a scene (revision 1). Admins only; the scene is checked first (``check(_:)``).
    @discardableResult
    public func create(_ scene: Scene, as principal: Principal) throws(HomeError) -> Scene {
        try requireAdmin(principal, "create scenes")
        var s = scene
        try check(s)
        s.revision = 1
        let taken: String? = scenes.withLock { all in
            if all[s.id] != nil { return "id '\(s.id)'" }
            let key = NamingRules.normalised(s.name)
            return all.values.first { $0.structureID == s.structureID && NamingRules.normalised($0.name) == key }.map { "name '\($0.name)'" }
        }
        if let taken { throw .conflict("a scene with \(taken) exists") }
        try store?.saveScene(s)
        scenes.withLock { $0[s.id] = s }
        return s
    }

    /// Replaces a scene; `revision` must be the one stored (`conflict` otherwise).
    @discardableResult
    public func update(_ scene: Scene, ifRevision revision: Int?, as principal: Principal) throws(HomeError) -> Scene {
        try requireAdmin(principal, "edit scenes")
        guard let old = scenes.withLock({ $0[scene.id] }) else { throw .notFound("no scene '\(scene.id)'") }
        try requireWritable(old, principal)
        if let revision, revision != old.revision {
            throw .conflict("scene '\(scene.id)' is at revision \(old.revision), not \(revision); reload it and edit again")
        }
        var s = scene
        try check(s)
        s.revision = old.revision + 1
        try store?.saveScene(s)
        scenes.withLock { $0[s.id] = s }
        return s
    }

    /// Deletes a scene (admins; config-owned scenes only through the file).
    public func delete(_ id: String, ifRevision revision: Int? = nil, as principal: Principal) throws(HomeError) {
        try requireAdmin(principal, "delete scenes")
        guard let old = scenes.withLock({ $0[id] }) else { throw .notFound("no scene '\(id)'") }
        try requireWritable(old, principal)
        if let revision, revision != old.revision {
            throw .conflict("scene '\(id)' is at revision \(old.revision), not \(revision)")
        }
        try store?.deleteScene(id: id)
        scenes.withLock { $0[id] = nil }
    }

    /// Replaces every config-owned scene with `configured` (at start-up and on reload); the
    /// API's scenes stay. Scenes that fail ``check(_:)`` are skipped and returned with why.
    @discardableResult
    public func loadConfigured(_ configured: [Scene]) -> [(scene: String, error: HomeError)] {
        var problems: [(String, HomeError)] = []
        var accepted: [Scene] = []
        for s in configured {
            do throws(HomeError) {
                accepted.append(try prepareConfigured(s))
            } catch {
                problems.append((s.id, error))
            }
        }
        let stale = scenes.withLock { all in all.values.filter { $0.source == "config" && !accepted.map(\.id).contains($0.id) }.map(\.id) }
        for id in stale { try? store?.deleteScene(id: id) }
        for s in accepted { try? store?.saveScene(s) }
        scenes.withLock { all in
            for id in stale { all[id] = nil }
            for s in accepted { all[s.id] = s }
        }
        return problems
    }

    /// Adds one config-owned scene — one that waited for its devices — leaving the others as
    /// they are (``loadConfigured(_:)`` replaces them all).
    public func addConfigured(_ scene: Scene) throws(HomeError) {
        let s = try prepareConfigured(scene)
        try store?.saveScene(s)
        scenes.withLock { $0[s.id] = s }
    }

    /// A config scene checked, with its revision: kept when unchanged, one up when it changed.
    func prepareConfigured(_ scene: Scene) throws(HomeError) -> Scene {
        var s = scene
        s.source = "config"
        try check(s)
        let previous = scenes.withLock { $0[s.id] }
        if let previous, previous.source != "config" {
            throw .conflict("scene id '\(s.id)' is already used by a scene made through the API")
        }
        s.revision = previous?.revision ?? 1
        if let previous, previous.withRevision(s.revision) != s { s.revision += 1 }
        return s
    }

    /// Checks a scene against the home: a valid name, a known structure (and room in it), and
    /// targets that are scene-able attributes of devices that have them, with valid values.
    public func check(_ scene: Scene) throws(HomeError) {
        let state = core.state
        let verdict = NamingRules.check(scene.name)
        guard verdict.isValid else {
            throw .invalidArgument("invalid scene name '\(scene.name)': " + verdict.violations.map(\.rule).joined(separator: "; "))
        }
        guard !scene.id.isEmpty, scene.id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw .invalidArgument("scene id '\(scene.id)' must be letters, digits, '-' or '_'")
        }
        guard state.structures[scene.structureID] != nil else { throw .notFound("no structure \(scene.structureID)") }
        if let room = scene.roomID, state.rooms[room]?.structureID != scene.structureID {
            throw .notFound("no room \(room) in structure \(scene.structureID)")
        }
        guard (0...60_000_000).contains(scene.transitionMilliseconds) else {
            throw .invalidArgument("transition must be between 0 and 60000 s")
        }
        guard !scene.targets.isEmpty else { throw .invalidArgument("scene '\(scene.name)' has no targets (emptyScene)") }
        for (i, t) in scene.targets.enumerated() {
            let at = "targets[\(i)]"
            guard let trait = core.catalog.trait(t.trait) else { throw .invalidArgument("\(at): unknown trait \(t.trait.hex)") }
            guard let entry = SceneableAttributes.entry(t.trait, t.attribute), let a = trait.attribute(t.attribute) else {
                throw .invalidArgument(
                    "\(at): \(trait.name).\(trait.attribute(t.attribute)?.name ?? t.attribute.hex) is not scene-able (notSceneable); "
                        + "scene-able: " + SceneableAttributes.all.filter { $0.trait == t.trait }.compactMap { trait.attribute($0.attribute)?.name }.joined(separator: ", "))
            }
            if entry.sensitive, !scene.allowSensitive {
                throw .permissionDenied("\(at): \(trait.name) is sensitive; a scene may hold it only when an admin sets allowSensitive")
            }
            guard let device = state.devices[t.device] else {
                throw .notFound("\(at): no device \(t.device)" + Self.closest(t.device.rawValue, among: state.commissioned.keys.map(\.rawValue)))
            }
            guard device.structureID == scene.structureID else {
                throw .invalidArgument("\(at): \(device.name) is not in the scene's structure")
            }
            guard let type = device.type(t.deviceType), type.traits[t.trait] != nil else {
                throw .unsupportedOperation("\(at): \(device.name) has no \(trait.name) on a \(core.catalog.deviceType(t.deviceType)?.name ?? t.deviceType.hex)")
            }
            try a.validate(t.value, in: trait)
        }
    }

    /// " (did you mean 'x'?)" for the closest name, or "".
    static func closest(_ name: String, among names: [String]) -> String {
        guard let best = EditDistance.closest(to: name, in: names, limit: 1).first else { return "" }
        return " (did you mean '\(best)'?)"
    }

    func requireAdmin(_ principal: Principal, _ what: String) throws(HomeError) {
        try core.checkSession(principal)
        guard principal.role == .admin else {
            throw .permissionDenied("\(principal) is a \(principal.role.rawValue); only an admin can \(what)")
        }
    }

    func requireWritable(_ scene: Scene, _ principal: Principal) throws(HomeError) {
        if scene.source == "config" {
            throw .permissionDenied("scene '\(scene.id)' is defined in \(scene.configRef ?? "hearth.yaml"); edit it there")
        }
    }

    // MARK: - Recall and capture

    /// Recalls a scene: every target through the normal command path, as `principal`.
    ///
    /// Members may recall; an app only when its grant may control and every target is inside
    /// it (checked before anything is sent: all or nothing). Each step's error is in the result.
    public func recall(_ id: String, as principal: Principal) async throws(HomeError) -> SceneRecallResult {
        let scene = try self.scene(id, as: principal)
        if let scope = principal.scope {
            guard scope.canControl else { throw .permissionDenied("this app's grant allows reading only") }
            guard inScope(scene, principal) else { throw .permissionDenied("scene '\(id)' reaches devices outside this app's grant") }
        }
        let home = core.home(for: principal)
        var results: [SceneRecallResult.StepResult] = []
        for step in scene.steps() {
            do {
                switch step {
                case .command(let c): _ = try await home.invoke(c)
                case .write(let d, let type, let trait, let attribute, let value):
                    try await home.write(device: d, deviceType: type, trait: trait, attribute: attribute, value: value)
                }
                results.append(.init(step: step, error: nil))
            } catch let error as HomeError {
                results.append(.init(step: step, error: error))
            } catch {
                results.append(.init(step: step, error: .internal("\(error)")))
            }
        }
        try? store?.markRecalled(id: id, at: Date())
        return SceneRecallResult(scene: id, steps: results)
    }

    /// Targets holding the devices' current values of every scene-able attribute they have
    /// (Matter StoreScene), for a new scene or to overwrite one.
    /// `includeSensitive` adds locks' state (for a scene an admin marked `allowSensitive`).
    public func capture(devices: [DeviceID], includeSensitive: Bool = false, as principal: Principal) throws(HomeError) -> [SceneTarget] {
        try requireAdmin(principal, "capture scenes")
        let state = core.state
        var targets: [SceneTarget] = []
        for id in devices {
            guard let d = state.devices[id] else { throw .notFound("no device \(id)") }
            for type in d.types {
                for entry in SceneableAttributes.all where includeSensitive || !entry.sensitive {
                    if let v = type.traits[entry.trait]?.attributes[entry.attribute], !v.isNull {
                        targets.append(SceneTarget(device: id, deviceType: type.id, trait: entry.trait, attribute: entry.attribute, value: v))
                    }
                }
            }
        }
        return targets
    }

    /// `targets` with each value replaced by the device's current one (``capture(devices:includeSensitive:as:)``):
    /// the same devices, types, traits and attributes. All or nothing: a target whose device
    /// has not reported that attribute yet is `invalidArgument`, naming it.
    public func captured(_ targets: [SceneTarget], allowSensitive: Bool, as principal: Principal) throws(HomeError) -> [SceneTarget] {
        var devices: [DeviceID] = []
        for t in targets where !devices.contains(t.device) { devices.append(t.device) }
        let now = try capture(devices: devices, includeSensitive: allowSensitive, as: principal)
        var out: [SceneTarget] = []
        for (i, t) in targets.enumerated() {
            guard let v = now.first(where: { $0.device == t.device && $0.deviceType == t.deviceType && $0.trait == t.trait && $0.attribute == t.attribute })
            else {
                let trait = core.catalog.trait(t.trait)
                throw .invalidArgument(
                    "targets[\(i)]: \(t.device) has no current \(trait?.name ?? t.trait.hex).\(trait?.attribute(t.attribute)?.name ?? t.attribute.hex) to capture; nothing was captured")
            }
            out.append(SceneTarget(device: t.device, deviceType: t.deviceType, trait: t.trait, attribute: t.attribute, value: v.value))
        }
        return out
    }

    /// Stores the devices' current values in the scene's targets (admins; Matter StoreScene):
    /// the revision goes up; `revision`, when given, must be the stored one (`conflict`).
    @discardableResult
    public func capture(_ id: String, ifRevision revision: Int? = nil, as principal: Principal) throws(HomeError) -> Scene {
        try requireAdmin(principal, "capture scenes")
        guard let old = scenes.withLock({ $0[id] }) else { throw .notFound("no scene '\(id)'") }
        try requireWritable(old, principal)
        var s = old
        s.targets = try captured(old.targets, allowSensitive: old.allowSensitive, as: principal)
        return try update(s, ifRevision: revision ?? old.revision, as: principal)
    }
}

/// Closest names by Levenshtein distance (case-insensitive), for "did you mean" suggestions.
public enum EditDistance {
    public static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.lowercased()), y = Array(b.lowercased())
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    /// Up to `limit` names nearest to `name` (ties by name), only those within half its length
    /// (plus 2) of it, or that contain it.
    public static func closest(to name: String, in names: [String], limit: Int = 3) -> [String] {
        let scored = names.map { ($0, distance(name, $0)) }
            .filter { $0.1 <= max(2, name.count / 2 + 2) || $0.0.lowercased().contains(name.lowercased()) }
        return scored.sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(limit).map(\.0)
    }
}

extension HomeCore {
    /// Throws `permissionDenied` for a revoked session (for modules beside the core).
    public func checkSessionPublic(_ principal: Principal) throws(HomeError) {
        try checkSession(principal)
    }
}

extension Scene {
    func withRevision(_ r: Int) -> Scene {
        var s = self
        s.revision = r
        return s
    }
}
