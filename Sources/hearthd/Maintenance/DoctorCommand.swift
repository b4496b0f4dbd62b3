import ArgumentParser
import DriverAPI
import Foundation
import GPIOKit
import HearthConfiguration
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
        let accounts = Accounts(groupFile: groupFile, passwdFile: passwdFile)
        let who = user ?? (accounts.primaryGroup(of: "hearth") != nil ? "hearth" : Accounts.currentUser())
        let gpio = settings.gpio
        if gpio.realChipsUnneeded {
            let why = "not needed: \(settings.file ?? "the configuration") asks for no real GPIO chip"
            findings += [
                Diagnosis(check: "gpio group", status: .skipped, explanation: why),
                Diagnosis(check: "gpio chips", status: .skipped, explanation: why),
            ]
        } else {
            findings += [Doctor.gpioGroup(user: who, accounts: accounts), Doctor.gpioChips(dev: dev)]
            // Which libgpiod the plugin will load (v2 or v1) and the kernel's GPIO uAPI.
            let library = GPIOLibrary.doctorReport(dev: dev)
            findings.append(Diagnosis(check: "gpio library", status: library.isProblem ? .problem : .ok, explanation: library.explanation))
        }
        findings += Doctor.gpioLines(gpio, dev: dev)

        let mqtt = settings.broker
        if let address = broker ?? mqtt?.address {
            findings.append(
                Doctor.broker(
                    address, username: brokerUsername ?? mqtt?.username, password: brokerPassword ?? mqtt?.password,
                    tls: broker == nil && mqtt?.tls == true))
        } else {
            findings.append(
                Diagnosis(
                    check: "mqtt broker", status: .skipped,
                    explanation: settings.config == nil
                        ? "not checked: pass --broker host:port (or --config hearth.yaml)"
                        : "not checked: the mqtt plugin is not configured in \(settings.file ?? "hearth.yaml") (or --broker host:port)"))
        }
        let dirs = !pluginDirectories.isEmpty ? pluginDirectories
            : settings.config.map(\.plugins.directories).flatMap { $0.isEmpty ? nil : $0 } ?? Doctor.defaultPluginDirectories()
        findings += Doctor.plugins(in: dirs)
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

/// Users and groups read from passwd/group files (so a test can stage its own).
struct Accounts {
    let groupFile: String
    let passwdFile: String

    static func currentUser() -> String {
        if let pw = getpwuid(geteuid()), let name = pw.pointee.pw_name { return String(cString: name) }
        return "\(geteuid())"
    }

