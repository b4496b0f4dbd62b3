public import DriverAPI
public import HomeCore
public import HomeModel
public import Logging
import Foundation

/// The host's own keys inside a plugin's section of `hearth.yaml`; the plugin never sees them.
///
/// ```yaml
/// plugins:
///   gpio:
///     isolated: true              # run the .so in its own process
///   weather:
///     executable: plugins/weather.py   # a plugin written in another language (always isolated)
///     helloTimeout: 60                 # seconds its process may take to say hello (default 30)
///     pingInterval: 15                 # seconds between liveness pings (default 15)
///     pingTimeout: 10                  # seconds a ping may go unanswered before a restart (default 10)
/// ```
public struct PluginHostOptions: Hashable, Sendable {
    public var isolated = false
    /// The program of a plugin that is not a `.so` (relative paths: relative to the config file).
    public var executable: String?
    /// How long an isolated plugin's process may take to say `hello` (nil: ``IsolatedPlugin/defaultHelloTimeout``).
    public var helloTimeout: Duration?
    /// How often an isolated plugin's process is pinged (nil: ``IsolatedPlugin/defaultPingInterval``).
    public var pingInterval: Duration?
    /// How long a ping may go unanswered before the process is killed and restarted
    /// (nil: ``IsolatedPlugin/defaultPingTimeout``).
    public var pingTimeout: Duration?

    public static let keys: Set<String> = ["isolated", "executable", "helloTimeout", "pingInterval", "pingTimeout"]

    public init(
        isolated: Bool = false, executable: String? = nil, helloTimeout: Duration? = nil, pingInterval: Duration? = nil,
        pingTimeout: Duration? = nil
    ) {
        self.isolated = isolated
        self.executable = executable
        self.helloTimeout = helloTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
    }

    /// An isolated plugin with these options.
    func isolatedPlugin(
        manifest: PluginManifest, launch: ChildLaunch,
        declareVendorTraits: @escaping @Sendable ([TraitDescriptor]) throws(HomeError) -> Void = { _ in }
    ) -> IsolatedPlugin {
        IsolatedPlugin(
            manifest: manifest, launch: launch, helloTimeout: helloTimeout ?? IsolatedPlugin.defaultHelloTimeout,
            pingInterval: pingInterval ?? IsolatedPlugin.defaultPingInterval, pingTimeout: pingTimeout ?? IsolatedPlugin.defaultPingTimeout,
            declareVendorTraits: declareVendorTraits)
    }

