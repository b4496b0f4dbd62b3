import ArgumentParser
import Foundation
import HearthAPI
import HearthClient
#if canImport(Glibc)
import Glibc
#endif

/// `hearth doctor`, `hearth backup`, `hearth restore`, `hearth restore-on-start`: offline
/// maintenance is `hearthd`'s (it owns the database and the plugins); `hearth` stays a network
/// client and hands these over to `hearthd <command>` with the same arguments.
///
/// The `hearthd` beside this `hearth` binary is used first (an install or a build folder keeps
/// them together), else the one on `PATH`.
protocol HandOverCommand: ParsableCommand {
    var arguments: [String] { get }
}

extension HandOverCommand {
    func run() throws {
        let name = Self.configuration.commandName ?? ""
        guard let hearthd = HandOver.findHearthd() else {
            throw CLIError("'hearth \(name)' runs 'hearthd \(name)', but no hearthd was found beside \(HandOver.executableDirectory) or on PATH")
        }
        try HandOver.exec(hearthd, [hearthd, name] + arguments)
    }
}

enum HandOver {
    /// The folder of the running `hearth` binary.
    static var executableDirectory: String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path).deletingLastPathComponent().path
    }

    static func findHearthd() -> String? {
        let fm = FileManager.default
        let beside = executableDirectory + "/hearthd"
        if fm.isExecutableFile(atPath: beside) { return beside }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(dir)/hearthd"
            if fm.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Replaces this process with `path` (its exit status becomes ours).
    static func exec(_ path: String, _ argv: [String]) throws -> Never {
        fflush(nil)
        let cArgs = argv.map { strdup($0) } + [nil]
        execv(path, cArgs)
        let why = String(cString: strerror(errno))
        throw CLIError("could not run \(path): \(why)")
    }
}

struct DoctorHandOver: HandOverCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the machine for the common problems (GPIO access and lines, broker, plugins, database): runs 'hearthd doctor'.")
    @Argument(parsing: .captureForPassthrough, help: "Passed to 'hearthd doctor' (see 'hearthd doctor --help').")
    var arguments: [String] = []
}

struct BackupHandOver: HandOverCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Save the layout (structures, rooms, devices) to a file: runs 'hearthd backup'.")
    @Argument(parsing: .captureForPassthrough, help: "Passed to 'hearthd backup' (see 'hearthd backup --help').")
    var arguments: [String] = []
}

struct RestoreHandOver: HandOverCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Replace the layout with one saved by 'hearth backup': runs 'hearthd restore'.")
    @Argument(parsing: .captureForPassthrough, help: "Passed to 'hearthd restore' (see 'hearthd restore --help').")
    var arguments: [String] = []
}

struct RestoreOnStartHandOver: HandOverCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore-on-start", abstract: "Set what an output does when hearthd starts: runs 'hearthd restore-on-start'.")
    @Argument(parsing: .captureForPassthrough, help: "Passed to 'hearthd restore-on-start'.")
    var arguments: [String] = []
}

struct HAPHandOver: HandOverCommand {
    static let configuration = CommandConfiguration(
        commandName: "hap", abstract: "The HomeKit bridge's setup code, X-HM:// setup URI and pairings: runs 'hearthd hap'.")
    @Argument(parsing: .captureForPassthrough, help: "Passed to 'hearthd hap' (see 'hearthd hap --help').")
    var arguments: [String] = []
}

/// `hearth reload`: asks the running hearthd to re-read hearth.yaml's scenes and automations
/// (`POST /automations/reload`, an admin's session) and prints what it did — loaded, refused
/// with file, line and key, pending. Without a session (or with `--signal`) it runs
/// `hearthd reload`, which signals the daemon (SIGHUP); the outcome is then only in its log.
struct ReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload", abstract: "Re-read hearth.yaml's scenes and automations in the running hearthd and print the outcome.")
    @OptionGroup var options: ClientOptions
    @Flag(help: "Signal hearthd (SIGHUP through 'hearthd reload') instead of asking over the API; needs no session.")
    var signal = false
    @Option(help: "With --signal: the configuration file ('hearthd reload --config').")
    var config: String?

    func run() async throws {
        let signedIn = (try? options.store.load()) != nil
        if signal || !signedIn {
            guard let hearthd = HandOver.findHearthd() else {
                throw CLIError("'hearth reload' without a session runs 'hearthd reload', but no hearthd was found beside \(HandOver.executableDirectory) or on PATH")
            }
            try HandOver.exec(hearthd, [hearthd, "reload"] + (config.map { ["--config", $0] } ?? []))
        }
        let outcome: WireReloadOutcome = try await options.home().connection.send("POST", "automations/reload")
        try options.output(outcome, Self.describe(outcome))
        if !outcome.refused.isEmpty { throw ExitCode(1) }
    }

    static func describe(_ o: WireReloadOutcome) -> String {
        var lines: [String] = []
        if o.applied {
            lines.append("reloaded \(o.scenes) scene(s) and \(o.automations) automation(s)")
        } else {
            lines.append("reload refused; the running scenes and automations are kept:")
        }
        for p in o.refused { lines.append("  refused: \(p.text)") }
        for p in o.pending { lines.append("  pending: \(p.text)") }
        for p in o.warnings { lines.append("  warning: \(p.text)") }
        return lines.joined(separator: "\n")
    }
}
