import ArgumentParser
import DriverAPI
import Foundation
import HearthConfiguration
import HomeModel
import PluginHost
#if canImport(Glibc)
import Glibc
#endif

/// One finding of `hearth doctor`.
struct Diagnosis: Sendable, Equatable, Encodable {
    enum Status: String, Sendable, Encodable { case ok, problem, skipped }
    var check: String
    var status: Status
    /// What was found, and for a problem what to do about it, in plain words.
    var explanation: String
}

/// `hearth doctor`: checks the usual reasons Hearth cannot reach its hardware or its data.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the machine for the common problems (GPIO access and lines, broker, plugins, database) and explain them.",
        discussion: """
            Reads hearth.yaml (--config; by default /etc/hearth/hearth.yaml, else ./etc/hearth.yaml as hearthd uses \
            when started from a source folder) for the database, the MQTT broker and its credentials, the plugin folders \
            and the GPIO lines; the flags override what the file says. Exits 1 when it finds a problem. Run it as the \
            user the daemon runs as, or name that user with --user; as root it can also name the process holding a busy line.
            """)

    @Option(name: .shortAndLong, help: "The configuration hearthd uses (default: /etc/hearth/hearth.yaml, else ./etc/hearth.yaml).")
    var config: String?
    @Option(help: "The user the daemon runs as (default: hearth when that user exists, else you).")
    var user: String?
    @Option(help: "The folder with the GPIO character devices.")
    var dev: String = "/dev"
    @Option(help: .hidden) var groupFile: String = "/etc/group"
    @Option(help: .hidden) var passwdFile: String = "/etc/passwd"
    @Option(help: "The MQTT broker to try, host:port (default: plugins.mqtt.broker in the configuration).")
    var broker: String?
    @Option(help: "The broker user name (default: the configuration's).") var brokerUsername: String?
    @Option(help: "The broker password (default: the configuration's).") var brokerPassword: String?
    @Option(help: "The database file the daemon uses (default: the configuration's, else /var/lib/hearth/hearth.sqlite).")
    var database: String?
    @Option(name: .customLong("plugins"), help: "A plugin folder to check (repeatable; default: the configuration's plugins.directories).")
    var pluginDirectories: [String] = []
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let settings = DoctorSettings.read(explicit: config)
        var findings = [settings.finding]
        let accounts = SystemAccounts(groupFile: groupFile, passwdFile: passwdFile)
        let who = user ?? (accounts.primaryGroup(of: "hearth") != nil ? "hearth" : Accounts.currentUser())
        let dirs = !pluginDirectories.isEmpty ? pluginDirectories
            : settings.config.map(\.plugins.directories).flatMap { $0.isEmpty ? nil : $0 } ?? Doctor.defaultPluginDirectories()
        let (loading, plugins) = Doctor.plugins(in: dirs)

        // Each plugin's own checks (DriverPlugin.doctor), given its section of hearth.yaml.
        var asked: Set<String> = []
        for loaded in plugins where asked.insert(loaded.manifest.id).inserted {
            let id = loaded.manifest.id
            if settings.config?.plugins.disabled.contains(id) == true {
                findings.append(Diagnosis(check: "plugin \(id)", status: .skipped, explanation: "disabled (enabled: false) in \(settings.file ?? "hearth.yaml")"))
                continue
            }
            // The host's own keys (isolated, executable, helloTimeout) are not the plugin's. An
            // isolated plugin is asked here in doctor's process too: doctor is a short-lived
            // process of its own, and the checks do not run the plugin.
            var section = settings.config?.plugins.sections[id]
            if let s = section {
                do {
                    section = try PluginHostOptions.split(s).1
                } catch {
                    findings.append(Diagnosis(check: "plugin \(id)", status: .problem, explanation: error.message))
                    continue
                }
            }
            if id == "mqtt" { section = brokerFlags(over: section, file: settings.file) }
            let request = DoctorRequest(
                configuration: section, configurationFile: settings.config == nil ? nil : settings.file, user: who, deviceDirectory: dev,
                accounts: accounts)
            findings += await loaded.plugin.doctor(request).map(Diagnosis.init)
        }
        // A configured plugin doctor could not ask: its file is not in the plugin folders.
        for (id, section) in (settings.config?.plugins.sections ?? [:]).sorted(by: { $0.key < $1.key }) where !asked.contains(id) {
            // Disabled plugins, and plugins written in another language (a program, not a .so), are not asked.
            if settings.config?.plugins.disabled.contains(id) == true || section.value["executable"] != nil { continue }
            findings.append(
                Diagnosis(
                    check: "plugin \(id)", status: .problem,
                    explanation: "\(settings.file ?? "hearth.yaml") configures plugin '\(id)', but no plugin with that ID loads from "
                        + "\(dirs.joined(separator: ", ")): hearthd will not run it, and its own checks were not made"))
        }
        // --broker names a broker to try, but the MQTT plugin makes that check.
        if (broker != nil || brokerUsername != nil || brokerPassword != nil) && !asked.contains("mqtt") {
            findings.append(
                Diagnosis(
                    check: "mqtt broker", status: .skipped,
                    explanation: "not checked: the MQTT plugin, which makes this check, does not load from \(dirs.joined(separator: ", "))"))
        }
        findings += loading
        findings.append(Doctor.database(database ?? settings.config?.databasePath ?? "/var/lib/hearth/hearth.sqlite"))

        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(findings), as: UTF8.self))
        } else {
            for f in findings {
                let mark = switch f.status {
                case .ok: "ok     "
                case .problem: "PROBLEM"
                case .skipped: "skipped"
                }
                print("\(mark)  \(f.check): \(f.explanation)")
            }
        }
        if findings.contains(where: { $0.status == .problem }) { throw ExitCode(1) }
    }
}

