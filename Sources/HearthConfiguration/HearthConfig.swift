public import DriverAPI
import Foundation
public import HomeModel
import Yams

/// `hearth.yaml`, read with its line numbers so every error names the line and key.
public struct HearthConfig: Sendable {
    public struct Plugins: Sendable {
        /// Where `.so` files are looked for, in order.
        public var directories: [String]
        /// Each plugin's section by plugin ID (`plugins.gpio`, `plugins.mqtt`, …).
        public var sections: [String: PluginConfiguration]
        /// Plugins switched off with `enabled: false`.
        public var disabled: Set<String>
    }

    /// The API server (`server:`); nil when the file has no `server` section.
    public struct Server: Sendable {
        public var host: String
        public var port: Int
        /// Where the access database (unless `storage.database` names one) and the one-time
        /// setup code live.
        public var stateDirectory: String
        /// The web page's folder (`server.web`); nil: the copy beside the binary.
        public var web: String? = nil
        /// `server.headerTimeout`, `server.idleTimeout` (seconds) and `server.maxConnections`
        /// (per listener, also the metrics one); nil: the server's defaults.
        public var headerTimeout: Double? = nil
        public var idleTimeout: Double? = nil
        public var maxConnections: Int? = nil
    }

    /// Prometheus metrics (`metrics:`): on by default at the API's `/metrics` for admins;
    /// `metrics.listen` also serves them on a separate address without sign-in.
    public struct Metrics: Sendable {
        public var enabled = true
        public var host: String?
        public var port: Int?
    }

    public var file: String
    public var logLevel: String
    public var logFormat: LogFormat = .text
    public var strictOperationValidation: Bool
    /// `storage.database` as written (made absolute); ``databasePath`` applies the default.
    public var database: String?
    /// `storage.lastSeenInterval`: how often, in seconds, hearthd saves when devices were last
    /// seen (also at shutdown).
    public var lastSeenInterval: Int = 60
    public var plugins: Plugins
    public var server: Server?
    public var metrics = Metrics()
    /// `exposure:`: which devices leave the house and through which doors (off by default).
    public var exposure = Exposure()
    /// `scenes:`, `automations:` and `location:` (read by HomeAutomation's `AutomationConfig`).
    public var home = HomeSection()
    /// `hap:`: the HomeKit bridge (off by default).
    public var hap = HAP()
    /// `matter:`: the Matter bridge (off by default).
    public var matter = Matter()

    public static let topLevelKeys: Set<String> = ["log", "core", "storage", "plugins", "server", "metrics", "exposure", "scenes", "automations", "location", "hap", "matter"]

    /// Reads and checks the file.
    ///
    /// - Throws: ``HomeError`` `invalidArgument`: `hearth.yaml:12: plugins.directories: expected a list`.
    public static func load(path: String) throws(HomeError) -> HearthConfig {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw .invalidArgument("\(path): cannot read the configuration file")
        }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws(HomeError) -> HearthConfig {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw .invalidArgument("\(file): not valid YAML: \(error)")
        } catch {
            throw .invalidArgument("\(file): not valid YAML: \(error)")
        }
        var lines: [String: Int] = [:]
        let root = node.map { toValue($0, path: "", lines: &lines) } ?? .object([:])
        func problem(_ path: String, _ message: String) -> HomeError {
            .invalidArgument("\(file)\(lines[path].map { ":\($0)" } ?? ""): \(path): \(message)")
        }
        guard let top = root.objectValue else { throw .invalidArgument("\(file): the top level must be a mapping of keys") }
        for key in top.keys.sorted() where !topLevelKeys.contains(key) {
            throw problem(key, "unknown key (known: \(topLevelKeys.sorted().joined(separator: ", ")))")
        }
        let baseDir = (file as NSString).deletingLastPathComponent

