import ArgumentParser
import DriverAPI
import Foundation
import HearthConfiguration
import HearthServer
import HomeCore
import HomeStorage
import HomeModel
import CoreMetrics
import Logging
import PluginHost
import ServiceLifecycle
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

@main
struct Hearthd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearthd",
        abstract: "Hearth: bridges GPIO and MQTT hardware into one home model.",
        subcommands: [PluginHostCommand.self, DoctorCommand.self, BackupCommand.self, RestoreCommand.self, RestoreOnStartCommand.self, HAPCommand.self, ReloadCommand.self])

    @Option(name: .shortAndLong, help: "The configuration file.")
    var config: String = "etc/hearth.yaml"

    @Option(help: "Log level (overrides the file): trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?

    @Option(name: .customLong("plugins"), help: "A folder of plugin .so files (repeatable); overrides plugins.directories.")
    var pluginDirectories: [String] = []

    @Flag(help: "Check the configuration and the plugins, then exit.")
    var check = false

    @Flag(help: .hidden)
    var includeTestFixtures = false

    /// ArgumentParser's entry point, after unblocking SIGTERM and SIGINT on the main thread
    /// (before any other thread starts): a parent may hand them down blocked (test runners
    /// do), and `systemctl stop` must reach the daemon.
    static func main() async {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGTERM)
        sigaddset(&unblock, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        // A subcommand's options are its own: `hearthd doctor --config X` must not hand
        // `--config` to the daemon's options of the same name.
        let arguments = Array(CommandLine.arguments.dropFirst())
        let subcommand = arguments.first.flatMap { name in Self.configuration.subcommands.first { $0._commandName == name } }
        let type: any ParsableCommand.Type = subcommand ?? Self.self
        let rest = subcommand == nil ? arguments : Array(arguments.dropFirst())
        do {
            var command = try type.parseAsRoot(rest)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            type.exit(withError: error)
        }
    }

    func run() async throws {
        let settings: HearthConfig
        do {
            settings = try HearthConfig.load(path: config)
        } catch {
            FileHandle.standardError.write(Data("hearthd: \(error.message)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        let level = Logger.Level(rawValue: logLevel ?? settings.logLevel) ?? .info
        let format = settings.logFormat
        // The last lines also stay in memory for the web page's log view (GET /api/v1/logs).
        let recentLog = RecentLog(capacity: 500)
        LoggingSystem.bootstrap { label in
            let recent = recentLog.handler(label: label, level: level)
            if format == .text {
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return MultiplexLogHandler([handler, recent])
            }
            var handler = StructuredLogHandler(label: label, format: format)
            handler.logLevel = level
            return MultiplexLogHandler([handler, recent])
        }
        let logger = Logger(label: "hearthd")
        logger.info("starting", metadata: ["config": "\(config)", "abi": "\(HearthPluginABI.version)"])

        let databasePath = settings.databasePath
        let database: HearthDatabase
        let lock: DatabaseLock?
        do {
            lock = check ? nil : try DatabaseLock(database: databasePath, holder: "hearthd")
            database = try HearthDatabase.daemon(path: databasePath)
        } catch {
            logger.critical("cannot open the database: \(error.message)")
            throw ExitCode(74)  // EX_IOERR
        }
        logger.info("database opened", metadata: ["file": "\(databasePath)"])
        if !database.migrationsAppliedOnOpen.isEmpty {
            logger.notice(
                "database schema migrated",
                metadata: ["file": "\(databasePath)", "applied": "\(database.migrationsAppliedOnOpen.joined(separator: ","))"])
        }
        // swift-metrics goes to a Prometheus registry (`/metrics`) before anything makes a metric.
        let metrics: DaemonMetrics? = settings.metrics.enabled ? DaemonMetrics() : nil
        if let metrics { MetricsSystem.bootstrap(metrics.factory) }
        let core = HomeCore(
            store: database, strictOperationValidation: settings.strictOperationValidation,
            logger: Logger(label: "hearth.core"), metrics: HomeMetrics(factory: MetricsSystem.factory))
        var renderMetrics: (@Sendable () -> [UInt8])?
        if let metrics { renderMetrics = { metrics.render(core: core) } }
        do {
            try core.restore()
        } catch {
            logger.critical("cannot load the layout from \(databasePath): \(error)")
            throw ExitCode(74)
        }

        let directories = !pluginDirectories.isEmpty ? pluginDirectories
            : settings.plugins.directories.isEmpty ? Self.defaultPluginDirectories() : settings.plugins.directories
        let plan = PluginSetup.plan(
            directories: directories, sections: ExposureSetup.pluginSections(settings.plugins.sections, exposure: settings.exposure), disabled: settings.plugins.disabled, core: core,
            clock: ContinuousClock(), includeTestFixtures: includeTestFixtures, logger: Logger(label: "hearth.plugin"))
        // `plan.registry.statusProvider` lists every plugin, refused ones included (`hearth plugins`).
        var services: [any Service] = plan.services
        // Scenes and automations (`scenes:`, `automations:`): a broken entry is not loaded.
        let broker = check ? nil : AutomationBroker.make(settings.plugins, logger: Logger(label: "hearth.automations"))
        if let broker { services.append(broker) }
        let automations = try await AutomationSetup.make(settings.home, file: config, database: database, core: core, broker: broker, logger: logger)
        if check {
            for e in automations.errors { FileHandle.standardError.write(Data("hearthd: \(e)\n".utf8)) }
            // Pending is not an error: the devices may come from a plugin that has not run yet.
            for p in automations.pending { FileHandle.standardError.write(Data("hearthd: \(p)\n".utf8)) }
            // Check each plugin's section as it would be checked before starting.
            var problems = 0
            for service in plan.services {
                do {
                    var plugin = service.loaded.plugin
                    if plugin is IsolatedPlugin {
                        // A .so is checked in this process too; a program checks its own at start.
                        guard service.loaded.path.hasSuffix(".so") else { continue }
                        plugin = try PluginLoader.load(service.loaded.path).plugin
                    }
                    try plugin.checkConfiguration(service.configuration)
                } catch {
                    problems += 1
                    FileHandle.standardError.write(Data("hearthd: \((error as? HomeError)?.message ?? "\(error)")\n".utf8))
                }
            }
            let statuses = plan.registry.statuses()
            for s in statuses where s.isFailed {
                problems += 1
                FileHandle.standardError.write(Data("hearthd: \(s.lastError ?? s.path)\n".utf8))
            }
            logger.info("configuration and plugins checked", metadata: ["plugins": "\(statuses.count)", "problems": "\(problems)"])
            problems += automations.errors.count
            if problems > 0 { throw ExitCode(78) }
            return
        }
        services.append(ChangeLogger(home: core.home(for: .system), logger: Logger(label: "hearth.observer")))
        services.append(AutomationService(engine: automations.engine))
        let reloader = ConfigReloadService(file: config, scenes: automations.scenes, engine: automations.engine, logger: logger)
        services.append(reloader)
        // `POST /automations/reload` (`hearth reload`) runs the same reload and answers with its outcome.
        await reloader.answerAPI()
        // Last-seen times move in memory on every report; saved every interval and at shutdown.
        let lastSeen = LastSeenSaver(
            core: core, database: database, interval: .seconds(settings.lastSeenInterval), clock: ContinuousClock(),
            logger: Logger(label: "hearth.storage"))
        services.append(LastSeenService(saver: lastSeen))
        // Code touched only while starting leaves the resident set (it stays in the page cache).
        services.append(ResidentCodeService(clock: ContinuousClock(), logger: Logger(label: "hearth.memory")))
        var restorePlan: [DeviceID: Bool] = [:]
        do {
            restorePlan = try database.restorePlan()
        } catch {
            logger.error("cannot read the restore-on-start settings; outputs are left as they start: \(error.message)")
        }
        if !restorePlan.isEmpty {
            services.append(
                RestoreService(restorer: OutputRestorer(core: core, plan: restorePlan, logger: Logger(label: "hearth.restore"))))
        }
        // What leaves the house (`exposure:`): the shared policy, then each door that is on.
        let exposure = try ExposureSetup.settings(settings.exposure, database: database, core: core, logger: logger)
        services += ExposureSetup.services(settings.exposure, settings: exposure, core: core)
        let hap = settings.hap.enabled ? try HAPSetup.bridge(settings, exposure: exposure, core: core, logger: logger) : nil
        if let hap { services.append(hap) }
        let matter = settings.matter.enabled ? try MatterSetup.bridge(settings, exposure: exposure, database: database, core: core, logger: logger) : nil
        if let matter { services.append(matter) }
        if let server = settings.server {
            services.append(
                try APIServer.make(
                    server, database: database, core: core, pluginStatuses: { plan.registry.statuses().map(\.wire) }, logger: logger,
                    recentLog: recentLog, metrics: renderMetrics, exposure: exposure, scenes: automations.scenes,
                    automations: automations.engine, hap: hap.map(HAPAdmin.init),
                    matter: matter.map { MatterAdmin(service: $0.bridge) }))
        }
        if let renderMetrics, let host = settings.metrics.host, let port = settings.metrics.port {
            // Once bound, the listener is close-on-exec (see `InheritedDescriptors`), like the API's.
            services.append(
                MetricsServer(
                    host: host, port: port, limits: settings.server?.connectionLimits ?? ConnectionLimits(),
                    onListening: { _ in InheritedDescriptors.markCloseOnExec() }, render: renderMetrics))
        }

        // Last, so READY=1 goes out after everything above was handed to the group.
        services.append(
            SystemdNotifyService(notifier: SystemdNotifier(), watchdog: SystemdNotifier.watchdogInterval(), logger: logger))

        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        // Services stop in reverse start order; past this deadline the rest are cancelled (an
        // isolated plugin's process gets 5 s after `stop`, then SIGKILL).
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfiguration)
        try await group.run()
        // What moved after the saver stopped (plugins stop after it, in reverse start order).
        do {
            try lastSeen.save()
        } catch {
            logger.error("could not save when devices were last seen: \(error.message)")
        }
        // Registry rows the plugins' last steps queued (written together, see `persist`).
        do {
            try database.flushDriverRows()
        } catch {
            logger.error("could not save the device registry: \(error.message)")
        }
        withExtendedLifetime(lock) {}
        logger.info("stopped")
    }

    /// Next to the binary, the install tree's plugin folder, then the system's.
    static func defaultPluginDirectories() -> [String] {
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let dir = exe.deletingLastPathComponent()
        return [
            dir.path,
            dir.deletingLastPathComponent().appendingPathComponent("lib/hearth/plugins").path,
            "/usr/lib/hearth/plugins",
        ]
    }
}