    private func rows(_ file: String) -> [[Substring]] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { $0.split(separator: ":", omittingEmptySubsequences: false) }
    }

    func primaryGroup(of user: String) -> String? {
        rows(passwdFile).first { $0.count > 3 && $0[0] == user }.map { String($0[3]) }
    }

    /// The group's ID and members, if the group exists.
    func group(_ name: String) -> (gid: String, members: [String])? {
        guard let row = rows(groupFile).first(where: { $0.count > 3 && $0[0] == name }) else { return nil }
        return (String(row[2]), row[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }
}

enum Doctor {
    static func gpioGroup(user: String, accounts: Accounts) -> Diagnosis {
        let check = "gpio group"
        guard let gpio = accounts.group("gpio") else {
            return Diagnosis(
                check: check, status: .problem,
                explanation: "there is no 'gpio' group, so only root can open /dev/gpiochip*. Create it and give it the chips: "
                    + "'sudo groupadd --system gpio', then a udev rule: SUBSYSTEM==\"gpio\", GROUP=\"gpio\", MODE=\"0660\"")
        }
        if gpio.members.contains(user) || accounts.primaryGroup(of: user) == gpio.gid {
            return Diagnosis(check: check, status: .ok, explanation: "\(user) is in the gpio group")
        }
        return Diagnosis(
            check: check, status: .problem,
            explanation: "\(user) is not in the gpio group, so it cannot open the GPIO chips. Run 'sudo usermod -aG gpio \(user)' "
                + "and sign in again (or restart hearthd)")
    }

    static func gpioChips(dev: String) -> Diagnosis {
        let check = "gpio chips"
        let chips = ((try? FileManager.default.contentsOfDirectory(atPath: dev)) ?? []).filter { $0.hasPrefix("gpiochip") }.sorted()
        guard !chips.isEmpty else {
            return Diagnosis(
                check: check, status: .problem,
                explanation: "no \(dev)/gpiochip* device: this kernel exposes no GPIO controller (not a Raspberry Pi, a container "
                    + "without the device passed in, or a kernel without CONFIG_GPIO_CDEV). The GPIO plugin can run on its simulated chip instead")
        }
        var unreadable: [String] = []
        for chip in chips {
            let fd = open((dev as NSString).appendingPathComponent(chip), O_RDWR | O_CLOEXEC)
            if fd < 0 { unreadable.append("\(chip) (\(String(cString: strerror(errno))))") } else { close(fd) }
        }
        if !unreadable.isEmpty {
            return Diagnosis(
                check: check, status: .problem,
                explanation: "cannot open \(unreadable.joined(separator: ", ")): check the gpio group and the chips' permissions (ls -l \(dev)/gpiochip*)")
        }
        return Diagnosis(check: check, status: .ok, explanation: "found \(chips.joined(separator: ", "))")
    }

    // MARK: Broker

    /// Connects and, unless `tls` (doctor speaks no TLS), sends an MQTT CONNECT with the credentials.
    static func broker(_ address: String, username: String?, password: String?, tls: Bool = false) -> Diagnosis {
        let check = "mqtt broker"
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]), (1...65535).contains(port) else {
            return Diagnosis(check: check, status: .problem, explanation: "'\(address)' is not host:port (for example 127.0.0.1:1883)")
        }
        let host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let fd: Int32
        switch connect(host: host, port: port) {
        case .success(let s): fd = s
        case .failure(let why):
            return Diagnosis(
                check: check, status: .problem,
                explanation: "cannot reach the broker at \(address): \(why.reason). Is mosquitto running ('systemctl status mosquitto') and listening there?")
        }
        defer { close(fd) }
        if tls {
            return Diagnosis(
                check: check, status: .ok,
                explanation: "\(address) is reachable (it is configured for TLS: doctor does not check the TLS handshake or the credentials)")
        }
        let packet = connectPacket(clientID: "hearth-doctor-\(getpid())", username: username, password: password)
        guard packet.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == packet.count else {
            return Diagnosis(check: check, status: .problem, explanation: "the broker at \(address) closed the connection at once")
        }
        var reply = [UInt8](repeating: 0, count: 4)
        var got = 0
        while got < 4 {
            let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, 4 - got, 0) }
            if n <= 0 { break }
            got += n
        }
        guard got == 4, reply[0] == 0x20 else {
            return Diagnosis(
                check: check, status: .problem,
                explanation: "something listens at \(address) but does not answer as an MQTT broker (or needs TLS)")
        }
        switch reply[3] {
        case 0:
            return Diagnosis(check: check, status: .ok, explanation: "\(address) accepted the connection" + (username.map { " as \($0)" } ?? ""))
        case 4:
            return Diagnosis(
                check: check, status: .problem,
                explanation: "the broker at \(address) refused the user name or password"
                    + (username == nil ? " (none was given: set mqtt.broker.username/password in hearth.yaml, or pass --broker-username/--broker-password)" : "")
                    + ". Check mqtt.broker.username/password in hearth.yaml against the broker's password file")
        case 5:
            return Diagnosis(
                check: check, status: .problem,
                explanation: "the broker at \(address) says this client is not authorized"
                    + (username == nil ? ": it does not allow anonymous clients, set mqtt.broker.username/password in hearth.yaml" : ""))
        default:
            return Diagnosis(check: check, status: .problem, explanation: "the broker at \(address) refused the connection (code \(reply[3]))")
        }
    }

    static func connectPacket(clientID: String, username: String?, password: String?) -> [UInt8] {
        func string(_ s: String) -> [UInt8] {
            let b = Array(s.utf8)
            return [UInt8(b.count >> 8), UInt8(b.count & 0xFF)] + b
        }
        var flags: UInt8 = 0x02
        if username != nil { flags |= 0x80 }
        if password != nil { flags |= 0x40 }
        var body = string("MQTT") + [4, flags, 0, 30] + string(clientID)
        if let username { body += string(username) }
        if let password { body += string(password) }
        var length: [UInt8] = []
        var n = body.count
        repeat {
            var byte = UInt8(n % 128)
            n /= 128
            if n > 0 { byte |= 0x80 }
            length.append(byte)
        } while n > 0
        return [0x10] + length + body
    }

    struct ConnectFailure: Error {
        let reason: String
    }

    static func connect(host: String, port: Int) -> Result<Int32, ConnectFailure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else { return .failure(ConnectFailure(reason: "cannot resolve '\(host)' (\(String(cString: gai_strerror(rc))))")) }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let ai = entry {
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), ai.pointee.ai_protocol)
            if fd >= 0 {
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 { return .success(fd) }
                lastError = String(cString: strerror(errno))
                close(fd)
            }
            entry = ai.pointee.ai_next
        }
        return .failure(ConnectFailure(reason: lastError.lowercased()))
    }

    // MARK: Plugins

    static func defaultPluginDirectories() -> [String] {
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        return [exe.deletingLastPathComponent().appendingPathComponent("lib/hearth/plugins").path, "/usr/lib/hearth/plugins"]
    }

    static func plugins(in directories: [String]) -> [Diagnosis] {
        var findings: [Diagnosis] = []
        var seen = 0
        for dir in directories {
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            for file in files.sorted() where file.hasSuffix(".so") {
                let path = (dir as NSString).appendingPathComponent(file)
                seen += 1
                do {
                    let loaded = try PluginLoader.load(path)
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
        return findings
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
