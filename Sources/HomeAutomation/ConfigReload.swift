public import HomeCore
public import HomeModel
import Foundation

/// Re-reading `scenes:` and `automations:` while hearthd runs (SIGHUP, `hearth automations
/// reload`): everything is checked first, and the running set is replaced only when nothing is
/// wrong — one broken entry keeps the old set whole, with every problem as
/// `file:line: key.path: message`.
public enum ConfigReload {
    /// What a reload did.
    public struct Outcome: Sendable, Hashable, CustomStringConvertible {
        /// True when the new set replaced the old one.
        public var applied: Bool
        /// Blocking problems (then nothing changed).
        public var errors: [String]
        public var warnings: [String]
        public var scenes: Int
        public var automations: Int
        /// Automations waiting for devices no plugin has reported yet (where and which devices).
        public var pending: [String] = []

        public var description: String {
            applied
                ? "reloaded \(scenes) scene(s) and \(automations) automation(s)"
                    + (warnings.isEmpty ? "" : " with \(warnings.count) warning(s): " + warnings.joined(separator: "; "))
                    + (pending.isEmpty ? "" : "; \(pending.count) pending: " + pending.joined(separator: "; "))
                : "reload refused, the running scenes and automations are kept: " + errors.joined(separator: "; ")
        }
    }

    /// Reads the sections against the current home, checks every scene and automation, and
    /// applies them only if all pass. `configError` is a problem found before (the file did not
    /// parse): it refuses the reload the same way.
    public static func apply(
        scenes: Value?, automations: Value?, file: String, lines: [String: Int], configError: String? = nil,
        book: SceneBook?, engine: AutomationEngine
    ) async -> Outcome {
        if let configError { return Outcome(applied: false, errors: [configError], warnings: [], scenes: 0, automations: 0) }
        let core = engine.core
        let apiScenes = Set(((try? book?.list(as: .system)) ?? []).filter { $0.source != "config" }.map(\.id))
        let config = AutomationConfig.read(
            scenes: scenes, automations: automations, file: file, lines: lines, state: core.state, catalog: core.catalog, scenesKnown: apiScenes,
            location: engine.location, timeZone: engine.timeZone, checksLocation: true)
        var errors = config.errors
        for s in config.scenes {
            do throws(HomeError) {
                var s = s
                s.source = "config"
                try book?.check(s)
                if apiScenes.contains(s.id) { throw .conflict("scene id '\(s.id)' is already used by a scene made through the API") }
            } catch {
                errors.append("\(s.configRef ?? file): scenes: \(s.id): \(error.message)")
            }
        }
        if book == nil, !config.scenes.isEmpty { errors.append("\(file): scenes: no scene book to load them into") }
        let clash = await engine.apiOwnedIDs().intersection(config.automations.map(\.id))
        for id in clash.sorted() { errors.append("\(config.automationRefs[id] ?? file): automations: \(id): the id is used by an automation made through the API") }
        guard errors.isEmpty else {
            return Outcome(applied: false, errors: errors, warnings: config.warnings, scenes: 0, automations: 0)
        }
        book?.loadConfigured(config.scenes)
        let problems = await engine.loadConfigured(
            config.automations, refs: config.automationRefs, pending: config.pending, pendingScenes: config.pendingScenes)
        let late = problems.filter { $0.value.contains { $0.severity == .error } }.keys.sorted()
        let waiting = await engine.pendingConfigured
        let waitingScenes = await engine.pendingConfiguredScenes
        var outcome = Outcome(
            applied: true, errors: late.map { "\(config.automationRefs[$0] ?? file): automations: \($0): " + (problems[$0] ?? []).filter { $0.severity == .error }.map(\.message).joined(separator: "; ") + " (not loaded)" }, warnings: config.warnings,
            scenes: config.scenes.count + (config.pendingScenes.count - waitingScenes.count),
            automations: config.automations.count + config.pending.count - late.count - waiting.count)
        outcome.pending = config.pendingNotes.filter { note in
            waiting.keys.contains { note.contains("(\($0)): pending") } || waitingScenes.keys.contains { note.contains("(\($0)): pending") }
        }
        return outcome
    }
}

extension ConfigReload.Outcome {
    /// The outcome as the API reports it, each problem read into file, line, key and message.
    public var report: ConfigReloadReport {
        ConfigReloadReport(
            applied: applied, scenes: scenes, automations: automations, refused: errors.map(ConfigProblem.init(parsing:)),
            warnings: warnings.map(ConfigProblem.init(parsing:)), pending: pending.map(ConfigProblem.init(parsing:)))
    }
}

extension AutomationEngine {
    /// Sets what ``reload(as:)`` runs (hearthd: the same reload as SIGHUP).
    public func setConfigReloader(_ reloader: @escaping @Sendable () async -> ConfigReload.Outcome) {
        configReloader = reloader
    }

    /// Re-reads the configuration's scenes and automations (admins) and reports what happened.
    public func reload(as principal: Principal) async throws(AutomationError) -> ConfigReloadReport {
        try requireAdmin(principal, "reload the configuration")
        guard let configReloader else { throw AutomationError(.notFound, "this hearthd was not started from a configuration file") }
        return await configReloader().report
    }

    /// The IDs of automations made through the API (a config entry may not take one over).
    func apiOwnedIDs() -> Set<String> { Set(records.values.filter { $0.source != "config" }.map(\.automation.id)) }
}
