import Foundation
import HearthAPI
import HearthConfiguration
import HearthServer
import HomeCore
import HomeAutomation
import HomeStorage
import Logging
import PluginHost

/// Builds the API server of `server:` in hearth.yaml: opens the access database, creates the
/// first admin on the first start and hands out its one-time setup code.
enum APIServer {
    static func make(
        _ settings: HearthConfig.Server, database: HearthDatabase, core: HomeCore, pluginStatuses: @escaping @Sendable () -> [WirePlugin],
        logger: Logger, recentLog: RecentLog? = nil, metrics: (@Sendable () -> [UInt8])? = nil, exposure: ExposureSettings? = nil,
        scenes: SceneBook? = nil, automations: AutomationEngine? = nil, hap: (any HAPAdministration)? = nil,
        matter: (any MatterAdministration)? = nil
    ) throws -> HearthServer {
        let fm = FileManager.default
        try fm.createDirectory(atPath: settings.stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Users, tokens and grants live in the same database as the layout (its migrator
        // registered the access tables through `extraMigrations`).
        let access = database.accessStore()
        let codeFile = (settings.stateDirectory as NSString).appendingPathComponent("setup-code")
        if let code = try access.bootstrap() {
            _ = fm.createFile(atPath: codeFile, contents: Data((code + "\n").utf8), attributes: [.posixPermissions: 0o600])
            logger.notice(
                "first start: finish setup with 'hearth setup --url http://\(settings.host):\(settings.port) --code \(code)' (the code is also in \(codeFile); it works once)")
        } else if fm.fileExists(atPath: codeFile) {
            try? fm.removeItem(atPath: codeFile)
        }
        let web = settings.web ?? HearthServer.defaultWebDirectory()
        if let web {
            logger.info("web page served from \(web)")
        } else {
            logger.warning("no web page found beside the binary (Hearth_HearthServer.resources/Web or ../share/hearth/web); set server.web")
        }
        return HearthServer(
            core: core, access: access, configuration: .init(host: settings.host, port: settings.port, webDirectory: web, connections: settings.connectionLimits),
            pluginStatuses: pluginStatuses,
            logger: Logger(label: "hearth.server"), onListening: { _ in InheritedDescriptors.markCloseOnExec() }, recentLog: recentLog,
            metrics: metrics, exposure: exposure, scenes: scenes, automations: automations, hap: hap, matter: matter)
    }
}

extension HearthConfig.Server {
    /// `server.headerTimeout`, `server.idleTimeout` and `server.maxConnections` over the defaults.
    var connectionLimits: ConnectionLimits {
        var limits = ConnectionLimits()
        if let headerTimeout { limits.headerTimeout = .milliseconds(Int64(headerTimeout * 1000)) }
        if let idleTimeout { limits.idleTimeout = .milliseconds(Int64(idleTimeout * 1000)) }
        if let maxConnections { limits.maxConnections = maxConnections }
        return limits
    }
}
