import ArgumentParser
import DriverAPI
import Foundation
import HomeCore
import HomeModel
import Logging
import PluginHost
import ServiceLifecycle
import UnixSignals

@main
struct Hearthd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearthd",
        abstract: "Hearth: bridges GPIO and MQTT hardware into one home model.")

    @Option(name: .shortAndLong, help: "The configuration file.")
    var config: String = "etc/hearth.yaml"

    @Option(help: "Log level (overrides the file): trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?

    @Flag(help: "Check the configuration and the plugins, then exit.")
    var check = false

    func run() async throws {
        let settings: HearthConfig
        do {
            settings = try HearthConfig.load(path: config)
        } catch {
            FileHandle.standardError.write(Data("hearthd: \(error.message)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        let level = Logger.Level(rawValue: logLevel ?? settings.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "hearthd")
        logger.info("starting", metadata: ["config": "\(config)", "abi": "\(HearthPluginABI.version)"])

        let core = HomeCore(
            strictOperationValidation: settings.strictOperationValidation, logger: Logger(label: "hearth.core"))
        try core.restore()

        let directories = settings.plugins.directories.isEmpty ? Self.defaultPluginDirectories() : settings.plugins.directories
        let (loaded, rejected) = PluginLoader.loadAll(from: directories)
        for r in rejected {
            logger.error("plugin refused: \(r.message)", metadata: ["file": "\(r.path)", "reason": "\(r.reason.rawValue)"])
        }
        let pluginLogger = Logger(label: "hearth.plugin")
        var services: [any Service] = []
        var statuses: [@Sendable () -> PluginStatus] = []
        for p in loaded {
            if settings.plugins.disabled.contains(p.manifest.id) {
                logger.info("plugin disabled in the configuration", metadata: ["plugin": "\(p.manifest.id)"])
                continue
            }
            logger.info("plugin loaded", metadata: ["plugin": "\(p.manifest.id)", "file": "\(p.path)"])
            let section = settings.plugins.sections[p.manifest.id]
                ?? PluginConfiguration(file: settings.file, keyPath: "plugins.\(p.manifest.id)")
            let service = PluginService(p, core: core, configuration: section, clock: ContinuousClock(), logger: pluginLogger)
            statuses.append { service.currentStatus }
            services.append(service)
        }
        for id in settings.plugins.sections.keys.sorted() where !loaded.contains(where: { $0.manifest.id == id }) {
            logger.warning(
                "the configuration has a section for plugin '\(id)', but no such plugin was found",
                metadata: ["directories": "\(directories.joined(separator: ":"))"])
        }
        if check {
            logger.info("configuration and plugins checked", metadata: ["plugins": "\(loaded.count)", "refused": "\(rejected.count)"])
            return
        }
        services.append(ChangeLogger(home: core.home(for: .system), logger: Logger(label: "hearth.observer")))
        if let server = settings.server {
            let pluginStatuses = statuses
            services.append(
                try APIServer.make(server, database: settings.database, core: core, pluginStatuses: { pluginStatuses.map { $0() } }, logger: logger))
        }

        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
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
