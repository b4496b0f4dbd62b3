import ArgumentParser
import Foundation
import HearthConfiguration
import HomeModel
import HomeStorage

#if canImport(Glibc)
    import Glibc
#endif

/// `hearthd reload` (`hearth reload`): checks the configuration file, then asks the hearthd
/// that runs on its database to re-read `scenes:` and `automations:` (SIGHUP). hearthd checks
/// every entry again against the live home and keeps the running set when any is broken; the
/// outcome is in its log.
struct ReloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Re-read hearth.yaml's scenes and automations in the running hearthd (SIGHUP).",
        discussion: """
            A file that does not parse is refused here. hearthd then validates every scene and automation \
            and replaces the running set only when all pass; otherwise it keeps the old one and logs every \
            problem with file, line and key. Other sections need a restart.
            """)

    @Option(name: .shortAndLong, help: "The configuration file.")
    var config: String = "etc/hearth.yaml"

    func run() throws {
        let settings: HearthConfig
        do {
            settings = try HearthConfig.load(path: config)
        } catch {
            FileHandle.standardError.write(Data("hearth: \(error.message); nothing was reloaded\n".utf8))
            throw ExitCode(78)
        }
        let database = settings.databasePath
        // If the lock can be taken, no hearthd runs on the database.
        if let free = try? DatabaseLock(database: database, holder: "hearth reload") {
            withExtendedLifetime(free) {}
            throw fail(.notFound("no hearthd runs on \(database); nothing to reload"))
        }
        let holder = (try? String(contentsOfFile: database + ".lock", encoding: .utf8)) ?? ""
        guard holder.hasPrefix("hearthd "), let pid = Self.pid(in: holder) else {
            throw fail(.conflict("\(database) is held by \(holder.trimmingCharacters(in: .whitespacesAndNewlines)), not by hearthd"))
        }
        guard kill(pid, SIGHUP) == 0 else {
            throw fail(.internal("cannot signal hearthd (pid \(pid)): \(String(cString: strerror(errno)))"))
        }
        print("asked hearthd (pid \(pid)) to reload the scenes and automations of \(config); the outcome is in its log")
    }

    /// `hearthd (pid 1234)` → 1234.
    static func pid(in holder: String) -> pid_t? {
        guard let open = holder.range(of: "(pid "), let close = holder[open.upperBound...].firstIndex(of: ")") else { return nil }
        return pid_t(holder[open.upperBound..<close])
    }
}
