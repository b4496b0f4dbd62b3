import Foundation
import HearthConfiguration
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Logging
import ServiceLifecycle

/// `scenes:`, `automations:` and `location:` in hearth.yaml → the scene book and the
/// automation engine (a service), with every problem as `file:line: key: message`.
enum AutomationSetup {
    struct Made {
        let scenes: SceneBook
        let engine: AutomationEngine
        let errors: [String]
        let warnings: [String]
    }

    static func make(_ section: HearthConfig.HomeSection, file: String, database: HearthDatabase, core: HomeCore, logger: Logger) async throws -> Made {
        let store = database.automationStore()
        let scenes = try SceneBook(core: core, store: store)
        let config = AutomationConfig.read(
            scenes: section.scenes, automations: section.automations, file: file, lines: section.lines, state: core.state,
            catalog: core.catalog, scenesKnown: Set(try scenes.list(as: .system).map(\.id)))
        var errors = config.errors
        for (id, error) in scenes.loadConfigured(config.scenes) { errors.append("\(file): scenes: \(id): \(error.message)") }
        let zone = section.timeZone.flatMap(TimeZone.init(identifier:)) ?? .current
        let engine = AutomationEngine(core: core, scenes: scenes, store: store, timeZone: zone, logger: Logger(label: "hearth.automations"))
        let problems = await engine.loadConfigured(config.automations, refs: config.automationRefs)
        for (id, issues) in problems where issues.contains(where: { $0.severity == .error }) {
            errors.append("\(config.automationRefs[id] ?? file): automations: \(id): " + issues.map(\.description).joined(separator: "; "))
        }
        for e in errors { logger.error("\(e) (not loaded)") }
        for w in config.warnings { logger.warning("\(w)") }
        return Made(scenes: scenes, engine: engine, errors: errors, warnings: config.warnings)
    }
}

/// Runs the automation engine until hearthd shuts down.
struct AutomationService: Service {
    let engine: AutomationEngine
    func run() async throws {
        await cancelWhenGracefulShutdown { await engine.run() }
    }
}