        var logLevel = "info"
        var logFormat = LogFormat.text
        if let log = top["log"] {
            guard log["level"] != nil || log["format"] != nil else { throw problem("log", "expected a mapping with 'level' and/or 'format'") }
            if let level = log["level"] {
                guard let s = level.stringValue, LogLevel(rawValue: s) != nil else {
                    throw problem("log.level", "must be one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                logLevel = s
            }
            if let format = log["format"] {
                guard let s = format.stringValue, let f = LogFormat(rawValue: s) else {
                    throw problem("log.format", "must be one of \(LogFormat.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                logFormat = f
            }
        }
        var strict = true
        if let core = top["core"], let v = core["strictOperationValidation"] {
            guard let b = v.boolValue else { throw problem("core.strictOperationValidation", "expected true or false") }
            strict = b
        }
        var database: String?
        var lastSeenInterval = 60
        if let storage = top["storage"], let db = storage["database"] {
            guard let s = db.stringValue else { throw problem("storage.database", "expected a file path") }
            database = s.hasPrefix("/") ? s : (baseDir as NSString).appendingPathComponent(s)
        }
        if let storage = top["storage"], let interval = storage["lastSeenInterval"] {
            guard let seconds = interval.intValue, seconds >= 1, seconds <= 86_400 else {
                throw problem("storage.lastSeenInterval", "expected a whole number of seconds from 1 to 86400 (got \(interval))")
            }
            lastSeenInterval = Int(seconds)
        }

        var server: Server?
        if let s = top["server"] {
            guard let map = s.objectValue else { throw problem("server", "expected a mapping with 'listen' (e.g. listen: 127.0.0.1:8080)") }
            let serverKeys = ["headerTimeout", "idleTimeout", "listen", "maxConnections", "stateDirectory", "web"]
            for key in map.keys.sorted() where !serverKeys.contains(key) {
                throw problem("server.\(key)", "unknown key (known: \(serverKeys.joined(separator: ", ")))")
            }
            var host = "127.0.0.1"
            var port = 8080
            if let listen = map["listen"] {
                guard let text = listen.stringValue ?? listen.intValue.map({ "127.0.0.1:\($0)" }),
                    let parsed = parseListen(text)
                else { throw problem("server.listen", "expected host:port, e.g. 127.0.0.1:8080 or [::1]:8080") }
                (host, port) = parsed
            }
            var state = database.map { ($0 as NSString).deletingLastPathComponent }
                ?? ProcessInfo.processInfo.environment["STATE_DIRECTORY"] ?? "var"
            if let dir = map["stateDirectory"] {
                guard let s = dir.stringValue else { throw problem("server.stateDirectory", "expected a folder path") }
                state = s.hasPrefix("/") ? s : (baseDir as NSString).appendingPathComponent(s)
            }
            var web: String?
            if let w = map["web"] {
                guard let s = w.stringValue else { throw problem("server.web", "expected the folder holding the web page's index.html") }
                web = s.hasPrefix("/") ? s : (baseDir as NSString).appendingPathComponent(s)
            }
            var timeouts: [String: Double] = [:]
            for key in ["headerTimeout", "idleTimeout"] {
                guard let v = map[key] else { continue }
                guard let seconds = v.doubleValue ?? v.intValue.map(Double.init), seconds.isFinite, seconds >= 0.1, seconds <= 86_400 else {
                    throw problem("server.\(key)", "expected seconds from 0.1 to 86400 (got \(v))")
                }
                timeouts[key] = seconds
            }
            var maxConnections: Int?
            if let v = map["maxConnections"] {
                guard let n = v.intValue, n >= 1, n <= 1_000_000 else {
                    throw problem("server.maxConnections", "expected a whole number from 1 to 1000000 (got \(v))")
                }
                maxConnections = Int(n)
            }
            server = Server(
                host: host, port: port, stateDirectory: state, web: web, headerTimeout: timeouts["headerTimeout"],
                idleTimeout: timeouts["idleTimeout"], maxConnections: maxConnections)
        }

        var metrics = Metrics()
        // An empty section (every key commented out, as in etc/hearth.yaml) keeps the defaults.
        if let m = top["metrics"], !m.isNull {
            guard let map = m.objectValue else {
                throw problem("metrics", "expected a mapping with 'enabled' and/or 'listen' (e.g. listen: 127.0.0.1:9464)")
            }
            for key in map.keys.sorted() where !["enabled", "listen"].contains(key) {
                throw problem("metrics.\(key)", "unknown key (known: enabled, listen)")
            }
            if let e = map["enabled"] {
                guard let b = e.boolValue else { throw problem("metrics.enabled", "expected true or false") }
                metrics.enabled = b
            }
            if let listen = map["listen"] {
                guard let text = listen.stringValue, let parsed = parseListen(text) else {
                    throw problem("metrics.listen", "expected host:port, e.g. 127.0.0.1:9464 or [::1]:9464 (got \(listen))")
                }
                (metrics.host, metrics.port) = parsed
            }
        }

        var directories: [String] = []
        var sections: [String: PluginConfiguration] = [:]
        var disabled: Set<String> = []
        if let plugins = top["plugins"] {
            guard let map = plugins.objectValue else { throw problem("plugins", "expected a mapping") }
            for (key, value) in map {
                if key == "directories" {
                    guard let list = value.listValue, list.allSatisfy({ $0.stringValue != nil }) else {
                        throw problem("plugins.directories", "expected a list of folder paths")
                    }
                    directories = list.compactMap(\.stringValue).map {
                        $0.hasPrefix("/") ? $0 : (baseDir as NSString).appendingPathComponent($0)
                    }
                    continue
                }
                guard value.objectValue != nil || value.isNull else {
                    throw problem("plugins.\(key)", "expected the plugin's settings as a mapping")
                }
                var section = value.objectValue ?? [:]
                if let enabled = section.removeValue(forKey: "enabled") {
                    guard let b = enabled.boolValue else { throw problem("plugins.\(key).enabled", "expected true or false") }
                    if !b { disabled.insert(key) }
                }
                let prefix = "plugins.\(key)"
                var sectionLines: [String: Int] = [:]
                for (path, line) in lines where path == prefix || path.hasPrefix(prefix + ".") || path.hasPrefix(prefix + "[") {
                    var rel = String(path.dropFirst(prefix.count))
                    if rel.hasPrefix(".") { rel.removeFirst() }
                    sectionLines[rel] = line
                }
                sections[key] = PluginConfiguration(value: .object(section), file: file, keyPath: prefix, lines: sectionLines)
            }
        }
        var config = HearthConfig(
            file: file, logLevel: logLevel, logFormat: logFormat, strictOperationValidation: strict, database: database,
            lastSeenInterval: lastSeenInterval, plugins: Plugins(directories: directories, sections: sections, disabled: disabled), server: server, metrics: metrics)
        if let e = top["exposure"] { config.exposure = try Exposure.parse(e, problem: problem) }
        config.home = try HomeSection.parse(top, file: file, lines: lines, problem: problem)
        if let h = top["hap"] { config.hap = try HAP.parse(h, baseDir: baseDir, problem: problem) }
        if let m = top["matter"] { config.matter = try Matter.parse(m, baseDir: baseDir, problem: problem) }
        return config
    }

    /// `127.0.0.1:8080`, `[::1]:8080`, `localhost:80` → host and port.
    public static func parseListen(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// Converts a YAML node to a ``Value``, recording each key path's line.
    static func toValue(_ node: Node, path: String, lines: inout [String: Int]) -> Value {
        if let mark = node.mark { lines[path] = mark.line }
        switch node {
        case .mapping(let mapping):
            var object: [String: Value] = [:]
            for (k, v) in mapping {
                let key = k.string ?? "\(k)"
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                if let mark = k.mark { lines[childPath] = mark.line }
                object[key] = toValue(v, path: childPath, lines: &lines)
                if let mark = k.mark { lines[childPath] = mark.line }
            }
            return .object(object)
        case .sequence(let sequence):
            return .list(sequence.enumerated().map { i, n in toValue(n, path: "\(path)[\(i)]", lines: &lines) })
        case .scalar(let scalar):
            // Only what YAML's resolver tags as null, bool, int or float is converted: Yams'
            // `node.int` alone would read `127.0.0.1:9464` as a base-60 number (9464).
            if scalar.style == .plain {
                switch Tag.Name(rawValue: node.tag.description) {
                case .null: return .null
                case .bool: if let b = node.bool { return .bool(b) }
                case .int: if let i = node.int { return .int(Int64(i)) }
                case .float: if let d = node.float { return .double(d) }
                default: break
                }
            }
            return .string(scalar.string)
        }
    }
}
