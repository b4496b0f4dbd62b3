import ArgumentParser
import Foundation
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

struct ReloadHandOver: HandOverCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload", abstract: "Re-read hearth.yaml's scenes and automations in the running hearthd: runs 'hearthd reload'.")
    @Argument(parsing: .captureForPassthrough, help: "Passed to 'hearthd reload' (see 'hearthd reload --help').")
    var arguments: [String] = []
}