    /// A duration key in seconds (more than 0, at most a day), removed from `object`.
    static func seconds(_ key: String, from object: inout [String: Value], in section: PluginConfiguration) throws(HomeError) -> Duration? {
        guard let v = object.removeValue(forKey: key) else { return nil }
        guard let seconds = v.doubleValue, seconds > 0, seconds <= 86_400 else {
            throw .invalidArgument(section.problem(at: key, "expected a number of seconds, more than 0 and at most 86400"))
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Takes the host's keys out of a section.
    ///
    /// - Throws: ``HomeError`` `invalidArgument` naming the file, line and key.
    public static func split(_ section: PluginConfiguration) throws(HomeError) -> (PluginHostOptions, PluginConfiguration) {
        var options = PluginHostOptions()
        var object = section.value.objectValue ?? [:]
        if let v = object.removeValue(forKey: "isolated") {
            guard let b = v.boolValue else { throw .invalidArgument(section.problem(at: "isolated", "expected true or false")) }
            options.isolated = b
        }
        if let v = object.removeValue(forKey: "executable") {
            guard let s = v.stringValue, !s.isEmpty else {
                throw .invalidArgument(section.problem(at: "executable", "expected the path of the plugin's program"))
            }
            let base = (section.file as NSString).deletingLastPathComponent
            options.executable = s.hasPrefix("/") ? s : (base as NSString).appendingPathComponent(s)
            options.isolated = true
        }
        options.helloTimeout = try seconds("helloTimeout", from: &object, in: section)
        options.pingInterval = try seconds("pingInterval", from: &object, in: section)
        options.pingTimeout = try seconds("pingTimeout", from: &object, in: section)
        let lines = section.lines.filter { key, _ in !keys.contains(where: { key == $0 || key.hasPrefix($0 + ".") || key.hasPrefix($0 + "[") }) }
        return (options, PluginConfiguration(value: .object(object), file: section.file, keyPath: section.keyPath, lines: lines))
    }
}

/// Turns the plugin directories and the configuration into one service per plugin, and a
/// registry that lists them all with the files that were refused.
public enum PluginSetup {
    /// What to run.
    public struct Plan<C: Clock>: Sendable where C.Duration == Duration {
        /// In start order (the order the files were found, then programs by plugin ID).
        public var services: [PluginService<C>]
        public var registry: PluginRegistry
    }

    /// Loads the plugins of `directories` and plans their services.
    ///
    /// Each problem is logged once, naming the file or key, and the rest go on: a refused file,
    /// a duplicate plugin ID, a bad host option in a section.
    ///
    /// - Parameters:
    ///   - sections: each plugin's section of `hearth.yaml` by plugin ID.
    ///   - disabled: plugin IDs switched off with `enabled: false`.
    ///   - hearthd: the program started for isolated `.so` plugins (default: this process's own).
    ///   - includeTestFixtures: load the test fixture plugins too (tests only).
    public static func plan<C: Clock>(
        directories: [String], sections: [String: PluginConfiguration], disabled: Set<String> = [], core: HomeCore,
        policy: RestartPolicy = RestartPolicy(), clock: C, hearthd: String = ChildLaunch.currentExecutable,
        childEnvironment: [String: String] = [:], includeTestFixtures: Bool = false, logger: Logger
    ) -> Plan<C> where C.Duration == Duration {
        let registry = PluginRegistry()
        var services: [PluginService<C>] = []
        let (loaded, rejected) = PluginLoader.loadAll(from: directories, includeTestFixtures: includeTestFixtures)
        for r in rejected {
            var metadata: Logger.Metadata = ["file": "\(r.path)", "reason": "\(r.reason.rawValue)"]
            if let id = r.pluginID { metadata["plugin"] = "\(id)" }
            logger.error("plugin refused: \(r.message)", metadata: metadata)
            registry.add(refused: r)
        }
        func section(_ id: String) -> PluginConfiguration {
            sections[id] ?? PluginConfiguration(file: sections.values.first?.file ?? "hearth.yaml", keyPath: "plugins.\(id)")
        }
        func add(_ plugin: LoadedPlugin, _ configuration: PluginConfiguration) {
            let service = PluginService(plugin, core: core, configuration: configuration, policy: policy, clock: clock, logger: logger)
            services.append(service)
            registry.add(service)
        }
        var ids = Set<String>()
        for p in loaded {
            ids.insert(p.manifest.id)
            let manifest = p.manifest
            if disabled.contains(manifest.id) {
                logger.info("plugin disabled in the configuration", metadata: ["plugin": "\(manifest.id)", "file": "\(p.path)"])
                registry.add(PluginStatus(id: manifest.id, name: manifest.name, version: manifest.version, path: p.path, state: .disabled))
                continue
            }
            let options: PluginHostOptions
            let configuration: PluginConfiguration
            do throws(HomeError) {
                (options, configuration) = try PluginHostOptions.split(section(manifest.id))
            } catch {
                logger.error("plugin not started: \(error.message)", metadata: ["plugin": "\(manifest.id)"])
                registry.add(
                    PluginStatus(
                        id: manifest.id, name: manifest.name, version: manifest.version, path: p.path, state: .invalidConfiguration,
                        lastError: error.message))
                continue
            }
            do throws(HomeError) {
                // Before anything runs: devices and clients find the plugin's traits in the catalogue.
                try core.addVendorTraits(p.plugin.vendorTraits, from: manifest.id)
            } catch {
                logger.error("plugin refused: \(error.message)", metadata: ["plugin": "\(manifest.id)", "file": "\(p.path)"])
                registry.add(
                    PluginStatus(
                        id: manifest.id, name: manifest.name, version: manifest.version, path: p.path, state: .refused,
                        lastError: error.message))
                continue
            }
            if let program = options.executable {
                let message = section(manifest.id).problem(
                    at: "executable", "plugin '\(manifest.id)' is already loaded from \(p.path); remove 'executable' or the file")
                logger.error("plugin program refused: \(message)", metadata: ["plugin": "\(manifest.id)"])
                registry.add(PluginStatus(id: manifest.id, name: manifest.id, version: "", path: program, state: .refused, lastError: message))
            }
            if options.isolated {
                let absolute = URL(fileURLWithPath: p.path).standardizedFileURL.path
                let launch = ChildLaunch.pluginHost(hearthd: hearthd, plugin: absolute, environment: childEnvironment)
                logger.info("plugin loaded; it runs in its own process", metadata: ["plugin": "\(manifest.id)", "file": "\(p.path)"])
                let plugin = options.isolatedPlugin(manifest: manifest, launch: launch)
                add(LoadedPlugin(path: p.path, manifest: manifest, plugin: plugin), configuration)
            } else {
                logger.info("plugin loaded", metadata: ["plugin": "\(manifest.id)", "file": "\(p.path)"])
                add(p, configuration)
            }
        }
        // Plugins that are programs of their own (any language), named by their section.
        for id in sections.keys.sorted() where !ids.contains(id) {
            guard let options = try? PluginHostOptions.split(sections[id]!) else { continue }
            guard let program = options.0.executable else {
                logger.warning(
                    "the configuration has a section for plugin '\(id)', but no such plugin was found",
                    metadata: ["plugin": "\(id)", "directories": "\(directories.joined(separator: ":"))"])
                continue
            }
            if disabled.contains(id) {
                registry.add(PluginStatus(id: id, name: id, version: "", path: program, state: .disabled, isolated: true))
                continue
            }
            guard FileManager.default.isExecutableFile(atPath: program) else {
                let message = sections[id]!.problem(at: "executable", "\(program) is missing or not executable")
                logger.error("plugin refused: \(message)", metadata: ["plugin": "\(id)"])
                registry.add(PluginStatus(id: id, name: id, version: "", path: program, state: .refused, lastError: message, isolated: true))
                continue
            }
            let manifest = PluginManifest(id: id, name: id, version: "")
            let launch = ChildLaunch.program(program, environment: childEnvironment)
            logger.info("plugin program found; it runs in its own process", metadata: ["plugin": "\(id)", "file": "\(program)"])
            // A program declares its vendor traits in its hello (a `.so` when it is loaded).
            let plugin = options.0.isolatedPlugin(manifest: manifest, launch: launch) { traits throws(HomeError) in
                try core.addVendorTraits(traits, from: id)
            }
            add(LoadedPlugin(path: program, manifest: manifest, plugin: plugin), options.1)
        }
        return Plan(services: services, registry: registry)
    }
}
