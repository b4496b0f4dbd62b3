import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// After an upgrade the real hearthd starts on the database the previous release left: it
/// migrates it, keeps what was in it, and logs which migrations it applied.
@Suite struct MigrationOnStartTests {
    /// A database as the first release wrote it: only Hearth's first schema step
    /// (`hearth-v1-layout`, copied from `HearthDatabase.migrator()`; shipped migrations never
    /// change), GRDB's migration table, and a structure with a room.
    static let firstReleaseDatabase = """
        CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
        CREATE TABLE structure (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL,
            nameKey TEXT NOT NULL UNIQUE
        );
        CREATE TABLE room (
            id TEXT PRIMARY KEY NOT NULL,
            structureID TEXT NOT NULL REFERENCES structure(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            nameKey TEXT NOT NULL,
            UNIQUE (structureID, nameKey)
        );
        CREATE TABLE device (
            id TEXT PRIMARY KEY NOT NULL,
            pluginID TEXT NOT NULL,
            localID TEXT NOT NULL,
            name TEXT NOT NULL,
            structureID TEXT REFERENCES structure(id) ON DELETE SET NULL,
            roomID TEXT REFERENCES room(id) ON DELETE SET NULL,
            commissioning TEXT NOT NULL CHECK (commissioning IN ('discovered', 'commissioned')),
            manufacturer TEXT,
            model TEXT,
            types TEXT NOT NULL,
            connectivity TEXT NOT NULL,
            firstSeen INTEGER NOT NULL,
            lastSeen INTEGER NOT NULL,
            UNIQUE (pluginID, localID)
        );
        CREATE INDEX device_room ON device(roomID);
        CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
        INSERT INTO grdb_migrations (identifier) VALUES ('hearth-v1-layout');
        INSERT INTO structure (id, name, nameKey) VALUES ('s1', 'Home', 'home');
        INSERT INTO room (id, structureID, name, nameKey) VALUES ('r1', 's1', 'Kitchen', 'kitchen');
        """

    /// Runs SQL statements on a database file with Python's sqlite3 module (not Hearth's code).
    static func execute(_ file: String, _ sql: String, in dir: Scratch) async throws {
        let r = try await run(
            "/usr/bin/python3", ["-c", "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.close()", file, sql],
            in: dir.path)
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// The rows of a query, one a line, columns joined by `|`.
    static func query(_ file: String, _ sql: String, in dir: Scratch) async throws -> String {
        let r = try await run(
            "/usr/bin/python3",
            ["-c", "import sqlite3, sys\nfor row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print('|'.join(map(str, row)))", file, sql],
            in: dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts hearthd as systemd would, waits for READY=1, stops it, and returns its log.
    static func startAndStop(config: String, in dir: Scratch) async throws -> String {
        let name = UUID().uuidString.prefix(8)
        let socket = try NotifySocket(path: dir.at("notify-\(name)"))
        let log = dir.at("hearthd-\(name).log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: buildDirectory + "/hearthd")
        process.arguments = ["--config", config]
        process.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": socket.path]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let ended = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in ended.continuation.finish() }
        try process.run()
        let ready = await socket.receive()
        #expect(ready?.contains("READY=1") == true)
        if ready == nil { kill(process.processIdentifier, SIGKILL) }  // do not wait forever on a failure
        process.terminate()
        for await _ in ended.stream {}
        #expect(process.terminationStatus == 0)
        withExtendedLifetime(socket) {}
        return read(log)
    }

    @Test func an_older_database_is_migrated_on_start_and_the_log_names_the_migrations() async throws {
        let dir = try Scratch("hearth-migrate")
        defer { dir.remove() }
        let database = dir.at("hearth.sqlite")
        try await Self.execute(database, Self.firstReleaseDatabase, in: dir)
        try FileManager.default.createDirectory(atPath: dir.at("plugins"), withIntermediateDirectories: true)
        try "log:\n  format: keyvalue\nstorage:\n  database: \(database)\nplugins:\n  directories: [\(dir.at("plugins"))]\n"
            .write(toFile: dir.at("hearth.yaml"), atomically: true, encoding: .utf8)

        let first = try await Self.startAndStop(config: dir.at("hearth.yaml"), in: dir)
        let migrated = first.split(separator: "\n").filter { $0.contains(#"msg="database schema migrated""#) }
        #expect(migrated.count == 1, "\(first)")
        #expect(migrated.first?.contains("level=notice") == true)
        #expect(migrated.first?.contains("applied=hearth-v2-outputs,access-v1,access-v2-grant-changes,access-v3-favourites,exposure-v1") == true, "\(migrated)")
        #expect(migrated.first?.contains("file=\(database)") == true)

        // The data the old release kept is still there, under the current schema.
        #expect(try await Self.query(database, "SELECT identifier FROM grdb_migrations ORDER BY rowid", in: dir)
            == "hearth-v1-layout\nhearth-v2-outputs\naccess-v1\naccess-v2-grant-changes\naccess-v3-favourites\nexposure-v1\nautomation-v1\nautomation-v2-runs\nmatter-endpoints-v1")
        #expect(try await Self.query(database, "SELECT s.name, r.name FROM room r JOIN structure s ON s.id = r.structureID", in: dir)
            == "Home|Kitchen")

        // The next start has nothing to migrate and says only that it opened the database.
        let second = try await Self.startAndStop(config: dir.at("hearth.yaml"), in: dir)
        #expect(second.contains(#"msg="database opened""#), "\(second)")
        #expect(!second.contains("database schema migrated"))
    }
}
