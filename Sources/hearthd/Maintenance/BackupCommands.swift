import ArgumentParser
import Foundation
import HomeModel
import HomeStorage
import HAPBridge

/// Opens the database for a CLI command, turning errors into a clean exit.
func openDatabase(_ path: String) throws -> HearthDatabase {
    do {
        return try HearthDatabase.daemon(path: path)
    } catch {
        FileHandle.standardError.write(Data("hearth: \(error.message)\n".utf8))
        throw ExitCode(74)
    }
}

func fail(_ error: HomeError) -> ExitCode {
    FileHandle.standardError.write(Data("hearth: \(error.message)\n".utf8))
    return ExitCode(error.code == .invalidArgument || error.code == .notFound ? 65 : 74)
}

/// `hearth backup`: writes the layout and device registry to a JSON file.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Save the layout (structures, rooms, devices, commissioning), scenes, automations and pending timers to a file.",
        discussion: "Safe while hearthd runs: it reads one consistent snapshot of the database.")

    @Option(help: "The database file.")
    var database = "var/hearth.sqlite"

    @Option(name: .shortAndLong, help: "The backup file to write (JSON).")
    var output: String

    @Option(name: .customLong("hap-state"), help: "The HomeKit bridge's state file, when hap.state names one (default: hap.sqlite beside the database).")
    var hapState: String?

    @Option(name: .customLong("matter-state"), help: "The Matter bridge's state file, when matter.state names one (default: matter.sqlite beside the database).")
    var matterState: String?

    func run() throws {
        guard FileManager.default.fileExists(atPath: database) else {
            throw fail(.notFound("\(database): no such database (give it with --database)"))
        }
        let db = try openDatabase(database)
        do {
            try db.backup(to: output)
            let export = try db.exportLayout()
            print("saved \(export.structures.count) structure(s), \(export.rooms.count) room(s), \(export.devices.count) device(s)\(automationSummary(export)) to \(output)")
        } catch {
            throw fail(error)
        }
        // The HomeKit bridge's keys and pairings (mode 0600), so a restore keeps the iPhones paired.
        if let hap = try HAPBackup.save(database: database, output: output, state: hapState) { print("saved the HomeKit bridge's keys and pairings to \(hap)") }
        // The Matter bridge's fabrics, NOCs, operational keys and ACL (mode 0600): controllers stay paired.
        if let matter = try MatterBackup.save(database: database, output: output, state: matterState) {
            print("saved the Matter bridge's fabrics and keys to \(matter)")
        }
    }
}

/// ", 2 scene(s), 3 automation(s), 1 pending timer(s)" when the backup holds them.
func automationSummary(_ export: LayoutExport) -> String {
    guard let a = export.automation else { return "" }
    return ", \(a.scenes.count) scene(s), \(a.automations.count) automation(s), \(a.timers.count) pending timer(s)"
}

/// `hearth restore`: replaces the layout with a backup's.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the layout, scenes, automations and timers with those saved by `hearth backup`.",
        discussion: """
            Stop hearthd first (it refuses while hearthd runs on the database). A backup from a newer \
            Hearth, or a database with a newer schema, is refused; nothing is changed then.
            """)

    @Option(help: "The database file (created if missing).")
    var database = "var/hearth.sqlite"

    @Option(name: .shortAndLong, help: "The backup file to read.")
    var input: String

    @Option(name: .customLong("hap-state"), help: "The HomeKit bridge's state file, when hap.state names one (default: hap.sqlite beside the database).")
    var hapState: String?

    @Option(name: .customLong("matter-state"), help: "The Matter bridge's state file, when matter.state names one (default: matter.sqlite beside the database).")
    var matterState: String?

    func run() throws {
        do {
            let lock = try DatabaseLock(database: database, holder: "hearth restore")
            let db = try openDatabase(database)
            let export = try db.readBackup(input)
            try db.restore(export)
            if let hap = try HAPBackup.restore(database: database, input: input, state: hapState) { print("restored the HomeKit bridge's keys and pairings from \(hap)") }
            if let matter = try MatterBackup.restore(database: database, input: input, state: matterState) {
                print("restored the Matter bridge's fabrics and keys from \(matter)")
            }
            withExtendedLifetime(lock) {}
            print("restored \(export.structures.count) structure(s), \(export.rooms.count) room(s), \(export.devices.count) device(s)\(automationSummary(export)) from \(input)")
        } catch let error as HomeError {
            throw fail(error)
        }
    }
}

/// `hearth restore-on-start`: what an output does when hearthd starts.
struct RestoreOnStartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore-on-start",
        abstract: "Set what an output (relay, lamp) does when hearthd starts: off, on, last, or none.",
        discussion: "Takes effect at hearthd's next start. `last` brings it back as it was before.")

    @Option(help: "The database file.")
    var database = "var/hearth.sqlite"

    @Argument(help: "The device ID, e.g. gpio:relay-1.")
    var device: String

    @Argument(help: "off, on, last, or none (leave it as the hardware starts).")
    var setting: String

    func run() throws {
        let policy: RestoreOnStart?
        if setting == "none" {
            policy = nil
        } else if let p = RestoreOnStart(rawValue: setting) {
            policy = p
        } else {
            throw fail(.invalidArgument("'\(setting)' is not a setting; use off, on, last or none"))
        }
        let db = try openDatabase(database)
        do {
            try db.setRestoreOnStart(policy, for: DeviceID(rawValue: device))
        } catch {
            throw fail(error)
        }
        print("\(device): restore on start \(setting)")
    }
}
