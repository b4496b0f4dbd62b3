import DriverAPI
import Foundation
import GRDB
import HomeCore
import HomeModel
@testable import HomeStorage
import Testing

/// The real `hearth` and `hearthd` binaries as child processes, on real database files.
@Suite struct CommandLineTests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func binary(_ name: String) throws -> String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        Issue.record("\(name) not found next to \(dir.path): run `swift build --build-tests` first")
        throw HomeError.notFound(name)
    }

    /// Runs a binary to its end; output goes to files, so nothing can fill a pipe.
    static func run(_ name: String, _ arguments: [String], in dir: TempDir) async throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary(name))
        process.arguments = arguments
        process.currentDirectoryURL = dir.url
        let out = dir.path("\(name)-\(UUID().uuidString).out")
        let err = dir.path("\(name)-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        process.standardInput = FileHandle.nullDevice
        let ended = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in ended.continuation.finish() }
        try process.run()
        for await _ in ended.stream {}
        return Run(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    @Test func backupThenRestore_withTheCLI_givesTheSameLayout() async throws {
        let dir = TempDir()
        let h = try BackupTests.populated(dir)
        let backup = try await Self.run("hearth", ["backup", "--database", h.path, "--output", "layout.json"], in: dir)
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.contains("saved 1 structure(s), 1 room(s), 2 device(s)"))

        let restore = try await Self.run("hearth", ["restore", "--database", "var/copy.sqlite", "--input", "layout.json"], in: dir)
        #expect(restore.status == 0, "\(restore.stderr)")
        let copy = try HearthDatabase.daemon(path: dir.path("var/copy.sqlite"))
        #expect(try copy.registry() == h.db.registry())
        #expect(try copy.loadLayout().rooms == h.db.loadLayout().rooms)
    }

    /// hearthd's own file has the access, exposure and automation tables beside the layout: the
    /// maintenance subcommands must know them (they were refused as "a newer schema" before).
    @Test func backupThenRestore_ofTheDaemonsOwnDatabase_withItsStoresTables() async throws {
        let dir = TempDir()
        let path = dir.path("var/hearth.sqlite")
        let db = try HearthDatabase.daemon(path: path)
        #expect(db.knownMigrations.contains("access-v1") && db.knownMigrations.contains("automation-v1"))
        let backup = try await Self.run("hearth", ["backup", "--database", path, "--output", "layout.json"], in: dir)
        #expect(backup.status == 0, "\(backup.stderr)")
        let restore = try await Self.run("hearth", ["restore", "--database", "var/copy.sqlite", "--input", "layout.json"], in: dir)
        #expect(restore.status == 0, "\(restore.stderr)")
        _ = try HearthDatabase.daemon(path: dir.path("var/copy.sqlite"))
    }

    @Test func restore_isRefusedWhileTheDatabaseIsInUse() async throws {
        let dir = TempDir()
        let h = try BackupTests.populated(dir)
        try h.db.backup(to: dir.path("layout.json"))
        let lock = try DatabaseLock(database: h.path, holder: "hearthd")
        try h.home.createStructure(named: "Cabin")

        let restore = try await Self.run("hearth", ["restore", "--database", h.path, "--input", "layout.json"], in: dir)
        #expect(restore.status != 0)
        #expect(restore.stderr.contains("is in use by hearthd (pid \(getpid()))"))
        #expect(try h.db.loadLayout().structures.count == 2, "nothing may change")
        withExtendedLifetime(lock) {}
    }

    @Test func aSecondLock_onTheSameFile_isRefused_andFreedWithTheFirst() throws {
        let dir = TempDir()
        let path = dir.path("hearth.sqlite")
        var first: DatabaseLock? = try DatabaseLock(database: path, holder: "hearthd")
        let error = #expect(throws: HomeError.self) { try DatabaseLock(database: path, holder: "hearth restore") }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("in use by hearthd") == true)
        withExtendedLifetime(first) {}
        first = nil
        _ = try DatabaseLock(database: path, holder: "hearth restore")
    }

    @Test func restoreOnStart_setsTheSetting_andRefusesNonsense() async throws {
        let dir = TempDir()
        let h = try BackupTests.populated(dir)
        let ok = try await Self.run("hearth", ["restore-on-start", "--database", h.path, "gpio:relay", "on"], in: dir)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(try h.db.registryEntry("gpio:relay")?.restoreOnStart == .on)
        let bad = try await Self.run("hearth", ["restore-on-start", "--database", h.path, "gpio:relay", "sometimes"], in: dir)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("'sometimes' is not a setting; use off, on, last or none"))
        let sensor = try await Self.run("hearth", ["restore-on-start", "--database", h.path, "gpio:door", "on"], in: dir)
        #expect(sensor.status != 0)
        #expect(sensor.stderr.contains("not an output"))
    }

    @Test func hearthd_refusesACorruptDatabase_namingIt_andLeavesItAlone() async throws {
        let dir = TempDir()
        let garbage = Data(repeating: 0x42, count: 8192)
        try garbage.write(to: URL(fileURLWithPath: dir.path("broken.sqlite")))
        try FileManager.default.createDirectory(atPath: dir.path("plugins"), withIntermediateDirectories: true)
        let config = """
            storage:
              database: broken.sqlite
            plugins:
              directories: [plugins]
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: dir.path("hearth.yaml")))

        let run = try await Self.run("hearthd", ["--config", dir.path("hearth.yaml")], in: dir)
        #expect(run.status == 74)
        #expect(run.stderr.contains(dir.path("broken.sqlite") + " is not a Hearth database or is damaged"))
        #expect(FileManager.default.contents(atPath: dir.path("broken.sqlite")) == garbage)
    }
}
