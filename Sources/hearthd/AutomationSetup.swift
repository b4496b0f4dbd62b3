import Foundation
import HearthConfiguration
import HomeAutomation
import HomeCore
import HomeModel
import HomeStorage
import Logging
import ServiceLifecycle
import UnixSignals

/// `scenes:`, `automations:` and `location:` in hearth.yaml → the scene book and the
/// automation engine (a service), with every problem as `file:line: key: message`.
enum AutomationSetup {
    struct Made {
        let scenes: SceneBook
        let engine: AutomationEngine
        let errors: [String]
        let warnings: [String]
        /// Config automations waiting for devices no plugin has reported yet (loaded once they appear).
        let pending: [String]
    }

    static func make(
        _ section: HearthConfig.HomeSection, file: String, database: HearthDatabase, core: HomeCore, broker: AutomationBroker? = nil, logger: Logger
    ) async throws -> Made {
        let store = database.automationStore()
        let scenes = try SceneBook(core: core, store: store)
        let zone = section.timeZone.flatMap(TimeZone.init(identifier:)) ?? .current
        var location: SolarLocation?
        if let latitude = section.latitude, let longitude = section.longitude { location = SolarLocation(latitude: latitude, longitude: longitude) }
        let config = AutomationConfig.read(
            scenes: section.scenes, automations: section.automations, file: file, lines: section.lines, state: core.state,
            catalog: core.catalog, scenesKnown: Set(try scenes.list(as: .system).map(\.id)), location: location, timeZone: zone,
            checksLocation: true)
        var errors = config.errors
        for (id, error) in scenes.loadConfigured(config.scenes) { errors.append("\(file): scenes: \(id): \(error.message)") }
        var publisher: StandardOutbound.Publisher?
        if let broker {
            publisher = { @Sendable topic, payload, retain throws(HomeError) in try broker.publish(topic, payload, retain) }
        }
        let engine = AutomationEngine(
            core: core, scenes: scenes, store: store, timeZone: zone, logger: Logger(label: "hearth.automations"), location: location,
            outbound: StandardOutbound(publisher: publisher))
        let problems = await engine.loadConfigured(
            config.automations, refs: config.automationRefs, pending: config.pending, pendingScenes: config.pendingScenes)
        for (id, issues) in problems where issues.contains(where: { $0.severity == .error }) {
            errors.append("\(config.automationRefs[id] ?? file): automations: \(id): " + issues.map(\.description).joined(separator: "; "))
        }
        // App-owned automations act with their grant as it is at each run.
        let access = database.accessStore()
        await engine.setGrantLookup { grant in (try? access.grants(includeRevoked: false))?.first { $0.id == grant }?.scope }
        for e in errors { logger.error("\(e) (not loaded)") }
        for w in config.warnings { logger.warning("\(w)") }
        let waiting = await engine.pendingConfigured
        let waitingScenes = await engine.pendingConfiguredScenes
        let pending = config.pendingNotes.filter { note in
            waiting.keys.contains { note.contains("(\($0)): pending") } || waitingScenes.keys.contains { note.contains("(\($0)): pending") }
        }
        for p in pending { logger.warning("\(p)") }
        return Made(scenes: scenes, engine: engine, errors: errors, warnings: config.warnings, pending: pending)
    }
}

/// Runs the automation engine until hearthd shuts down.
struct AutomationService: Service {
    let engine: AutomationEngine
    func run() async throws {
        await cancelWhenGracefulShutdown { await engine.run() }
    }
}

/// SIGHUP: re-reads hearth.yaml's `scenes:` and `automations:` ([ConfigReload]); a file that
/// does not parse, or any broken entry, keeps the running set, logged as an error naming the
/// file, line and key. Other sections need a restart.
struct ConfigReloadService: Service {
    let file: String
    let scenes: SceneBook
    let engine: AutomationEngine
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals { await reload() }
        }
    }

    /// Lets `POST /automations/reload` run this reload too (the engine answers with its outcome).
    func answerAPI() async {
        await engine.setConfigReloader { await self.reload(cause: "API") }
    }

    @discardableResult
    func reload(cause: String = "SIGHUP") async -> ConfigReload.Outcome {
        logger.notice("\(cause): reloading scenes and automations", metadata: ["config": "\(file)"])
        let outcome: ConfigReload.Outcome
        do {
            let section = try HearthConfig.load(path: file).home
            outcome = await ConfigReload.apply(
                scenes: section.scenes, automations: section.automations, file: file, lines: section.lines, book: scenes, engine: engine)
        } catch {
            outcome = await ConfigReload.apply(scenes: nil, automations: nil, file: file, lines: [:], configError: error.message, book: scenes, engine: engine)
        }
        if outcome.applied && outcome.errors.isEmpty {
            logger.notice("\(outcome)")
        } else {
            logger.error("\(outcome)")
        }
        return outcome
    }
}