extension DoctorCommand {
    /// The MQTT plugin's section with `--broker`, `--broker-username` and `--broker-password`
    /// in place of the file's (a `--broker` is tried without TLS).
    func brokerFlags(over section: PluginConfiguration?, file: String?) -> PluginConfiguration? {
        guard broker != nil || brokerUsername != nil || brokerPassword != nil else { return section }
        var value = section?.value.objectValue ?? [:]
        var b = value["broker"]?.objectValue ?? [:]
        if let broker {
            if let colon = broker.lastIndex(of: ":"), let port = Int(broker[broker.index(after: colon)...]) {
                b["host"] = .string(String(broker[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")))
                b["port"] = .int(Int64(port))
            } else {
                b["host"] = .string(broker)
            }
            for key in ["caFile", "certFile", "keyFile"] { b[key] = nil }
        }
        if let brokerUsername { b["username"] = .string(brokerUsername) }
        if let brokerPassword { b["password"] = .string(brokerPassword) }
        value["broker"] = .object(b)
        return PluginConfiguration(
            value: .object(value), file: section?.file ?? file ?? "hearth.yaml", keyPath: section?.keyPath ?? "plugins.mqtt",
            lines: section?.lines ?? [:])
    }
}

extension Diagnosis {
    init(_ finding: DoctorFinding) {
        let status: Status =
            switch finding.status {
            case .ok: .ok
            case .problem: .problem
            case .skipped: .skipped
            }
        self.init(check: finding.check, status: status, explanation: finding.explanation)
    }
}

/// Who runs doctor (the default for `--user` when there is no `hearth` user).
enum Accounts {
    static func currentUser() -> String {
        if let pw = getpwuid(geteuid()), let name = pw.pointee.pw_name { return String(cString: name) }
        return "\(geteuid())"
    }
}

enum Doctor {
    // MARK: Plugins

    static func defaultPluginDirectories() -> [String] {
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        return [exe.deletingLastPathComponent().appendingPathComponent("lib/hearth/plugins").path, "/usr/lib/hearth/plugins"]
    }

    /// Loads every `.so` in `directories`: a finding for each, and the plugins that loaded.
    static func plugins(in directories: [String]) -> ([Diagnosis], [LoadedPlugin]) {
        var findings: [Diagnosis] = []
        var plugins: [LoadedPlugin] = []
        var seen = 0
        for dir in directories {
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            for file in files.sorted() where file.hasSuffix(".so") {
                let path = (dir as NSString).appendingPathComponent(file)
                seen += 1
                do {
                    let loaded = try PluginLoader.load(path)
                    plugins.append(loaded)
                    findings.append(
                        Diagnosis(check: "plugin \(file)", status: .ok, explanation: "\(loaded.manifest.id) \(loaded.manifest.version) loads"))
                } catch {
                    let advice: String
                    switch error.reason {
                    case .abiMismatch, .compilerMismatch:
                        advice = "it was built for another plugin ABI or compiler than this Hearth (ABI \(HearthPluginABI.version)): "
                            + "rebuild it against this release's PluginKit, or install the matching Hearth"
                    case .notELF, .dlopenFailed:
                        advice = "it is not a loadable library for this machine (another CPU, or a missing dependency)"
                    case .missingSymbol:
                        advice = "it is not a Hearth plugin (it exports no hearth_plugin_* entry points)"
                    default:
                        advice = "it cannot be used"
                    }
                    findings.append(Diagnosis(check: "plugin \(file)", status: .problem, explanation: "\(error.message); \(advice)"))
                }
            }
        }
        if seen == 0 {
            findings.append(
                Diagnosis(check: "plugins", status: .problem, explanation: "no plugin .so in \(directories.joined(separator: ", "))"))
        }
        return (findings, plugins)
    }

    // MARK: Database

    static func database(_ path: String) -> Diagnosis {
        let check = "database"
        let folder = (path as NSString).deletingLastPathComponent
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir) else {
            return Diagnosis(
                check: check, status: .problem,
                explanation: "the folder \(folder) for \(path) does not exist: create it, owned by the daemon's user "
                    + "(systemd's StateDirectory=hearth does this for the service)")
        }
        guard isDir.boolValue else {
            return Diagnosis(check: check, status: .problem, explanation: "\(folder) is a file, not a folder, so \(path) cannot be created there")
        }
        // SQLite writes the file and, beside it, its -wal and -shm files: both must be writable.
        if FileManager.default.fileExists(atPath: path) {
            let fd = open(path, O_RDWR | O_CLOEXEC)
            if fd < 0 {
                return Diagnosis(
                    check: check, status: .problem,
                    explanation: "cannot write \(path) (\(String(cString: strerror(errno)))): give it to the daemon's user (sudo chown hearth: \(path))")
            }
            close(fd)
        }
        let probe = (folder as NSString).appendingPathComponent(".hearth-doctor-\(getpid())")
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            return Diagnosis(
                check: check, status: .problem,
                explanation: "cannot create files in \(folder) (\(String(cString: strerror(errno)))); SQLite needs that for its journal: "
                    + "give the folder to the daemon's user")
        }
        close(fd)
        unlink(probe)
        return Diagnosis(check: check, status: .ok, explanation: "\(path) is writable")
    }
}
