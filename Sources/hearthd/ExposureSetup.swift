import DriverAPI
import HearthConfiguration
import HomeModel
import HomeCore
import HomeStorage
import Logging
import MQTTExport
import ServiceLifecycle

/// `exposure:` in hearth.yaml → the shared exposure settings and the doors' services.
enum ExposureSetup {
    static func settings(_ config: HearthConfig.Exposure, database: HearthDatabase, core: HomeCore, logger: Logger) throws -> ExposureSettings {
        let d = config.devices
        let (policy, unknown) = ExposurePolicy.resolving(
            rooms: d.rooms, deviceTypes: d.deviceTypes, devices: d.ids, excludedRooms: d.excludedRooms,
            excludedDeviceTypes: d.excludedDeviceTypes, excludedDevices: d.excludedIDs, includeSensitive: d.includeSensitive,
            allowControl: d.allowControl, state: core.state, catalog: core.catalog)
        for name in unknown { logger.warning("exposure.devices: \(name) matches nothing; it is ignored") }
        let settings = try ExposureSettings(configured: policy, store: database.exposureStore(), doors: config.mqtt == nil ? [] : ["mqtt"])
        if settings.source == .admin { logger.info("exposure: an admin's saved policy applies (hearth exposure reset returns to hearth.yaml's)") }
        return settings
    }

    static func services(_ config: HearthConfig.Exposure, settings: ExposureSettings, core: HomeCore) -> [any Service] {
        guard let m = config.mqtt else { return [] }
        return [
            MQTTExporter(
                core: core, settings: settings,
                configuration: .init(
                    host: m.host, port: m.port, prefix: m.prefix, nodeID: m.nodeID, baseTopic: m.baseTopic, username: m.username,
                    password: m.password, clientID: m.clientID, keepAlive: m.keepAlive, importPlugins: Set(m.importPlugins),
                    reexportImported: m.reexportImported))
        ]
    }
}

extension ExposureSetup {
    /// The plugin sections with this Hearth's export node added to `discovery.ignoreNodes` of
    /// each importing plugin, so a Hearth never imports the devices it exports.
    static func pluginSections(_ sections: [String: PluginConfiguration], exposure: HearthConfig.Exposure) -> [String: PluginConfiguration] {
        guard let m = exposure.mqtt else { return sections }
        var out = sections
        for plugin in m.importPlugins {
            guard let section = sections[plugin], case .object(var top) = section.value else { continue }
            var discovery = top["discovery"]?.objectValue ?? [:]
            var nodes = discovery["ignoreNodes"]?.listValue ?? []
            if !nodes.contains(.string(m.nodeID)) { nodes.append(.string(m.nodeID)) }
            discovery["ignoreNodes"] = .list(nodes)
            top["discovery"] = .object(discovery)
            out[plugin] = PluginConfiguration(value: .object(top), file: section.file, keyPath: section.keyPath, lines: section.lines)
        }
        return out
    }
}
